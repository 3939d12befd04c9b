#include "session/probe_session.h"

#include <algorithm>

#include "core/strings.h"
#include "symbols/function_probe_points.h"
#include "tracing/probe_definition.h"

namespace vperf::session {

namespace {

std::string group_event_of(std::string_view name) {  // "probe_libc/malloc" -> "probe_libc:malloc"
  std::string out(name);
  if (size_t slash = out.find('/'); slash != std::string::npos) out[slash] = ':';
  return out;
}

bool matches(const std::string& pattern, const std::string& group_event) {
  if (pattern.empty()) return true;
  if (pattern.find(':') != std::string::npos) return glob_match(pattern, group_event);
  return glob_match(pattern, group_event.substr(group_event.find(':') + 1));
}

// The raw uprobe text of an argument, or an Error for what needs DWARF.
Result<std::string> raw_argument(const tracing::ProbeArgument& arg) {
  if (!arg.variable.empty())
    return Error{"argument '" + arg.expression + "' is a variable: vperf probe does not read DWARF variables yet", 0,
                 "give the value's register or a fetch instead (%di, +8(%si):s64, $retval), as perf probe takes it without debuginfo"};
  if (arg.user_access)
    return Error{"argument '" + arg.expression + "@user' marks user memory, which only kernel probes need", 0,
                 "drop @user: a uprobe's fetches read the probed process's memory"};
  std::string text = arg.name.empty() ? arg.expression : arg.name + "=" + arg.expression;
  if (!arg.type.empty()) text += ":" + arg.type;
  return text;
}

// EVENT, or EVENT_1, EVENT_2, ... : the first name in `group` nothing uses.
std::string free_name(const std::string& group, const std::string& event, const std::vector<std::string>& taken) {
  auto used = [&](const std::string& name) { return std::find(taken.begin(), taken.end(), group + "/" + name) != taken.end(); };
  if (!used(event)) return event;
  for (int i = 1;; ++i)
    if (!used(event + "_" + std::to_string(i))) return event + "_" + std::to_string(i);
}

}  // namespace

Result<std::vector<PlannedProbe>> plan_probes(const ProbeRequest& request, const std::vector<std::string>& existing) {
  if (request.executable.empty())
    return Error{"kernel probes (kprobes) are not in vperf probe yet", 0, "give -x FILE to probe a function of an executable or library"};
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical(request.executable, ec);
  if (ec) return Error{"-x " + request.executable.string() + ": " + ec.message(), ec.value(), "give the path of an executable or library"};
  std::vector<std::string> taken;
  for (const std::string& line : existing) taken.push_back(tracing::uprobe_name(line));

  std::vector<PlannedProbe> out;
  for (const std::string& text : request.definitions) {
    VPERF_TRY(tracing::ProbeDefinition def, tracing::parse_probe_definition(text));
    if (!def.file.empty() || def.line || !def.lazy_pattern.empty())
      return Error{"probe definition '" + text + "': source files, lines and lazy patterns need DWARF line tables, which vperf probe does not read yet",
                   0, "probe the function (FUNC, FUNC+OFFSET, FUNC%return)"};
    std::vector<std::string> arguments;
    for (const tracing::ProbeArgument& arg : def.arguments) {
      VPERF_TRY(std::string raw, raw_argument(arg));
      arguments.push_back(std::move(raw));
    }
    std::vector<symbols::FunctionProbePoint> points;
    std::string base_name = def.event;
    if (def.address) {
      points.push_back(symbols::FunctionProbePoint{*def.address, *def.address});
      if (base_name.empty()) base_name = "abs_" + hex(*def.address).substr(2);
    } else {
      VPERF_TRY(points, symbols::function_probe_points(file, def.function, def.offset.value_or(0)));
      if (base_name.empty()) base_name = def.function + (def.return_probe ? "__return" : "");
    }
    const std::string group = def.group.empty() ? tracing::default_uprobe_group(file) : def.group;
    if (!tracing::is_probe_event_name(base_name))
      return Error{"probe definition '" + text + "': '" + base_name + "' is not a valid event name", 0, "name the event: NAME=" + text};
    for (const symbols::FunctionProbePoint& point : points) {
      std::string name = base_name;
      const bool is_taken = std::find(taken.begin(), taken.end(), group + "/" + name) != taken.end();
      if (is_taken && !request.force && &point == &points.front())
        return Error{"event " + group + ":" + name + " already exists", EEXIST,
                     "delete it first (vperf probe -d " + group + ":" + name + "), or add another with -f"};
      name = free_name(group, name, taken);
      taken.push_back(group + "/" + name);
      PlannedProbe p;
      p.event = tracing::UprobeEvent{group, name, file, point.file_offset, std::nullopt, def.return_probe, arguments};
      p.definition = tracing::uprobe_definition(p.event);
      p.point = def.address ? hex(*def.address) : def.function + (def.offset ? "+" + std::to_string(*def.offset) : "") +
                                                     (def.return_probe ? "%return" : "");
      out.push_back(std::move(p));
    }
  }
  return out;
}

Result<void> add_probes(const tracing::Tracefs& tracefs, const std::vector<PlannedProbe>& probes) {
  for (size_t i = 0; i < probes.size(); ++i) {
    if (Result<void> added = tracing::add_uprobe(tracefs, probes[i].definition); !added) {
      for (size_t j = 0; j < i; ++j) (void)tracing::remove_uprobe(tracefs, probes[j].event.group, probes[j].event.event);
      return added.error();
    }
  }
  return {};
}

Result<std::vector<std::string>> delete_probes(const tracing::Tracefs& tracefs, const std::string& pattern) {
  VPERF_TRY(std::vector<std::string> lines, tracing::uprobe_definitions(tracefs));
  std::vector<std::string> removed;
  for (const std::string& line : lines) {
    const std::string name = tracing::uprobe_name(line);
    const std::string group_event = group_event_of(name);
    if (!matches(pattern, group_event)) continue;
    const size_t slash = name.find('/');
    VPERF_TRY(tracing::remove_uprobe(tracefs, name.substr(0, slash), name.substr(slash + 1)));
    removed.push_back(group_event);
  }
  if (removed.empty())
    return Error{"no probe event matches '" + pattern + "'", ENOENT, "list the probes with: vperf probe -l"};
  return removed;
}

Result<std::vector<std::string>> list_probes(const tracing::Tracefs& tracefs, const std::string& pattern) {
  VPERF_TRY(std::vector<std::string> lines, tracing::uprobe_definitions(tracefs));
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    const std::string group_event = group_event_of(tracing::uprobe_name(line));
    if (!matches(pattern, group_event)) continue;
    const size_t space = line.find(' ');
    out.push_back("  " + group_event + " (on " + (space == std::string::npos ? std::string() : line.substr(space + 1)) + ")");
  }
  return out;
}

}  // namespace vperf::session
