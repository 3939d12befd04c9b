#include "cli/perf_record_options.h"

#include "cli/command.h"
#include "cli/command_events.h"
#include "cli/target_options.h"
#include "core/strings.h"
#include "perf/event_fd.h"
#include "perf/sample_rate.h"
#include "probes/inline_probes.h"
#include "session/reading_session.h"
#include "symbols/machines.h"

namespace vperf::cli {

namespace {

struct CallGraphChoice {
  events::CallGraph mode = events::CallGraph::None;
  uint32_t dwarf_size = 8192;
};

CallGraphChoice parse_call_graph(const RecordOptions& o) {
  CallGraphChoice choice;
  if (o.call_graph_fp) choice.mode = events::CallGraph::FramePointer;
  if (o.call_graph.empty()) return choice;
  std::vector<std::string_view> parts = split(o.call_graph, ',');
  if (parts[0] == "fp" && parts.size() == 1) {
    choice.mode = events::CallGraph::FramePointer;
  } else if (parts[0] == "dwarf" && parts.size() <= 2) {
    choice.mode = events::CallGraph::Dwarf;
    if (parts.size() == 2) {
      std::optional<uint64_t> size = parse_u64(parts[1]);
      // The kernel takes at most 65528 bytes of user stack, in multiples of 8.
      if (!size || *size == 0 || *size > 65528 || *size % 8 != 0)
        throw usage_error("bad --call-graph dwarf size '" + std::string(parts[1]) + "'",
                          "give a multiple of 8 up to 65528, e.g. dwarf,16384");
      choice.dwarf_size = static_cast<uint32_t>(*size);
    }
  } else {
    throw usage_error("bad --call-graph '" + o.call_graph + "'", "use fp, dwarf or dwarf,SIZE (lbr needs a PMU vperf does not drive)");
  }
  return choice;
}

void validate(const RecordOptions& o) {
  int targets = (o.pids.empty() ? 0 : 1) + (o.tids.empty() ? 0 : 1);
  bool cpu_wide = o.system_wide || !o.cpus.empty();
  if (targets > 1) throw usage_error("-p and -t cannot be combined", "give the processes with -p, or the threads with -t");
  if (targets && cpu_wide) throw usage_error("-p/-t sample tasks, -a/-C sample CPUs: choose one", "drop -p/-t, or drop -a/-C");
  if (!targets && !cpu_wide && o.request.command.empty())
    throw usage_error("nothing to record", "give a COMMAND (vperf record -g -- ./prog), or -a, -C CPUS, -p PID, -t TID");
  if (o.frequency && o.period) throw usage_error("-F and -c cannot be combined", "sample by frequency (-F) or every N events (-c)");
  if (o.frequency && *o.frequency == 0) throw usage_error("-F needs a positive frequency", "e.g. -F 999");
  if (o.period && *o.period == 0) throw usage_error("-c needs a positive period", "e.g. -c 100003");
  if (o.request.mmap_pages == 0 || (o.request.mmap_pages & (o.request.mmap_pages - 1)) != 0)
    throw usage_error("-m " + std::to_string(o.request.mmap_pages) + " is not a power of two", "e.g. -m 128 (the default) or -m 512");
  if (o.request.output.empty()) throw usage_error("-o needs a file name, or - for a pipe", "");
}

// The events to sample: -e as given, or `cycles`; on a machine where the kernel has no
// hardware cycles, perf samples cpu-clock instead and says so; so does vperf.
std::vector<events::ResolvedEvent> sampled_events(const RecordOptions& o, const CommandEvents& resolver) {
  std::vector<events::ResolvedEvent> out;
  // A {group} is opened as one (its members follow the leader's enabling, perf reads it as a
  // group); each member still samples at its own period.
  for (const events::ResolvedGroup& group : resolver.resolve(o.events.empty() ? "cycles" : join(o.events, ",")))
    for (size_t m = 0; m < group.members.size(); ++m) {
      events::ResolvedEvent e = group.members[m];
      e.group_role = !group.is_group || group.members.size() < 2 ? events::GroupRole::Alone
                     : m == 0                                     ? events::GroupRole::Leader
                                                                  : events::GroupRole::Member;
      out.push_back(std::move(e));
    }
  return out;
}

}  // namespace

session::RecordRequest record_request(const RecordOptions& o) {
  validate(o);
  if (!o.request.guests.empty()) {
    symbols::Machines check{symbols::SymbolConfig{}};
    session::add_guests(check, o.request.guests);  // a zeroed or unreadable guest kallsyms stops here, not in report
  }
  CallGraphChoice cg = parse_call_graph(o);
  CommandEvents resolver;
  session::RecordRequest request = o.request;
  request.events = sampled_events(o, resolver);
  request.fallback_events = events::without_hardware_cycles(request.events);
  request.attr.frequency = o.frequency;
  request.attr.period = o.period;
  if (!o.clockid.empty()) {
    request.attr.clockid = events::parse_clockid(o.clockid);
    if (!request.attr.clockid)
      throw usage_error("unknown clockid '" + o.clockid + "'",
                        "use monotonic (1, what JIT dumps need), monotonic_raw, realtime, boottime, tai, or a clock number");
  }
  request.attr.call_graph = cg.mode;
  request.attr.dwarf_stack_size = cg.dwarf_size;
  request.attr.inherit = !o.no_inherit;
  request.attr.scope = o.scope;
  TaskTargets tasks = resolve_targets(o.system_wide, o.cpus, o.pids, o.tids);
  request.cpus = tasks.cpus;
  request.threads = tasks.threads;
  if (!o.pids.empty()) request.existing = parse_pid_list(o.pids, "-p");
  if (!o.tids.empty()) request.existing = parse_pid_list(o.tids, "-t");
  // perf: --switch-output-event implies --switch-output=signal, its side band's way to switch.
  const std::string switch_output = o.switch_output.empty() && !o.switch_output_events.empty() ? "signal" : o.switch_output;
  if (!o.switch_output_events.empty())
    for (const events::ResolvedGroup& group : resolver.resolve(join(o.switch_output_events, ",")))
      request.switch_events.insert(request.switch_events.end(), group.members.begin(), group.members.end());
  if (!switch_output.empty()) {
    Result<session::SwitchOutput> switching = session::parse_switch_output(switch_output);
    if (!switching) throw usage_error(switching.error().message, "--switch-output (SIGUSR2 ends a file), --switch-output=100M or --switch-output=30s");
    request.switch_output = *switching;
    request.switch_output.max_files = o.switch_max_files;
  } else if (o.switch_max_files > 0) {
    throw usage_error("--switch-max-files goes with --switch-output", "vperf record --switch-output=1G --switch-max-files=5 ...");
  }
  if (!o.control.empty()) {
    request.control = session::parse_control_spec(o.control);
    if (!request.control)
      throw usage_error("--control takes fifo:CTL[,ACK] or fd:CTL[,ACK], not '" + o.control + "'",
                        "mkfifo ctl ack; vperf record --control=fifo:ctl,ack ...");
  }
  request.delay_ms = o.delay_ms;
  return request;
}

// -F for perf events: a rate up to the kernel's limit, or "max", said as perf says it.
std::optional<uint64_t> perf_sample_rate(const RecordOptions& o, std::ostream& err) {
  if (o.frequency_text.empty()) return o.frequency;
  Result<uint64_t> limit = perf::max_sample_rate();
  if (!limit) throw UserError("cannot read the kernel's sample rate limit: " + limit.error().describe(), "is /proc mounted?");
  Result<perf::SampleRateChoice> rate = perf::choose_sample_rate(o.frequency_text, *limit);
  if (!rate) throw usage_error(rate.error().describe(), rate.error().hint);
  if (!rate->info.empty() && !o.request.quiet) err << "vperf: " << rate->info << '\n';
  if (!rate->warning.empty()) err << "vperf: warning: " << rate->warning << '\n';
  return rate->hz;
}

int run_record(const RecordOptions& given, std::ostream& err) {
  // Inline probes (-e uprobe:PATH:FUNC) are removed when this goes, after the session has
  // closed its events.
  probes::InlineProbes inline_probes;
  RecordOptions o = given;
  Result<std::vector<std::string>> events = inline_probes.create(given.events);
  if (!events) throw user_error(events.error());
  o.events = std::move(events).value();
  o.frequency = perf_sample_rate(given, err);
  const session::RecordRequest request = record_request(o);
  perf::KernelPerfEventOpener opener;
  session::SystemRunClock clock;
  return session::record(request, opener, clock, err);
}

}  // namespace vperf::cli
