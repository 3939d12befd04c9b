#include "cli/cmd_record.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "cli/cmd_kvm_monitor_record.h"
#include "cli/command.h"
#include "cli/libvirt_connect.h"
#include "cli/kvm_options.h"
#include "cli/command_events.h"
#include "cli/perf_data_input.h"
#include "cli/record_build_ids.h"
#include "cli/target_options.h"
#include "core/cpu_set.h"
#include "core/files.h"
#include "core/strings.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "tracing/tracing_data.h"
#include "events/record_attr.h"
#include "perf/permission_fallback.h"
#include "perf/sampling_session.h"
#include "perf/stop_signals.h"
#include "perf/synthesize.h"
#include "perf/workload.h"

namespace vperf::cli {

namespace {

using std::chrono::milliseconds;

constexpr int kFeatureTracingData = 1;  // HEADER_TRACING_DATA (data/perf_data_format.h)

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
  if (targets && !o.command.empty() && !o.command_times_targets)
    throw usage_error("a COMMAND and -p/-t cannot be combined", "record the command, or attach to the running tasks");
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

std::vector<perf::SamplingEvent> sampling_events(const std::vector<events::ResolvedEvent>& chosen, const RecordOptions& o,
                                                 const CallGraphChoice& cg, bool system_wide, bool on_exec) {
  std::vector<perf::SamplingEvent> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    events::RecordAttrOptions a;
    a.frequency = o.frequency;
    a.period = o.period;
    a.call_graph = cg.mode;
    a.dwarf_stack_size = cg.dwarf_size;
    a.system_wide = system_wide;
    a.several_events = chosen.size() > 1;
    a.tracking = i == 0;
    a.enable_on_exec = on_exec;
    a.inherit = !o.no_inherit;
    a.scope = o.scope;
    out.push_back({chosen[i].written.empty() ? chosen[i].name : chosen[i].written, events::build_record_attr(chosen[i], a)});
  }
  return out;
}

// vperf kvm record with guest symbols: each guest's kernel and module maps, as perf kvm record
// writes them, so perf kvm report can read the file too. Unusable files are refused before
// recording starts (add_guests in run_record).
std::vector<perf::RecordBytes> guest_kernel_maps(const guest::GuestSymbolSources& guests, size_t trailer) {
  std::vector<perf::RecordBytes> out;
  auto add = [&](const std::filesystem::path& kallsyms, const std::filesystem::path& modules, pid_t pid) {
    Result<std::vector<perf::RecordBytes>> maps = perf::synthesize_guest_kernel_maps(kallsyms, modules, pid, trailer);
    if (maps) out.insert(out.end(), maps->begin(), maps->end());
  };
  if (!guests.kallsyms.empty()) add(guests.kallsyms, guests.modules, symbols::Machines::kDefaultGuestPid);
  if (!guests.mount.empty())
    if (auto mounted = guest::guests_under_mount(guests.mount); mounted)
      for (const auto& [pid, root] : *mounted) add(root / "proc/kallsyms", root / "proc/modules", pid);
  return out;
}

bool refused_as_missing(int errno_value) {
  return errno_value == ENOENT || errno_value == EOPNOTSUPP || errno_value == ENODEV || errno_value == ENXIO;
}

std::string open_hint(int errno_value) {
  if (errno_value == EACCES || errno_value == EPERM)
    return "sampling the kernel or other users' tasks needs root, CAP_PERFMON or a lower kernel.perf_event_paranoid "
           "(sysctl -w kernel.perf_event_paranoid=-1); -m larger than perf_event_mlock_kb also needs it";
  if (errno_value == EMFILE) return "one ring per CPU or task: raise ulimit -n, or sample fewer tasks";
  if (errno_value == ENOMEM) return "the ring buffers did not fit: use a smaller -m";
  return "run 'vperf check' to see what this machine can sample";
}

// Every process in /proc, for -a: perf synthesizes them all so that samples get a comm.
std::vector<pid_t> all_processes() {
  std::vector<pid_t> pids;
  Result<std::vector<std::string>> entries = list_directory("/proc");
  if (entries)
    for (const std::string& name : *entries)
      if (auto pid = parse_u64(name)) pids.push_back(static_cast<pid_t>(*pid));
  return pids;
}

struct Tally {
  uint64_t records = 0;
  uint64_t samples = 0;
  uint64_t lost_chunks = 0;  // PERF_RECORD_LOST records: the kernel found the ring full
  uint64_t lost = 0;         // the records they say were dropped
  uint64_t wakeups = 0;  // a ring reached its wakeup mark (half full) or its task ended
};

class Recorder {
 public:
  Recorder(perf::SamplingSession& session, data::PerfDataWriter& writer) : session_(session), writer_(writer) {}

