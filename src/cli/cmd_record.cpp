#include "cli/cmd_record.h"

#include <memory>

#include "cli/cmd_kvm_monitor_record.h"
#include "cli/command.h"
#include "cli/command_events.h"
#include "cli/libvirt_connect.h"
#include "cli/kvm_options.h"
#include "cli/target_options.h"
#include "core/strings.h"
#include "perf/event_fd.h"
#include "perf/sample_rate.h"
#include "session/inline_probes.h"
#include "session/reading_session.h"
#include "session/record_session.h"
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
  if (!targets && !cpu_wide && o.command.empty())
    throw usage_error("nothing to record", "give a COMMAND (vperf record -g -- ./prog), or -a, -C CPUS, -p PID, -t TID");
  if (o.frequency && o.period) throw usage_error("-F and -c cannot be combined", "sample by frequency (-F) or every N events (-c)");
  if (o.frequency && *o.frequency == 0) throw usage_error("-F needs a positive frequency", "e.g. -F 999");
  if (o.period && *o.period == 0) throw usage_error("-c needs a positive period", "e.g. -c 100003");
  if (o.mmap_pages == 0 || (o.mmap_pages & (o.mmap_pages - 1)) != 0)
    throw usage_error("-m " + std::to_string(o.mmap_pages) + " is not a power of two", "e.g. -m 128 (the default) or -m 512");
  if (o.output.empty()) throw usage_error("-o needs a file name, or - for a pipe", "");
}

// The events to sample: -e as given, or `cycles`; on a machine where the kernel has no
// hardware cycles, perf samples cpu-clock instead and says so; so does vperf.
std::vector<events::ResolvedEvent> sampled_events(const RecordOptions& o, const CommandEvents& resolver) {
  std::vector<events::ResolvedEvent> out;
  for (const events::ResolvedGroup& group : resolver.resolve(o.events.empty() ? "cycles" : join(o.events, ",")))
    for (const events::ResolvedEvent& e : group.members) {
      events::ResolvedEvent alone = e;
      alone.group_role = events::GroupRole::Alone;  // sampled one by one, each with its own period
      out.push_back(alone);
    }
  return out;
}

void add_monitor_options(CLI::App& sub, MonitorRecordOptions& monitor) {
  sub.add_option("--qmp", monitor.qmp, "Sample every vCPU through this QMP socket (no host PMU needed)")->check(non_empty());
  sub.add_option("--qga", monitor.qga, "With --qmp: fetch the guest's kallsyms and modules through its agent's socket")
      ->check(non_empty());
  sub.add_option("--duration", monitor.duration_seconds, "With --qmp/--domain: sample for this many seconds")
      ->check(number_in(0.001, 366 * 24 * 3600));
  sub.add_option("--domain", monitor.domain,
                 "Sample every vCPU of this libvirt domain (its QEMU monitor and agent; with --qmp, its agent and pid only)")
      ->check(non_empty());
  add_connect_options(sub, "--connect", monitor.uri, monitor.allow_unsafe_uri, "With --domain: ");
  sub.add_flag("--pause", monitor.pause,
               "With --qmp/--domain: stop the VM during each tick, so registers and -g stacks belong to one instant");
}

// record's options that the monitor recorder takes too.
void take_record_options(const RecordOptions& options, const KvmOptions& kvm, MonitorRecordOptions& monitor) {
  monitor.frequency = static_cast<double>(options.frequency.value_or(1000));
  if (!options.frequency_text.empty()) {
    // The monitor's ticks are vperf's own timer, not the kernel's sampling: no "max" here.
    std::optional<uint64_t> ticks = parse_u64(options.frequency_text);
    if (!ticks || *ticks == 0 || *ticks > 1000000)
      throw usage_error("-F " + options.frequency_text + " is not a tick rate for the monitor", "e.g. -F 1000");
    monitor.frequency = static_cast<double>(*ticks);
  }
  monitor.quiet = options.quiet;
  monitor.command = options.command;
  monitor.guests = kvm.guests;
  monitor.call_graph = options.call_graph_fp || !options.call_graph.empty();
  if (!options.call_graph.empty()) {
    monitor.stack_method = guest::parse_stack_method(options.call_graph);
    if (!monitor.stack_method)
      throw usage_error("bad --call-graph '" + options.call_graph + "' for guest kernel stacks",
                        "use orc, fp or scan with --qmp/--domain (or -g for the best the guest allows)");
  }
}

}  // namespace

session::RecordRequest record_request(const RecordOptions& o) {
  validate(o);
  if (!o.guests.empty()) {
    symbols::Machines check{symbols::SymbolConfig{}};
    session::add_guests(check, o.guests);  // a zeroed or unreadable guest kallsyms stops here, not in report
  }
  CallGraphChoice cg = parse_call_graph(o);
  CommandEvents resolver;
  session::RecordRequest request;
  request.events = sampled_events(o, resolver);
  request.fallback_events = events::without_hardware_cycles(request.events);
  request.attr.frequency = o.frequency;
  request.attr.period = o.period;
  request.attr.call_graph = cg.mode;
  request.attr.dwarf_stack_size = cg.dwarf_size;
  request.attr.inherit = !o.no_inherit;
  request.attr.scope = o.scope;
  TaskTargets tasks = resolve_targets(o.system_wide, o.cpus, o.pids, o.tids);
  request.cpus = tasks.cpus;
  request.threads = tasks.threads;
  if (!o.pids.empty()) request.existing = parse_pid_list(o.pids, "-p");
  if (!o.tids.empty()) request.existing = parse_pid_list(o.tids, "-t");
  request.filter = o.filter;
  request.tracepoint_filters = o.tracepoint_filters;
  request.output = o.output;
  request.mmap_pages = o.mmap_pages;
  request.command = o.command;
  request.guests = o.guests;
  request.cmdline = o.cmdline;
  request.quiet = o.quiet;
  return request;
}

