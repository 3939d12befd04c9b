#include "session/probe_session.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "symbols/function_probe_points.h"
#include "symbols/sdt_markers.h"
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

// `taken` holds GROUP/EVENT names (uprobe_events' and those planned so far).
bool is_taken(const std::vector<std::string>& taken, const std::string& group, const std::string& event) {
  return std::find(taken.begin(), taken.end(), group + "/" + event) != taken.end();
}

Error taken_error(const std::string& group, const std::string& event, std::string_view other_way) {
  return Error{"event " + group + ":" + event + " already exists", EEXIST,
               "delete it first (vperf probe -d " + group + ":" + event + ")" + std::string(other_way)};
}

// EVENT, or EVENT_1, EVENT_2, ... : the first name in `group` nothing uses.
std::string free_name(const std::string& group, const std::string& event, const std::vector<std::string>& taken) {
  if (!is_taken(taken, group, event)) return event;
  for (int i = 1;; ++i)
    if (!is_taken(taken, group, event + "_" + std::to_string(i))) return event + "_" + std::to_string(i);
}

// x86-64's register names as uprobe fetch arguments take them: every width of a register is
// the register ("%eax", "%al" -> "%ax"; "%r14d" -> "%r14").
std::optional<std::string> uprobe_register(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kNamed[] = {
      {"rax", "ax"}, {"eax", "ax"}, {"ax", "ax"}, {"al", "ax"}, {"ah", "ax"},
      {"rbx", "bx"}, {"ebx", "bx"}, {"bx", "bx"}, {"bl", "bx"}, {"bh", "bx"},
      {"rcx", "cx"}, {"ecx", "cx"}, {"cx", "cx"}, {"cl", "cx"}, {"ch", "cx"},
      {"rdx", "dx"}, {"edx", "dx"}, {"dx", "dx"}, {"dl", "dx"}, {"dh", "dx"},
      {"rsi", "si"}, {"esi", "si"}, {"si", "si"}, {"sil", "si"},
      {"rdi", "di"}, {"edi", "di"}, {"di", "di"}, {"dil", "di"},
      {"rbp", "bp"}, {"ebp", "bp"}, {"bp", "bp"}, {"bpl", "bp"},
      {"rsp", "sp"}, {"esp", "sp"}, {"sp", "sp"}, {"spl", "sp"},
      {"rip", "ip"}, {"eip", "ip"}, {"ip", "ip"}};
  for (const auto& [from, to] : kNamed)
    if (name == from) return "%" + std::string(to);
  // r8..r15 with a d, w or b suffix
  if (name.size() >= 2 && name[0] == 'r' && std::isdigit(static_cast<unsigned char>(name[1]))) {
    std::string_view number = name.substr(1);
    if (!number.empty() && (number.back() == 'd' || number.back() == 'w' || number.back() == 'b')) number.remove_suffix(1);
    if (std::optional<uint64_t> n = parse_u64(number); n && *n >= 8 && *n <= 15) return "%r" + std::to_string(*n);
  }
  return std::nullopt;
}

// A USDT argument word as a uprobe fetch argument, perf's conversion: "8@%rbx" -> "%bx:u64",
// "-4@112(%rsp)" -> "+112(%sp):s32". nullopt for what uprobes cannot fetch (constants,
// %rip-relative symbols), which perf leaves out too.
std::optional<std::string> uprobe_fetch(const symbols::SdtArgument& arg) {
  const std::string type = std::string(arg.is_signed ? ":s" : ":u") + std::to_string(arg.size * 8);
  std::string_view operand = arg.operand;
  if (operand.starts_with('%')) {
    std::optional<std::string> reg = uprobe_register(operand.substr(1));
    return reg ? std::optional<std::string>(*reg + type) : std::nullopt;
  }
  const size_t open = operand.find("(%");
  if (open == std::string_view::npos || !operand.ends_with(')')) return std::nullopt;
  std::optional<std::string> reg = uprobe_register(operand.substr(open + 2, operand.size() - open - 3));
  std::string_view displacement = operand.substr(0, open);
  const bool negative = displacement.starts_with('-');
  if (negative) displacement.remove_prefix(1);
  std::optional<uint64_t> offset = displacement.empty() ? std::optional<uint64_t>(0) : parse_u64(displacement);
  if (!reg || !offset) return std::nullopt;
  return std::string(negative ? "-" : "+") + std::to_string(*offset) + "(" + *reg + ")" + type;
}

// perf's is_sdt_event: "%[sdt_]PROVIDER:NAME", or "sdt_PROVIDER:NAME" with no '='.
bool is_sdt_event(std::string_view text) {
  return text.starts_with('%') ||
         (text.starts_with("sdt_") && text.find(':') != std::string_view::npos && text.find('=') == std::string_view::npos);
}

// A probe on the USDT marker `text` names ("sdt_python:function__entry") in `file`.
Result<PlannedProbe> plan_sdt_probe(const std::filesystem::path& file, std::string_view text) {
  std::string_view name = text.substr(text.starts_with('%') ? 1 : 0);
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos || name.find(' ') != std::string_view::npos)
    return Error{"'" + std::string(text) + "' is not sdt_PROVIDER:NAME", 0, "name a marker as perf does: sdt_python:function__entry"};
  std::string group(name.substr(0, colon));
  if (!group.starts_with("sdt_")) group = "sdt_" + group;
  const std::string event(name.substr(colon + 1));
  VPERF_TRY(std::vector<symbols::SdtMarker> markers, symbols::read_sdt_markers(file));
  for (const symbols::SdtMarker& m : markers) {
    if ("sdt_" + m.provider != group || m.name != event) continue;
    if (!m.file_offset) return Error{group + ":" + event + " in " + file.string() + " lies in no loaded segment"};
    VPERF_TRY(std::vector<symbols::SdtArgument> args, symbols::parse_sdt_arguments(m.arguments));
    PlannedProbe p;
    p.event = tracing::UprobeEvent{group, event, file, *m.file_offset, m.semaphore_offset, false, {}};
    for (size_t i = 0; i < args.size(); ++i)
      if (std::optional<std::string> fetch = uprobe_fetch(args[i])) p.event.arguments.push_back("arg" + std::to_string(i + 1) + "=" + *fetch);
    p.definition = tracing::uprobe_definition(p.event);
    p.point = "%" + group + ":" + event;
    return p;
  }
  return Error{"no USDT marker " + group + ":" + event + " in " + file.string(), 0,
               "list the file's markers with: readelf -n " + file.string()};
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
    if (is_sdt_event(text)) {
      VPERF_TRY(PlannedProbe p, plan_sdt_probe(file, text));
      if (is_taken(taken, p.event.group, p.event.event)) return taken_error(p.event.group, p.event.event, "");
      taken.push_back(p.event.group + "/" + p.event.event);
      out.push_back(std::move(p));
      continue;
    }
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
    if (!request.force && is_taken(taken, group, base_name)) return taken_error(group, base_name, ", or add another with -f");
    for (const symbols::FunctionProbePoint& point : points) {
      const std::string name = free_name(group, base_name, taken);
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