  void drain() {
    std::optional<Error> write_error;
    Result<size_t> n = session_.drain([&](std::span<const uint8_t> record) {
      perf_event_header header;
      std::memcpy(&header, record.data(), sizeof header);
      ++tally.records;
      if (header.type == PERF_RECORD_SAMPLE) ++tally.samples;
      if (header.type == PERF_RECORD_LOST && record.size() >= sizeof header + 16) {
        uint64_t lost;
        std::memcpy(&lost, record.data() + sizeof header + 8, sizeof lost);
        ++tally.lost_chunks;
        tally.lost += lost;
      }
      if (!write_error)
        if (Result<bool> ok = writer_.write(record); !ok) write_error = ok.error();
    });
    if (!n) throw UserError("cannot read the samples: " + n.error().describe(), "run 'vperf check'");
    if (write_error) throw UserError("cannot write the samples: " + write_error->describe(), "check the disk space");
    if (*n > 0) {
      if (Result<bool> ok = writer_.flush_round(); !ok)
        throw UserError("cannot write the samples: " + ok.error().describe(), "check the disk space");
    }
  }

  Tally tally;

 private:
  perf::SamplingSession& session_;
  data::PerfDataWriter& writer_;
};

// perf's evsel__fallback for an event the kernel refused for privilege: user space only.
// The messages are kept for the caller to print.
perf::OpenRetry permission_retry(std::vector<std::string>& messages) {
  return [&messages](perf::SamplingEvent& event, const Error& error) {
    std::optional<std::string> message =
        perf::fall_back_to_user_space(event.attr, event.name, error.errno_value, [] { return perf::read_perf_event_paranoid(); });
    if (message) messages.push_back(*message);
    return message.has_value();
  };
}

// The BUILD_ID feature, from the recording read back as perf's process_buildids reads it.
std::optional<RecordedBuildIds> read_back_build_ids(const std::string& path, std::ostream& err, bool quiet) {
  Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(path);
  Result<RecordedBuildIds> ids = reader ? recorded_build_ids(reader.value()) : Result<RecordedBuildIds>(reader.error());
  if (ids) return std::move(ids).value();
  if (!quiet) err << "vperf: warning: " << path << " has no build-id list: " << ids.error().describe() << '\n';
  return std::nullopt;
}

void write_all(data::PerfDataWriter& writer, const std::vector<perf::RecordBytes>& records) {
  for (const perf::RecordBytes& r : records)
    if (Result<bool> ok = writer.write(r); !ok)
      throw UserError("cannot write the perf.data header records: " + ok.error().describe(), "check the disk space");
}

// A kernel filter on every counter of the tracepoint event `index`; the kernel's refusal is a
// usage error naming the filter.
void set_tracepoint_filter(const perf::SamplingSession& session, size_t index, const std::string& filter) {
  if (Result<bool> ok = session.set_filter(index, filter); !ok)
    throw usage_error("the kernel refused the filter '" + filter + "': " + ok.error().describe(),
                      "see the event's fields in /sys/kernel/tracing/events/<subsystem>/<event>/format");
}

// The index of the tracepoint `name` among the chosen events, or nullopt.
std::optional<size_t> tracepoint_index(const std::vector<events::ResolvedEvent>& chosen, const std::string& name) {
  for (size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i].type == PERF_TYPE_TRACEPOINT && chosen[i].name == name) return i;
  return std::nullopt;
}

}  // namespace