// -F for perf events: a rate up to the kernel's limit, or "max", said as perf says it.
std::optional<uint64_t> perf_sample_rate(const RecordOptions& o, std::ostream& err) {
  if (o.frequency_text.empty()) return o.frequency;
  Result<uint64_t> limit = perf::max_sample_rate();
  if (!limit) throw UserError("cannot read the kernel's sample rate limit: " + limit.error().describe(), "is /proc mounted?");
  Result<perf::SampleRateChoice> rate = perf::choose_sample_rate(o.frequency_text, *limit);
  if (!rate) throw usage_error(rate.error().describe(), rate.error().hint);
  if (!rate->info.empty() && !o.quiet) err << "vperf: " << rate->info << '\n';
  if (!rate->warning.empty()) err << "vperf: warning: " << rate->warning << '\n';
  return rate->hz;
}

int run_record(const RecordOptions& given, std::ostream& err) {
  // Inline probes (-e uprobe:PATH:FUNC) are removed when this goes, after the session has
  // closed its events.
  session::InlineProbes inline_probes;
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

void add_record_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm) {
  auto options = std::make_shared<RecordOptions>();
  CLI::App* sub = app.add_subcommand("record", "Sample a command, CPUs or tasks into perf.data (perf's format)");
  sub->add_option("-e,--event", options->events, "Events to sample (default cycles; cpu-clock where there is no PMU)")
      ->allow_extra_args(false);
  sub->add_option("-F,--freq", options->frequency_text, "Samples per second (default 4000), or max (the kernel's limit)")
      ->check(non_empty());
  sub->add_option("-c,--count", options->period, "Sample every N events")->check(whole_number_in(1, INT64_MAX));
  sub->add_flag("-g", options->call_graph_fp, "Record call chains (frame pointers)");
  sub->add_option("--call-graph", options->call_graph,
                  kvm ? "fp, or dwarf[,SIZE] to copy user stacks for DWARF unwinding; with --qmp/--domain: orc, fp or scan "
                        "(how guest kernel stacks are unwound)"
                      : "fp, or dwarf[,SIZE] to copy user stacks for DWARF unwinding");
  sub->add_flag("-a,--all-cpus", options->system_wide, "Sample every online CPU");
  sub->add_option("-C,--cpu", options->cpus, "Sample these CPUs (0-3,8)")->check(non_empty());
  sub->add_option("-p,--pid", options->pids, "Attach to these processes")->check(non_empty());
  sub->add_option("-t,--tid", options->tids, "Attach to these threads")->check(non_empty());
  sub->add_option("--filter", options->filter, "Tracepoint filter for the last event ('prev_pid == 0')")->check(non_empty());
  sub->add_option("-o,--output", options->output, "Output file (default perf.data; - for a pipe)");
  sub->add_option("-m,--mmap-pages", options->mmap_pages, "Ring buffer pages per CPU or task (power of two)")
      ->check(whole_number_in(1, 1 << 20));
  sub->add_flag("-i,--no-inherit", options->no_inherit, "Do not sample the command's child tasks");
  sub->add_flag("-q,--quiet", options->quiet, "No messages");
  // vperf kvm record only: sampling the vCPUs through QEMU's monitor instead of perf events.
  auto monitor = std::make_shared<MonitorRecordOptions>();
  if (kvm) add_monitor_options(*sub, *monitor);
  sub->prefix_command();
  sub->footer("COMMAND: the program to record and its arguments, e.g. vperf record -g -- ./prog\n");
  sub->callback([sub, options, monitor, kvm, &inv] {
    options->command = command_words(*sub, inv);
    options->cmdline = inv.cmdline;
    monitor->cmdline = inv.cmdline;
    const bool output_given = sub->count("--output") > 0;
    if (!monitor->qga.empty() && !monitor->domain.empty())
      throw usage_error("--qga and --domain both name the guest agent", "libvirt reaches a domain's agent by itself: drop --qga");
    if (!monitor->qmp.empty() || !monitor->domain.empty()) {
      inv.action = [options, monitor, kvm, output_given, &inv] {
        monitor->output = output_given ? options->output : kvm->data_file();
        take_record_options(*options, *kvm, *monitor);
        return run_monitor_record(*monitor, *inv.err);
      };
      return;
    }
    if (!monitor->qga.empty() || monitor->duration_seconds || monitor->pause)
      throw usage_error("--qga, --duration and --pause go with --qmp or --domain", "vperf kvm record --qmp SOCKET --qga SOCKET --duration 5");
    inv.action = [options, kvm, output_given, &inv] {
      if (kvm) {
        if (!output_given) options->output = kvm->data_file();
        options->scope = kvm->scope();
        options->guests = kvm->guests;
      }
      return run_record(*options, *inv.err);
    };
  });
}

}  // namespace vperf::cli
