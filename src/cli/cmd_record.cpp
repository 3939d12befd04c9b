#include "cli/cmd_record.h"

#include <memory>

#include "cli/cmd_kvm_monitor_record.h"
#include "cli/command.h"
#include "cli/libvirt_connect.h"
#include "cli/kvm_options.h"
#include "core/strings.h"

namespace vperf::cli {

namespace {

void add_monitor_options(CLI::App& sub, MonitorRecordOptions& monitor) {
  guest::VmRecordRequest& vm = monitor.request;
  sub.add_option("--qmp", vm.qmp, "Sample every vCPU through this QMP socket (no host PMU needed)")->check(non_empty());
  sub.add_option("--qga", vm.qga, "With --qmp: fetch the guest's kallsyms and modules through its agent's socket")
      ->check(non_empty());
  sub.add_option("--duration", vm.recording.duration_seconds, "With --qmp/--domain: sample for this many seconds")
      ->check(number_in(0.001, 366 * 24 * 3600));
  sub.add_option("--domain", vm.domain,
                 "Sample every vCPU of this libvirt domain (its QEMU monitor and agent; with --qmp, its agent and pid only)")
      ->check(non_empty());
  add_connect_options(sub, "--connect", monitor.uri, monitor.allow_unsafe_uri, "With --domain: ");
  sub.add_flag("--pause", vm.recording.pause,
               "With --qmp/--domain: stop the VM during each tick, so registers and -g stacks belong to one instant");
}

// record's options that the monitor recorder takes too.
void take_record_options(const RecordOptions& options, const KvmOptions& kvm, guest::VmRecordRequest& monitor) {
  monitor.recording.frequency = static_cast<double>(options.frequency.value_or(1000));
  if (!options.frequency_text.empty()) {
    // The monitor's ticks are vperf's own timer, not the kernel's sampling: no "max" here.
    std::optional<uint64_t> ticks = parse_u64(options.frequency_text);
    if (!ticks || *ticks == 0 || *ticks > 1000000)
      throw usage_error("-F " + options.frequency_text + " is not a tick rate for the monitor", "e.g. -F 1000");
    monitor.recording.frequency = static_cast<double>(*ticks);
  }
  monitor.quiet = options.request.quiet;
  monitor.recording.command = options.request.command;
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
  sub->add_option("--filter", options->request.filter, "Tracepoint filter for the last event ('prev_pid == 0')")->check(non_empty());
  sub->add_option("-o,--output", options->request.output, "Output file (default perf.data; - for a pipe)");
  sub->add_option("-m,--mmap-pages", options->request.mmap_pages, "Ring buffer pages per CPU or task (power of two)")
      ->check(whole_number_in(1, 1 << 20));
  // perf's -z takes no value; --compression-level=N gives one (a flag's "=value", so that
  // "-z sleep 1" never reads the command as a level).
  sub->add_flag("-z,--compression-level{1}", options->request.compression_level,
                "Write the records zstd-compressed (perf's COMPRESSED records), level 1 (fastest, -z) to 22");
  sub->add_flag("--buildid-all", options->request.buildid_all, "List (and cache) every mapped DSO's build-id, not only those with samples");
  sub->add_flag("-N,--no-buildid-cache", options->request.no_buildid_cache, "Do not add the recorded files to the build-id cache");
  sub->add_flag("-B,--no-buildid", options->request.no_buildid, "Write no build-id table (and cache nothing)");
  sub->add_flag("-i,--no-inherit", options->no_inherit, "Do not sample the command's child tasks");
  sub->add_flag("-q,--quiet", options->request.quiet, "No messages");
  sub->add_flag("--sample-cpu", options->request.attr.sample_cpu, "Samples carry their CPU (always with -a/-C)");
  sub->add_flag("--all-user", options->request.attr.all_user, "Every event counts in user space only");
  sub->add_flag("--all-kernel", options->request.attr.all_kernel, "Every event counts in the kernel only");
  sub->add_option("-k,--clockid", options->clockid, "Time samples by this clock: monotonic (mono, 1), monotonic_raw, realtime, boottime, tai")
      ->check(non_empty());
  sub->add_flag("--overwrite", options->request.attr.overwrite,
                "Flight recorder: rings the kernel overwrites, oldest first; their newest records are written at the end "
                "(and at each --switch-output)");
  sub->add_flag("-s,--stat", options->request.attr.inherit_stat, "Keep each task's event counts (report -T shows them)");
  // perf's -T asks for sample times, which vperf (as perf 6.1) records always.
  // perf's optional value: --switch-output alone is "signal"; a value needs '=' (a word after a
  // space is the command).
  sub->add_flag("--switch-output{signal}", options->switch_output,
                "A series of files OUTPUT.TIMESTAMP, the next one on SIGUSR2 (signal), at a size (=100M) or after a time (=30s)");
  sub->add_option("--switch-output-event", options->switch_output_events,
                  "End the file at each occurrence of these events (counted on the recorded tasks or CPUs, not written); "
                  "implies --switch-output")
      ->allow_extra_args(false)
      ->check(non_empty());
  sub->add_option("--switch-max-files", options->switch_max_files, "With --switch-output: keep only the newest N files")
      ->check(whole_number_in(1, UINT32_MAX));
  sub->add_option("--control", options->control,
                  "Read enable, disable, stop, ping and evlist commands from a fifo or fd while recording, "
                  "acked on the second: fifo:CTL[,ACK] or fd:CTL[,ACK]");
  sub->add_option("-D,--delay", options->delay_ms,
                  "Start sampling this many ms after the command starts; -1: only when --control says enable")
      ->check(whole_number_in(-1, INT32_MAX));
  sub->add_flag("-T,--timestamp")->description("Record sample times (always done; kept for perf's command lines)");
  // vperf kvm record only: sampling the vCPUs through QEMU's monitor instead of perf events.
  auto monitor = std::make_shared<MonitorRecordOptions>();
  if (kvm) add_monitor_options(*sub, *monitor);
  sub->prefix_command();
  sub->footer("COMMAND: the program to record and its arguments, e.g. vperf record -g -- ./prog\n");
  sub->callback([sub, options, monitor, kvm, &inv] {
    options->request.command = command_words(*sub, inv);
    options->request.cmdline = inv.cmdline;
    options->request.buildid_dir = inv.buildid_dir;
    guest::VmRecordRequest& vm = monitor->request;
    vm.recording.cmdline = inv.cmdline;
    const bool output_given = sub->count("--output") > 0;
    // Checked here: CLI11 hands a value-less flag's validator "true", not its default.
    if (sub->count("-z") > 0 && (options->request.compression_level < 1 || options->request.compression_level > 22))
      throw usage_error("--compression-level must be a whole number from 1 to 22", "-z is level 1, the fastest; e.g. --compression-level=3");
    if (!vm.qga.empty() && !vm.domain.empty())
      throw usage_error("--qga and --domain both name the guest agent", "libvirt reaches a domain's agent by itself: drop --qga");
    if (!vm.qmp.empty() || !vm.domain.empty()) {
      inv.action = [options, monitor, kvm, output_given, &inv] {
        monitor->request.recording.output = output_given ? options->request.output : kvm->data_file();
        take_record_options(*options, *kvm, monitor->request);
        return run_monitor_record(*monitor, *inv.err);
      };
      return;
    }
    if (!vm.qga.empty() || vm.recording.duration_seconds || vm.recording.pause)
      throw usage_error("--qga, --duration and --pause go with --qmp or --domain", "vperf kvm record --qmp SOCKET --qga SOCKET --duration 5");
    inv.action = [options, kvm, output_given, &inv] {
      if (kvm) {
        if (!output_given) options->request.output = kvm->data_file();
        options->scope = kvm->scope();
        options->request.guests = kvm->guests;
      }
      return run_record(*options, *inv.err);
    };
  });
}

}  // namespace vperf::cli
