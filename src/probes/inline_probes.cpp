#include "probes/inline_probes.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "core/process.h"
#include "core/strings.h"
#include "tracing/dynamic_events.h"

namespace vperf::probes {

namespace {

constexpr std::string_view kGroupPrefix = "vperf_";

// A function name as an event name: what is not a letter, digit or '_' becomes '_'
// ("foo.isra.0" -> "foo_isra_0").
std::string event_name_of(std::string_view function) {
  std::string name(function);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) name.insert(name.begin(), '_');
  return name;
}

}  // namespace

std::string inline_probe_group() { return std::string(kGroupPrefix) + std::to_string(::getpid()); }

bool is_inline_probe(std::string_view term) {
  for (std::string_view kind : {"uprobe:", "uretprobe:", "usdt:", "kprobe:", "kretprobe:"})
    if (term.starts_with(kind)) return true;
  return false;
}

std::vector<std::string> remove_leftover_inline_probes(const tracing::Tracefs& tracefs) {
  std::vector<std::string> removed;
  auto sweep = [&](const std::vector<std::string>& lines, bool kernel) {
    for (const std::string& line : lines) {
      const std::string name = tracing::uprobe_name(line);
      const size_t slash = name.find('/');
      const std::string group = name.substr(0, slash), event = name.substr(slash + 1);
      if (!group.starts_with(kGroupPrefix) || std::find(removed.begin(), removed.end(), group + ":" + event) != removed.end()) continue;
      std::optional<uint64_t> pid = parse_u64(std::string_view(group).substr(kGroupPrefix.size()));
      if (!pid || static_cast<pid_t>(*pid) == ::getpid() || is_running_vperf(static_cast<pid_t>(*pid))) continue;
      if (kernel ? tracing::remove_kprobe(tracefs, group, event) : tracing::remove_uprobe(tracefs, group, event))
        removed.push_back(group + ":" + event);
    }
  };
  if (Result<std::vector<std::string>> lines = tracing::uprobe_definitions(tracefs)) sweep(*lines, false);
  if (tracing::has_kprobes(tracefs))
    if (Result<std::vector<std::string>> lines = tracing::kprobe_definitions(tracefs)) sweep(*lines, true);
  return removed;
}

Result<std::vector<std::string>> InlineProbes::create(const std::vector<std::string>& events) {
  std::vector<std::string> out;
  for (const std::string& list : events) {
    // Terms are separated by commas; a group's braces stay where they are around the term.
    std::string rewritten;
    size_t start = 0;
    for (;;) {
      const size_t end = std::min(list.find(',', start), list.size());
      const std::string_view term = std::string_view(list).substr(start, end - start);
      size_t lead = 0, trail = term.size();
      while (lead < trail && term[lead] == '{') ++lead;
      while (trail > lead && term[trail - 1] == '}') --trail;
      const std::string_view core = term.substr(lead, trail - lead);
      rewritten += term.substr(0, lead);
      if (is_inline_probe(core)) {
        VPERF_TRY(std::string names, create_one(core));
        rewritten += names;
      } else {
        rewritten += core;
      }
      rewritten += term.substr(trail);
      if (end == list.size()) break;
      rewritten += ',';
      start = end + 1;
    }
    out.push_back(std::move(rewritten));
  }
  return out;
}