int run_record(const RecordOptions& o, std::ostream& err) {
  validate(o);
  if (!o.guests.empty()) {
    symbols::Machines check{symbols::SymbolConfig{}};
    add_guests(check, o.guests);  // a zeroed or unreadable guest kallsyms stops here, not in report
  }
  CallGraphChoice cg = parse_call_graph(o);
  CommandEvents resolver;
  std::vector<events::ResolvedEvent> chosen = sampled_events(o, resolver);
  TaskTargets tasks = resolve_targets(o.system_wide, o.cpus, o.pids, o.tids);
  const bool system_wide = !tasks.cpus.empty();

  Result<perf::StopSignals> signals = perf::StopSignals::install();
  if (!signals) throw UserError("cannot install signal handlers: " + signals.error().describe(), "");
  std::optional<perf::Workload> workload;
  perf::SamplingTarget target{tasks.threads, tasks.cpus};
  if (!o.command.empty()) {
    Result<perf::Workload> prepared = perf::Workload::prepare(o.command);
    if (!prepared) throw UserError("cannot start '" + o.command.front() + "': " + prepared.error().describe(), "");
    workload.emplace(std::move(prepared).value());
    if (!system_wide && tasks.threads.empty()) target.threads = {workload->pid()};
  }
  if (!system_wide && !o.no_inherit) {
    // Inherited per-task counters need a CPU each to have a ring.
    Result<std::vector<int>> online = online_cpus();
    if (!online) throw UserError("cannot list the online CPUs: " + online.error().describe(), "is /sys mounted?");
    target.cpus = *online;
  }
  const bool on_exec = workload && !system_wide && tasks.threads.empty();

  perf::KernelPerfEventOpener opener;
  std::vector<std::string> fallback_messages;
  perf::OpenRetry retry = permission_retry(fallback_messages);
  Result<perf::SamplingSession> session =
      perf::SamplingSession::open(opener, sampling_events(chosen, o, cg, system_wide, on_exec), target, o.mmap_pages, retry);
  if (!session && o.events.empty() && refused_as_missing(session.error().errno_value)) {
    // perf's fallback: no hardware cycles (a VM without a virtual PMU) -> cpu-clock.
    RecordOptions fallback = o;
    fallback.events = {"cpu-clock"};
    chosen = sampled_events(fallback, resolver);
    if (!o.quiet) err << "vperf: cycles is not supported here (no hardware PMU); sampling cpu-clock instead, as perf does\n";
    session = perf::SamplingSession::open(opener, sampling_events(chosen, o, cg, system_wide, on_exec), target, o.mmap_pages, retry);
  }
  if (!session) throw UserError(session.error().describe(), open_hint(session.error().errno_value));
  if (!o.quiet)
    for (const std::string& message : fallback_messages) err << "vperf: warning: " << message << '\n';
  if (!o.filter.empty()) {
    // perf applies --filter to the event named just before it; vperf's single --filter goes
    // to the last event, which must be a tracepoint.
    size_t last = chosen.size() - 1;
    if (chosen[last].type != PERF_TYPE_TRACEPOINT)
      throw usage_error("--filter applies to a tracepoint, and " + session->events()[last].name + " is not one",
                        "e.g. -e sched:sched_switch --filter 'prev_pid == 0'");
    set_tracepoint_filter(*session, last, o.filter);
  }
  for (const auto& [name, filter] : o.tracepoint_filters) {
    std::optional<size_t> index = tracepoint_index(chosen, name);
    if (!index) throw usage_error("a filter names the tracepoint " + name + ", which is not recorded", "record " + name + " too");
    set_tracepoint_filter(*session, *index, filter);
  }

  std::vector<data::EventAttrEntry> attrs;
  for (size_t i = 0; i < session->events().size(); ++i)
    attrs.push_back({session->events()[i].attr, session->events()[i].name, session->ids()[i]});
  const bool to_pipe = o.output == "-";
  // Whatever is at the path, a symlink too, moves aside to .old (as perf does); the new file is
  // created without following links.
  if (!to_pipe && std::filesystem::symlink_status(o.output).type() != std::filesystem::file_type::not_found) {
    std::error_code ec;
    std::filesystem::rename(o.output, o.output + ".old", ec);
    if (ec) throw UserError("cannot rename " + o.output + " to " + o.output + ".old: " + ec.message(), "check the directory's permissions");
  }
  Result<data::PerfDataWriter> writer =
      to_pipe ? data::PerfDataWriter::create_pipe(STDOUT_FILENO, attrs) : data::PerfDataWriter::create_file(o.output, attrs);
  if (!writer) throw UserError("cannot write " + o.output + ": " + writer.error().describe(), "check the directory exists and is writable");

  // Tracepoint samples are decoded with the formats perf stores beside them.
  std::optional<std::vector<uint8_t>> tracing;
  std::vector<tracing::TracepointName> tracepoints;
  for (const events::ResolvedEvent& e : chosen)
    if (e.type == PERF_TYPE_TRACEPOINT) {
      size_t colon = e.name.find(':');
      tracepoints.push_back({e.name.substr(0, colon), e.name.substr(colon + 1)});
    }
  if (!tracepoints.empty()) {
    Result<std::vector<uint8_t>> bytes = tracing::build_local_tracing_data(tracepoints);
    if (!bytes) throw UserError("cannot save the tracepoint formats: " + bytes.error().describe(), "mount tracefs at /sys/kernel/tracing");
    tracing = std::move(bytes).value();
    if (to_pipe) write_all(writer.value(), {tracing::tracing_data_record(*tracing)});
  }

  size_t trailer = events::sample_id_trailer_size(attrs.front().attr.sample_type);
  Result<std::vector<perf::RecordBytes>> kernel_maps = perf::synthesize_kernel_maps(trailer);
  if (kernel_maps) write_all(writer.value(), *kernel_maps);
  if (o.scope.guest) write_all(writer.value(), guest_kernel_maps(o.guests, trailer));  // as perf kvm: not for --no-guest
  std::vector<pid_t> existing = system_wide ? all_processes() : std::vector<pid_t>{};
  if (!o.pids.empty()) existing = parse_pid_list(o.pids, "-p");
  if (!o.tids.empty()) existing = parse_pid_list(o.tids, "-t");
  for (pid_t pid : existing)
    if (Result<std::vector<perf::RecordBytes>> records = perf::synthesize_process(pid, trailer); records)
      write_all(writer.value(), *records);

  Recorder recorder(session.value(), writer.value());
  if (Result<bool> ok = session->enable(); !ok) throw UserError("cannot start sampling: " + ok.error().describe(), "");
  if (workload)
    if (Result<bool> ok = workload->start(); !ok) throw UserError(ok.error().describe(), "check the command name and your PATH");

  std::optional<perf::WorkloadExit> exit;
  bool stopped_by_signal = false;
  for (;;) {
    Result<bool> woke = session->wait(milliseconds(100), signals->fd());
    if (!woke) throw UserError(woke.error().describe(), "");
    if (*woke) ++recorder.tally.wakeups;  // perf counts the times a ring woke it
    recorder.drain();
    if (workload) {
      auto done = workload->wait_for(milliseconds(0), nullptr);
      if (!done) throw UserError("cannot wait for the command: " + done.error().describe(), "");
      if (*done) {
        exit = **done;
        break;
      }
      // As perf record: a stop signal ends the recording, and the command gets SIGTERM below.
      // Forwarding the signal is not enough: a command started in the background (`vperf
      // record CMD &`) inherits SIGINT ignored from the shell and would run to its end.
      if (!signals->take().empty()) {
        stopped_by_signal = true;
        break;
      }
      // Timing -p/-t tasks that have all ended (the VM was shut down): the command goes too.
      if (!tasks.threads.empty() && std::none_of(tasks.threads.begin(), tasks.threads.end(), task_alive)) {
        workload->terminate(SIGTERM);
        if (auto ended = workload->wait_for(std::nullopt, nullptr); ended && *ended) exit = **ended;
        break;
      }
    } else if (!signals->take().empty() ||
               (!tasks.threads.empty() && std::none_of(tasks.threads.begin(), tasks.threads.end(), task_alive))) {
      break;
    }
  }
  (void)session->disable();
  recorder.drain();
  if (stopped_by_signal) {
    workload->terminate(SIGTERM);
    if (auto ended = workload->wait_for(std::nullopt, nullptr); ended && *ended) exit = **ended;
  }
  if (Result<bool> ok = writer->flush_round(); !ok)
    throw UserError("cannot write the samples: " + ok.error().describe(), "check the disk space");

  std::vector<std::string> cmdline = {"vperf", "record"};
  cmdline.insert(cmdline.end(), o.command.begin(), o.command.end());
  data::HeaderFeatures features = data::this_machine_features(cmdline);
  // perf counts what it processed while listing build-ids; a pipe is not read back, so there
  // the count is of the records vperf drained.
  uint64_t processed = recorder.tally.records;
  if (!to_pipe)
    if (std::optional<RecordedBuildIds> ids = read_back_build_ids(o.output, err, o.quiet)) {
      features.build_ids = std::move(ids->entries);
      processed = ids->stats.records;
    }
  if (tracing && !to_pipe) features.other.push_back({kFeatureTracingData, *tracing});
  if (Result<bool> ok = writer->finish(features); !ok)
    throw UserError("cannot finish " + o.output + ": " + ok.error().describe(), "check the disk space");

  if (!o.quiet) {
    err << "[ vperf record: Woken up " << recorder.tally.wakeups << " times to write data ]\n";
    if (recorder.tally.lost_chunks)
      err << "vperf: warning: Processed " << processed << " events and lost " << recorder.tally.lost_chunks
          << " chunks! Check IO/CPU overload: " << recorder.tally.lost
          << " records were dropped (hint: use a larger -m or a lower -F)\n";
    char line[256];
    std::snprintf(line, sizeof line, "[ vperf record: Captured and wrote %.3f MB %s (%llu samples) ]\n",
                  static_cast<double>(writer->data_bytes()) / (1024.0 * 1024.0), to_pipe ? "(pipe)" : o.output.c_str(),
                  static_cast<unsigned long long>(recorder.tally.samples));
    err << line;
  }
  if (exit && exit->signaled) err << o.command.front() << ": " << ::strsignal(exit->code) << '\n';
  return exit ? exit->shell_status() : 0;
}

