#include "tracing/ftrace_setup.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/scoped_fd.h"
#include "core/strings.h"
#include "tracing/kernel_control_text.h"

namespace vperf::tracing {

namespace {

std::string join_pids(const std::vector<pid_t>& pids) {
  std::string text;
  for (pid_t pid : pids) text += std::to_string(pid) + " ";
  return text;
}

}  // namespace

std::string tracing_cpumask_text(const std::vector<int>& cpus) {
  int highest = 0;
  for (int cpu : cpus) highest = std::max(highest, cpu);
  std::vector<uint32_t> words(static_cast<size_t>(highest / 32 + 1), 0);
  for (int cpu : cpus)
    if (cpu >= 0) words[static_cast<size_t>(cpu / 32)] |= 1u << (cpu % 32);
  std::string mask;
  for (size_t i = words.size(); i-- > 0;) {
    char part[16];
    std::snprintf(part, sizeof part, i + 1 == words.size() ? "%x" : "%08x", words[i]);
    if (!mask.empty()) mask += ",";
    mask += part;
  }
  return mask;
}

bool is_function_based_tracer(std::string_view tracer) {
  for (std::string_view name : {"function", "function_graph", "irqsoff", "preemptoff", "preemptirqsoff", "wakeup", "wakeup_rt", "wakeup_dl"})
    if (tracer == name) return true;
  return false;
}

std::optional<Error> function_tracing_refused(const FtraceBuffer& buffer) {
  // available_filter_functions lives at the top level only; set_ftrace_filter in each buffer.
  const std::filesystem::path functions = buffer.tracefs().file("available_filter_functions");
  const std::string hint =
      "this kernel (lockdown, or a hypervisor that forbids code patching) allows no function tracing; "
      "trace events instead (-e SYSTEM:EVENT), or run where ftrace's function tracers are allowed";
  ScopedFd fd(::open(functions.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT)
      return Error{"this kernel has no function tracer (no " + functions.string() + ")", 0, "it needs CONFIG_FUNCTION_TRACER=y"};
    return Error{"the kernel refuses function tracing: reading " + functions.string() + " fails", err, hint};
  }
  char probe[1];
  if (::read(fd.get(), probe, sizeof probe) < 0) {
    const int err = errno;
    return Error{"the kernel refuses function tracing: reading " + functions.string() + " fails", err, hint};
  }
  const std::filesystem::path filter = buffer.file("set_ftrace_filter");
  ScopedFd filter_fd(::open(filter.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!filter_fd.valid()) {
    const int err = errno;
    return Error{"the kernel refuses function tracing: opening " + filter.string() + " fails", err, hint};
  }
  return std::nullopt;
}

std::vector<std::string> available_tracers(const FtraceBuffer& buffer) {
  std::vector<std::string> tracers;
  if (Result<std::string> text = buffer.read("available_tracers"))
    for (std::string_view word : split(trim(*text), ' '))
      if (!trim(word).empty()) tracers.emplace_back(trim(word));
  return tracers;
}

Result<std::vector<TracepointName>> expand_events(const TracepointCatalog& catalog, const std::vector<std::string>& patterns) {
  std::vector<TracepointName> events;
  std::set<std::string> seen;
  for (const std::string& given : patterns) {
    for (std::string_view one : split(given, ',')) {
      std::string pattern(trim(one));
      if (pattern.empty()) continue;
      if (pattern.find(':') == std::string::npos) pattern += ":*";  // "sched": the whole system
      std::vector<const Tracepoint*> matched = catalog.match(pattern);
      if (matched.empty())
        return Error{"no event matches '" + std::string(one) + "'", 0, "list the events with: vperf ftrace list -e"};
      for (const Tracepoint* tp : matched)
        if (seen.insert(tp->name()).second) events.push_back({tp->subsystem, tp->event});
    }
  }
  return events;
}

Result<void> check_settings(const FtraceSettings& s) {
  if (!s.tracer.empty()) VPERF_TRY(check_buffer_value("current_tracer", s.tracer));
  if (!s.clock.empty()) VPERF_TRY(check_buffer_value("trace_clock", s.clock));
  if (!s.cpumask.empty()) VPERF_TRY(check_buffer_value("tracing_cpumask", s.cpumask));
  for (const std::string& option : s.options) {
    // An option is a file name: "-O ../tracing_on" must not reach another file, nor "-O
    // no../tracing_on", which apply_settings writes as options/../tracing_on.
    const bool named = check_buffer_file("options/" + option).ok() &&
                       (!option.starts_with("no") || check_buffer_file("options/" + option.substr(2)).ok());
    if (!named)
      return Error{"there is no trace option '" + printable_text(option) + "'", 0, "list them with: vperf ftrace list -o"};
  }
  for (const auto& [file, words] : {std::pair{"set_ftrace_filter", &s.function_filters}, std::pair{"set_ftrace_notrace", &s.function_notrace},
                                    std::pair{"set_graph_function", &s.graph_functions}, std::pair{"set_graph_notrace", &s.graph_notrace}})
    for (const std::string& word : *words) VPERF_TRY(check_filter_word(file, word));
  if (!s.event_filter.empty()) VPERF_TRY(check_buffer_value("filter", s.event_filter));
  for (const std::string& trigger : s.event_triggers) VPERF_TRY(check_buffer_value("trigger", trigger));
  return {};
}

Result<void> apply_settings(FtraceBuffer& buffer, const FtraceSettings& s, const std::vector<TracepointName>& events) {
  // Every value checked before the first write: a bad one changes nothing.
  VPERF_TRY(check_settings(s));
  VPERF_TRY(stop_tracing(buffer));
  const bool functions = is_function_based_tracer(s.tracer) || !s.function_filters.empty() || !s.function_notrace.empty() ||
                         !s.graph_functions.empty() || !s.graph_notrace.empty();
  if (functions)
    if (std::optional<Error> refused = function_tracing_refused(buffer)) return *refused;
  if (!s.tracer.empty() && s.tracer != "nop") {
    const std::vector<std::string> tracers = available_tracers(buffer);
    if (std::find(tracers.begin(), tracers.end(), s.tracer) == tracers.end())
      return Error{"this " + std::string(buffer.is_top_level() ? "kernel" : "instance") + " has no '" + s.tracer + "' tracer (available: " +
                       join(tracers, " ") + ")",
                   0, "list them with: vperf ftrace list -t"};
  }
  // The buffer's shape.
  if (!s.clock.empty()) VPERF_TRY(buffer.write("trace_clock", s.clock));
  if (s.buffer_kb) VPERF_TRY(buffer.write("buffer_size_kb", std::to_string(*s.buffer_kb)));
  if (!s.cpumask.empty()) VPERF_TRY(buffer.write("tracing_cpumask", s.cpumask));
  for (const std::string& option : s.options) {
    const bool off = option.starts_with("no") && buffer.has("options/" + option.substr(2));
    const std::string name = off ? option.substr(2) : option;
    if (!buffer.has("options/" + name))
      return Error{"there is no trace option '" + option + "'", 0, "list them with: vperf ftrace list -o"};
    VPERF_TRY(buffer.write("options/" + name, off ? "0" : "1"));
  }
  // Who is traced.
  if (!s.pids.empty()) {
    if (functions) VPERF_TRY(buffer.write("set_ftrace_pid", join_pids(s.pids)));
    VPERF_TRY(buffer.write("set_event_pid", join_pids(s.pids)));
    if (s.inherit) {
      if (functions) VPERF_TRY(buffer.write("options/function-fork", "1"));
      VPERF_TRY(buffer.write("options/event-fork", "1"));
    }
  }
  // Each filter line is its own write: the kernel takes one glob or command per write, and a
  // filter that matches nothing fails that write (EINVAL), which names the culprit.
  auto write_list = [&](std::string_view file, const std::vector<std::string>& lines) -> Result<void> {
    if (lines.empty()) return {};
    VPERF_TRY(buffer.write(file, ""));
    for (const std::string& line : lines) {
      // With its newline: the kernel matches a filter word when a separator ends it, and one
      // left unended is matched at close(), whose failure no one sees.
      Result<void> written = buffer.write(file, line + "\n", true);
      if (!written) {
        Error error = written.error();
        if (error.errno_value == EINVAL)
          error = Error{"'" + line + "' matches no traceable function (" + std::string(file) + " refused it)", 0,
                        "list the traceable functions with: vperf ftrace -F '" + line + "'"};
        return error;
      }
    }
    return {};
  };
  VPERF_TRY(write_list("set_ftrace_filter", s.function_filters));
  VPERF_TRY(write_list("set_ftrace_notrace", s.function_notrace));
  VPERF_TRY(write_list("set_graph_function", s.graph_functions));
  VPERF_TRY(write_list("set_graph_notrace", s.graph_notrace));
  if (s.graph_depth) VPERF_TRY(buffer.write("max_graph_depth", std::to_string(*s.graph_depth)));
  if (s.threshold_us) VPERF_TRY(buffer.write("tracing_thresh", std::to_string(*s.threshold_us)));
  // The tracer, read back: a kernel can take the write and keep "nop".
  if (!s.tracer.empty()) {
    VPERF_TRY(buffer.write("current_tracer", s.tracer));
    Result<std::string> now = buffer.read("current_tracer");
    if (now && std::string(trim(*now)) != s.tracer)
      return Error{"the kernel kept the '" + std::string(trim(*now)) + "' tracer instead of '" + s.tracer + "' (" +
                       buffer.file("current_tracer").string() + ")",
                   0, "this kernel does not allow that tracer here"};
  }
  // The events, each with the filter and triggers first, so none fires unfiltered.
  for (const TracepointName& event : events) {
    const std::string dir = "events/" + event.system + "/" + event.event + "/";
    if (!s.event_filter.empty()) VPERF_TRY(buffer.write(dir + "filter", s.event_filter));
    for (const std::string& trigger : s.event_triggers) VPERF_TRY(buffer.write(dir + "trigger", trigger, true));
    VPERF_TRY(buffer.write(dir + "enable", "1"));
  }
  // An empty buffer: what an earlier user of it left is not this run's.
  return buffer.write("trace", "");
}

Result<void> start_tracing(FtraceBuffer& buffer) { return buffer.write("tracing_on", "1"); }
Result<void> stop_tracing(FtraceBuffer& buffer) { return buffer.write("tracing_on", "0"); }

}  // namespace vperf::tracing