Result<std::string> InlineProbes::create_one(std::string_view spec) {
  const std::string_view kind = spec.substr(0, spec.find(':'));
  const std::string_view rest = spec.substr(kind.size() + 1);
  ProbeRequest request;
  request.force = true;  // a name this run already took gets the next number
  request.group = inline_probe_group();
  const bool kernel = kind == "kprobe" || kind == "kretprobe";
  if (kernel) {
    // kprobe:FUNC[+OFF], kretprobe:FUNC: the kernel function by name.
    if (rest.empty() || rest.find_first_of(": ") != std::string_view::npos)
      return Error{"'" + std::string(spec) + "' is not " + std::string(kind) + ":FUNCTION", 0, "write kprobe:do_sys_openat2 or kretprobe:do_sys_openat2"};
    const bool is_return = kind == "kretprobe";
    if (is_return && rest.find('+') != std::string_view::npos)
      return Error{"'" + std::string(spec) + "': a return probe takes a function, not an offset", 0, "write kretprobe:FUNC"};
    request.definitions.push_back(event_name_of(rest.substr(0, rest.find('+'))) + (is_return ? "__return" : "") + "=" + std::string(rest) +
                                  (is_return ? "%return" : ""));
  }
  const size_t last = kernel ? 0 : rest.rfind(':');
  if (!kernel && (last == std::string_view::npos || last == 0 || last + 1 == rest.size()))
    return Error{"'" + std::string(spec) + "' is not " + std::string(kind) + ":PATH:" + (kind == "usdt" ? "PROVIDER:NAME" : "FUNCTION"), 0,
                 "write uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc, uretprobe:PATH:FUNC or usdt:PATH:PROVIDER:NAME"};
  if (kernel) {
    // planned below, without -x
  } else if (kind == "usdt") {
    const size_t provider = rest.rfind(':', last - 1);
    if (provider == std::string_view::npos || provider == 0)
      return Error{"'" + std::string(spec) + "' is not usdt:PATH:PROVIDER:NAME", 0, "write usdt:/usr/bin/python3.11:python:gc__start"};
    request.executable = std::string(rest.substr(0, provider));
    request.definitions.push_back("sdt_" + std::string(rest.substr(provider + 1, last - provider - 1)) + ":" + std::string(rest.substr(last + 1)));
  } else {
    request.executable = std::string(rest.substr(0, last));
    const std::string_view function = rest.substr(last + 1);
    const bool is_return = kind == "uretprobe";
    if (is_return && function.find('+') != std::string_view::npos)
      return Error{"'" + std::string(spec) + "': a return probe takes a function, not an offset", 0, "write uretprobe:PATH:FUNC"};
    request.definitions.push_back(event_name_of(function.substr(0, function.find('+'))) + (is_return ? "__return" : "") + "=" +
                                  std::string(function) + (is_return ? "%return" : ""));
  }
  if (!tracefs_) {
    VPERF_TRY(tracing::Tracefs tracefs, tracing::Tracefs::open_mounted());
    VPERF_TRY(tracing::require_tracefs_access(tracefs, "an inline probe"));
    if (!kernel && !tracing::tracefs_file_exists(tracefs, "uprobe_events"))
      return Error{"'" + std::string(spec) + "' needs uprobes, and this kernel has no " + tracefs.file("uprobe_events").string(), 0,
                   "uprobes need a kernel built with CONFIG_UPROBE_EVENTS=y"};
    tracefs_ = std::move(tracefs);
    remove_leftover_inline_probes(*tracefs_);
  }
  std::vector<std::string> existing;
  if (kernel) {
    VPERF_TRY(existing, tracing::kprobe_definitions(*tracefs_));
  } else {
    VPERF_TRY(existing, tracing::uprobe_definitions(*tracefs_));
  }
  request.append = tracing::kernel_appends_probes(*tracefs_);
  VPERF_TRY(std::vector<PlannedProbe> planned, plan_probes(request, existing));
  VPERF_TRY(add_probes(*tracefs_, planned, false));  // gone with the run: no record
  std::vector<std::string> names;
  for (PlannedProbe& p : planned) {
    const std::string name = p.event.group + ":" + p.event.event;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);  // appended probes share an event
    created_.push_back(std::move(p));
  }
  return join(names, ",");
}

std::vector<std::string> InlineProbes::names() const {
  std::vector<std::string> out;
  for (const PlannedProbe& p : created_)
    if (std::string name = p.event.group + ":" + p.event.event; std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

InlineProbes::~InlineProbes() {
  std::vector<std::string> removed;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    // Removing an event removes every probe appended to it.
    const std::string name = it->event.group + ":" + it->event.event;
    if (std::find(removed.begin(), removed.end(), name) != removed.end()) continue;
    removed.push_back(name);
    Result<void> result = it->kernel ? tracing::remove_kprobe(*tracefs_, it->event.group, it->event.event)
                                     : tracing::remove_uprobe(*tracefs_, it->event.group, it->event.event);
    if (!result)
      std::fprintf(stderr, "vperf: warning: probe %s:%s stays until the next vperf run removes it: %s\n", it->event.group.c_str(),
                   it->event.event.c_str(), result.error().message.c_str());
  }
}

}  // namespace vperf::probes