void add_record_command(CLI::App& app, Invocation& inv, std::shared_ptr<const KvmOptions> kvm) {
  auto options = std::make_shared<RecordOptions>();
  CLI::App* sub = app.add_subcommand("record", "Sample a command, CPUs or tasks into perf.data (perf's format)");
  sub->add_option("-e,--event", options->events, "Events to sample (default cycles; cpu-clock where there is no PMU)")
      ->allow_extra_args(false);
  sub->add_option("-F,--freq", options->frequency, "Samples per second (default 4000)")->check(whole_number_in(1, 10000000));
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
  if (kvm) {
    sub->add_option("--qmp", monitor->qmp, "Sample every vCPU through this QMP socket (no host PMU needed)")->check(non_empty());
    sub->add_option("--qga", monitor->qga, "With --qmp: fetch the guest's kallsyms and modules through its agent's socket")
        ->check(non_empty());
    sub->add_option("--duration", monitor->duration_seconds, "With --qmp/--domain: sample for this many seconds")
        ->check(number_in(0.001, 366 * 24 * 3600));
    sub->add_option("--domain", monitor->domain,
                    "Sample every vCPU of this libvirt domain (its QEMU monitor and agent; with --qmp, its agent and pid only)")
        ->check(non_empty());
    add_connect_options(*sub, "--connect", monitor->uri, monitor->allow_unsafe_uri, "With --domain: ");
    sub->add_flag("--pause", monitor->pause,
                  "With --qmp/--domain: stop the VM during each tick, so registers and -g stacks belong to one instant");
  }
  sub->prefix_command();
  sub->footer("COMMAND: the program to record and its arguments, e.g. vperf record -g -- ./prog\n");
  sub->callback([sub, options, monitor, kvm, &inv] {
    options->command = command_words(*sub, inv);
    const bool output_given = sub->count("--output") > 0;
    if (!monitor->qga.empty() && !monitor->domain.empty())
      throw usage_error("--qga and --domain both name the guest agent", "libvirt reaches a domain's agent by itself: drop --qga");
    if (!monitor->qmp.empty() || !monitor->domain.empty()) {
      inv.action = [options, monitor, kvm, output_given, &inv] {
        monitor->output = output_given ? options->output : kvm->data_file();
        monitor->frequency = static_cast<double>(options->frequency.value_or(1000));
        monitor->quiet = options->quiet;
        monitor->command = options->command;
        monitor->guests = kvm->guests;
        monitor->call_graph = options->call_graph_fp || !options->call_graph.empty();
        if (!options->call_graph.empty()) {
          monitor->stack_method = guest::parse_stack_method(options->call_graph);
          if (!monitor->stack_method)
            throw usage_error("bad --call-graph '" + options->call_graph + "' for guest kernel stacks",
                              "use orc, fp or scan with --qmp/--domain (or -g for the best the guest allows)");
        }
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
