#include "session/ftrace_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "core/cpu_set.h"
#include "core/files.h"
#include "core/private_files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"
#include "probes/inline_probes.h"
#include "session/run_loop.h"
#include "session/system_tasks.h"
#include "tracing/trace_dat.h"
#include "tracing/trace_dat_capture.h"
#include "tracing/trace_text.h"
#include "tracing/tracing_data.h"

namespace vperf::session {

namespace {

using tracing::FtraceBuffer;
using tracing::Tracefs;

Result<Tracefs> open_tracefs() {
  VPERF_TRY(Tracefs tracefs, Tracefs::open_mounted());
  VPERF_TRY(tracing::require_tracefs_access(tracefs, "vperf ftrace"));
  // What killed vperf runs left: their instances, then their inline probes (an instance's
  // enabled event keeps a probe in use).
  tracing::remove_leftover_instances(tracefs);
  probes::remove_leftover_inline_probes(tracefs);
  return tracefs;
}

// The CPUs a tracing_cpumask text ("3", "1,00000000": hex, 32-bit groups, highest first) names;
// nullopt when it is not such a mask.
std::optional<std::vector<int>> cpus_of_mask(std::string_view mask) {
  std::vector<int> cpus;
  int bit = 0;
  bool any_digit = false;
  for (size_t i = mask.size(); i-- > 0;) {
    const char c = mask[i];
    if (c == ',') continue;
    const int value = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                      : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                                                      : -1;
    if (value < 0 || bit > (1 << 16)) return std::nullopt;
    any_digit = true;
    for (int k = 0; k < 4; ++k, ++bit)
      if (value & (1 << k)) cpus.push_back(bit);
  }
  if (!any_digit) return std::nullopt;
  return cpus;
}

// Option values that would select nothing, refused before anything changes: the run would
// trace nothing (an empty event name, a CPU mask without an online CPU) or drop what was named
// (an empty function name, trigger or trace option), and end with exit 0 as if it had worked.
Result<void> refuse_empty_selections(const tracing::FtraceSettings& s) {
  auto blank = [](const std::string& text) { return trim(text).empty(); };
  if (std::any_of(s.events.begin(), s.events.end(), blank))
    return Error{"an empty event name selects no event", 0, "give events as -e SYSTEM:EVENT (vperf ftrace list -e lists them)"};
  for (const std::vector<std::string>* functions : {&s.function_filters, &s.function_notrace, &s.graph_functions, &s.graph_notrace})
    if (std::any_of(functions->begin(), functions->end(), blank))
      return Error{"an empty function name selects no function", 0, "give the functions by name or glob (vperf ftrace list -f lists them)"};
  if (std::any_of(s.event_triggers.begin(), s.event_triggers.end(), blank))
    return Error{"an empty --trigger does nothing", 0, "give a trigger such as stacktrace or traceoff:1, or leave --trigger out"};
  if (std::any_of(s.options.begin(), s.options.end(), blank))
    return Error{"an empty trace option names no option", 0, "give an option by name (vperf ftrace list -o lists them)"};
  if (!s.cpumask.empty()) {
    const std::optional<std::vector<int>> named = cpus_of_mask(s.cpumask);
    if (!named) return Error{"'" + s.cpumask + "' is not a CPU mask", 0, "give the CPUs as a hex mask (-M 3: CPUs 0 and 1)"};
    VPERF_TRY(std::vector<int> online, online_cpus());
    if (std::none_of(named->begin(), named->end(), [&](int cpu) { return std::binary_search(online.begin(), online.end(), cpu); }))
      return Error{"the CPU mask " + s.cpumask + " selects no online CPU (online: " + format_cpu_list(online) + ")", 0,
                   "name at least one online CPU"};
  }
  return {};
}

// -p/-P PIDs that name no task: the run would trace nothing and end at once.
Result<void> refuse_missing_tasks(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids)
    if (::kill(pid, 0) != 0 && errno == ESRCH)
      return Error{"no task has the pid " + std::to_string(pid), ESRCH, "give the pid of a running task (ps -eL lists them)"};
  return {};
}

// Everything a live or recorded run holds, in the order it must go: the buffer before the
// inline probes its events use, the workload last of all (its destructor kills a child that
// is still running when an error ends the run).
struct PreparedRun {
  // Installed before anything else: a ^C while the instance is being set up must end the run
  // through its clean-up, not kill vperf with the instance half made.
  std::optional<perf::StopSignals> signals;
  std::optional<perf::Workload> workload;
  probes::InlineProbes probes;
  std::optional<FtraceBuffer> buffer;
  std::vector<tracing::TracepointName> events;
  bool top_level = false;
};

Result<void> prepare(PreparedRun& run, const FtraceRunOptions& options, std::ostream& err) {
  VPERF_TRY(refuse_empty_selections(options.settings));
  if (!options.all_tasks && options.command.empty()) VPERF_TRY(refuse_missing_tasks(options.pids));
  {
    VPERF_TRY(perf::StopSignals signals, perf::StopSignals::install());
    run.signals.emplace(std::move(signals));  // StopSignals moves but does not assign
  }
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  tracing::FtraceSettings settings = options.settings;
  VPERF_TRY(settings.events, run.probes.create(settings.events));
  VPERF_TRY(tracing::TracepointCatalog catalog, tracing::TracepointCatalog::load(tracefs.root()));
  VPERF_TRY(run.events, tracing::expand_events(catalog, settings.events));
  if (!options.command.empty()) {
    VPERF_TRY(run.workload, perf::Workload::prepare(options.command));
  }

  VPERF_TRY(FtraceBuffer instance, FtraceBuffer::create_instance(tracefs, tracing::private_instance_name(::getpid())));
  run.buffer.emplace(std::move(instance));
  if (!settings.tracer.empty()) {
    const std::vector<std::string> here = tracing::available_tracers(*run.buffer);
    if (std::find(here.begin(), here.end(), settings.tracer) == here.end()) {
      FtraceBuffer top = FtraceBuffer::top_level(tracefs);
      const std::vector<std::string> top_tracers = tracing::available_tracers(top);
      if (std::find(top_tracers.begin(), top_tracers.end(), settings.tracer) != top_tracers.end()) {
        VPERF_TRY(run.buffer->release());
        run.buffer.reset();
        run.buffer.emplace(std::move(top));
        run.top_level = true;
        err << "vperf ftrace: this kernel runs the '" << settings.tracer
            << "' tracer only in the top-level buffer; its settings there are restored when the run ends\n";
      }
    }
  }
  if (options.all_tasks)
    settings.pids.clear();
  else if (run.workload)
    settings.pids = {run.workload->pid()};
  else if (!options.pids.empty())
    settings.pids = options.pids;
  return tracing::apply_settings(*run.buffer, settings, run.events);
}

// Starts tracing and the workload: tracing first (the workload's first event must land), or,
// with a delay, the workload alone: wait_for_end starts tracing that long after, in its loop,
// so that a stop signal during the delay ends the run at once.
Result<void> start(PreparedRun& run, const FtraceRunOptions& options) {
  if (!options.delay) VPERF_TRY(tracing::start_tracing(*run.buffer));
  if (run.workload) VPERF_TRY(run.workload->start());
  return {};
}

// Runs the loop until the workload ends, a stop signal comes (no workload), the duration
// passes, or a callback returns false; `on_tick` runs every `tick` (record drains its buffers
// there).
struct WatchedFd {
  int fd = -1;
  std::function<bool()> on_readable;
};

Result<int> wait_for_end(PreparedRun& run, const FtraceRunOptions& options, std::optional<std::chrono::nanoseconds> tick,
                         const std::function<bool()>& on_tick, const std::vector<WatchedFd>& watched) {
  const perf::StopSignals& signals = *run.signals;
  SystemRunClock clock;
  RunLoop loop(clock);
  int status = 0;
  for (const WatchedFd& w : watched)
    loop.watch_fd(w.fd, [&w](short revents) {
      if (!w.on_readable()) return Next::stop;
      return (revents & (POLLERR | POLLNVAL)) ? Next::unwatch : Next::keep_going;
    });
  if (run.workload) {
    loop.watch_workload(*run.workload, [&](const perf::WorkloadExit& exit) {
      status = exit.shell_status();
      return Next::stop;
    });
    loop.watch_signals(signals, [&](const std::vector<perf::StopSignal>& taken) {
      run.workload->forward(taken);
      return Next::keep_going;  // the workload's end ends the run
    });
  } else {
    loop.watch_signals(signals, [](const std::vector<perf::StopSignal>&) { return Next::stop; });
    // -p/-P PIDs: the run ends when they all have (as perf stat -p).
    if (!options.pids.empty() && !options.all_tasks)
      loop.watch_tasks(options.pids, std::chrono::milliseconds(100), [] { return Next::stop; });
  }
  Result<void> delayed_start;
  if (options.delay)
    loop.at(loop.now() + std::chrono::duration_cast<std::chrono::nanoseconds>(*options.delay), [&] {
      delayed_start = tracing::start_tracing(*run.buffer);
      return delayed_start ? Next::keep_going : Next::stop;
    });
  if (options.duration)
    loop.at(loop.now() + std::chrono::duration_cast<std::chrono::nanoseconds>(*options.duration), [] { return Next::stop; });
  if (tick)
    loop.every(loop.now() + *tick, *tick, [&] { return on_tick() ? Next::keep_going : Next::stop; });
  VPERF_TRY(loop.run());
  if (!delayed_start) return delayed_start.error();
  return status;
}

std::vector<uint64_t> lost_events(const FtraceBuffer& buffer, const std::vector<int>& cpus) {
  std::vector<uint64_t> lost;
  for (int cpu : cpus) lost.push_back(tracing::events_lost_in_cpu_stats(buffer.read("per_cpu/cpu" + std::to_string(cpu) + "/stats").value_or("")));
  return lost;
}

std::vector<int> buffer_cpus(const FtraceBuffer& buffer) {
  std::vector<int> cpus;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(buffer.file("per_cpu"), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("cpu"))
      if (std::optional<uint64_t> n = parse_u64(std::string_view(name).substr(3))) cpus.push_back(static_cast<int>(*n));
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

void warn_about_loss(const std::vector<int>& cpus, const std::vector<uint64_t>& lost, std::ostream& err) {
  for (size_t i = 0; i < cpus.size() && i < lost.size(); ++i)
    if (lost[i] > 0)
      err << "vperf ftrace: warning: CPU " << cpus[i] << " lost " << lost[i]
          << " events (its ring buffer overflowed): enlarge it with -m/-b KB, or trace fewer events\n";
}

// Reads what a non-blocking fd has now; false at its end or on an error other than EAGAIN.
bool read_available(int fd, const std::function<void(std::string_view)>& sink) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      sink(std::string_view(buffer, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

// Room for the saved comms: saved_cmdlines_size entries of "PID COMM\n" (7 + 1 + 15 + 1 bytes
// at most), with some to spare.
size_t cmdlines_room(const Tracefs& tracefs) {
  const uint64_t entries = parse_u64(trim(tracefs.read("saved_cmdlines_size").value_or(""))).value_or(128);
  return static_cast<size_t>(std::clamp<uint64_t>(entries, 128, 1u << 20) * 32);
}

// The ring buffer's per_cpu/cpuN/stats text, as trace-cmd keeps it in the file.
std::string cpu_stats(const tracing::FtraceBuffer& buffer, int cpu) {
  return buffer.read("per_cpu/cpu" + std::to_string(cpu) + "/stats").value_or("");
}

std::string uname_text() {
  utsname u{};
  if (::uname(&u) != 0) return "";
  return std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.machine;
}

}  // namespace

Result<FtraceRunSummary> run_ftrace_live(const FtraceRunOptions& options, const std::function<void(std::string_view)>& out,
                                         std::ostream& err) {
  PreparedRun run;
  VPERF_TRY(prepare(run, options, err));
  const std::filesystem::path pipe_path = run.buffer->file("trace_pipe");
  ScopedFd pipe(::open(pipe_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!pipe.valid()) return Error::from_errno("cannot open " + pipe_path.string());
  // A task traced before its first switch-out has no saved comm yet, and the kernel prints it
  // "<...>": named here from /proc while it lives, and the command's own task from its exec
  // (the kernel's comm: the program's file name, 15 characters at most).
  std::map<int, std::string> comms;
  if (run.workload) comms[run.workload->pid()] = std::filesystem::path(options.command.front()).filename().string().substr(0, 15);
  auto comm_of = [&comms](int pid) -> std::optional<std::string> {
    if (auto it = comms.find(pid); it != comms.end()) return it->second;
    std::string text = session::task_comm(pid);
    if (text.empty()) return std::nullopt;
    return comms[pid] = text;
  };
  tracing::TraceLineSplitter lines([&](std::string_view line) { out(tracing::with_task_name(line, comm_of)); });
  auto pump = [&] {
    read_available(pipe.get(), [&](std::string_view text) { lines.feed(text); });
    return true;
  };
  VPERF_TRY(start(run, options));
  FtraceRunSummary summary;
  summary.top_level = run.top_level;
  VPERF_TRY(summary.exit_status, wait_for_end(run, options, std::chrono::milliseconds(200), pump, {{pipe.get(), pump}}));
  VPERF_TRY(tracing::stop_tracing(*run.buffer));
  pump();
  lines.finish();
  const std::vector<int> cpus = buffer_cpus(*run.buffer);
  summary.lost_by_cpu = lost_events(*run.buffer, cpus);
  warn_about_loss(cpus, summary.lost_by_cpu, err);
  pipe.reset();  // an open trace_pipe keeps the instance busy
  VPERF_TRY(run.buffer->release());
  return summary;
}

Result<FtraceRunSummary> run_ftrace_latency(const FtraceRunOptions& options, bool nanoseconds, bool bpf_asked, std::ostream& out,
                                            std::ostream& err) {
  if (options.settings.function_filters.empty())
    return Error{"vperf ftrace latency needs the function to time", 0, "give it with -T FUNC"};
  VPERF_TRY(refuse_empty_selections(options.settings));
  if (bpf_asked) err << "vperf ftrace latency: no BPF in vperf: the function_graph tracer measures the durations\n";
  FtraceRunOptions graph = options;
  graph.settings.tracer = "function_graph";
  tracing::LatencyHistogram histogram(nanoseconds);
  VPERF_TRY(FtraceRunSummary summary, run_ftrace_live(graph, [&](std::string_view line) { histogram.add_line(line); }, err));
  out << histogram.table();
  return summary;
}

namespace {

// The head of the trace.dat a run records: the buffer's page size, clock and per-CPU stats,
// room for the saved comms, and the tracing data of the run's events.
Result<tracing::TraceDatHeader> trace_dat_header(const PreparedRun& run, const FtraceRunOptions& options,
                                                 const std::vector<int>& cpu_numbers, size_t page_size) {
  tracing::TraceDatHeader header;
  header.page_size = static_cast<uint32_t>(page_size);
  header.version = options.file_version;
  header.compression = options.compression;
  header.trace_clock = run.buffer->read("trace_clock").value_or("");
  header.uname = uname_text();
  header.cpus = cpu_numbers;
  for (int cpu : cpu_numbers) header.cpu_stats.push_back(cpu_stats(*run.buffer, cpu));
  header.cmdlines_room = cmdlines_room(run.buffer->tracefs()) + (options.pids.size() + 1) * 32;
  VPERF_TRY(header.tracing_data, tracing::build_tracing_data(run.buffer->tracefs(), run.events,
                                                             tracing::TracingDataLayout{"6", true, true}));
  return header;
}

// The file is written from here on: readable at every moment (tracing/trace_dat.h), so that a
// kill or a full disk keeps what was recorded. A head that cannot be written leaves no file.
Result<tracing::TraceDatWriter> begin_trace_dat(const std::filesystem::path& output, const tracing::TraceDatHeader& header,
                                                tracing::NewTraceDat& file) {
  VPERF_TRY(file, tracing::create_trace_dat(output));
  Result<tracing::TraceDatWriter> begun = tracing::TraceDatWriter::begin(file.fd.get(), header);
  if (begun) {
    if (Result<void> named = tracing::name_trace_dat(file, output); !named) begun = named.error();
  }
  if (begun) return begun;
  if (file.named) ::unlink(output.c_str());
  if (tracing::out_of_room(begun.error()))
    return Error{"no room for even the head of " + output.string(), begun.error().errno_value, "free some space or record elsewhere with -o"};
  return begun.error();
}

// A run's trace.dat while it records: each CPU's raw pages drained into it as they come, and
// what only the end knows exactly (the saved comms, the ring buffer's stats) written as soon as
// the file has pages and then about once a second, so that a killed run's file names its tasks
// too. The kernel saves a task's comm when it is switched, which a busy task may not have been
// yet, and until then its line for the pid can be an earlier task's: the traced tasks' comms
// are read from /proc while they live and replace the kernel's lines for them. The first
// failure is kept and stops all writing.
class TraceDatRecording {
 public:
  TraceDatRecording(const PreparedRun& run, tracing::TraceDatWriter& writer, std::vector<tracing::RawCpuRecorder>& recorders,
                    std::vector<int> cpu_numbers, std::vector<pid_t> traced)
      : run_(run), writer_(writer), recorders_(recorders), cpu_numbers_(std::move(cpu_numbers)), traced_(std::move(traced)) {}

  const Result<void>& failed() const { return failed_; }

  void update_texts() {
    if (!failed_) return;
    texts_written_ = true;
    for (pid_t pid : traced_)
      if (std::string comm = session::task_comm(pid); !comm.empty()) traced_comms_[pid] = comm;
    const std::string kernels = run_.buffer->tracefs().read("saved_cmdlines").value_or("");
    if (Result<void> w = writer_.update_cmdlines(tracing::saved_cmdlines_with(kernels, traced_comms_)); !w) failed_ = w;
    for (size_t i = 0; i < cpu_numbers_.size() && failed_; ++i)
      if (Result<void> w = writer_.update_stats(i, cpu_stats(*run_.buffer, cpu_numbers_[i])); !w) failed_ = w;
  }

  // Until the file has pages, the texts are written before each drain: the drain that commits
  // the first pages then follows texts read after their events happened, so no kill leaves
  // pages whose task the file cannot name (written after the first commit, a kill between the
  // two left the workload "<...>").
  bool drain(tracing::RawCpuRecorder& r, bool final) {
    if (!failed_) return false;
    if (!texts_written_) update_texts();
    if (Result<void> d = r.drain(writer_, final); !d) failed_ = d;
    if (writer_.page_bytes(r.index()) == 0 &&
        std::none_of(recorders_.begin(), recorders_.end(), [&](const tracing::RawCpuRecorder& o) { return writer_.page_bytes(o.index()) > 0; }))
      texts_written_ = false;
    return static_cast<bool>(failed_);
  }

  // The periodic drain takes what a quiet CPU leaves below the wake-up mark.
  bool tick() {
    for (tracing::RawCpuRecorder& r : recorders_) drain(r, false);
    if (failed_) failed_ = writer_.flush();
    if (++ticks_ % 10 == 0) update_texts();
    return static_cast<bool>(failed_);
  }

  void finish() {
    for (tracing::RawCpuRecorder& r : recorders_) drain(r, false);
    for (tracing::RawCpuRecorder& r : recorders_) drain(r, true);
    update_texts();
  }

  void close() {
    Result<void> finished = writer_.finish();
    if (failed_ && !finished) failed_ = finished;
  }

 private:
  const PreparedRun& run_;
  tracing::TraceDatWriter& writer_;
  std::vector<tracing::RawCpuRecorder>& recorders_;
  std::vector<int> cpu_numbers_;
  std::vector<pid_t> traced_;
  Result<void> failed_;
  std::map<pid_t, std::string> traced_comms_;
  bool texts_written_ = false;
  int ticks_ = 0;
};

}  // namespace

Result<FtraceRunSummary> run_ftrace_record(const FtraceRunOptions& options, const std::filesystem::path& output, std::ostream& err) {
  PreparedRun run;
  VPERF_TRY(prepare(run, options, err));
  const size_t page_size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<int> cpu_numbers = buffer_cpus(*run.buffer);
  VPERF_TRY(tracing::TraceDatHeader header, trace_dat_header(run, options, cpu_numbers, page_size));
  std::vector<tracing::RawCpuRecorder> recorders;
  for (size_t i = 0; i < cpu_numbers.size(); ++i) {
    VPERF_TRY(tracing::RawCpuRecorder recorder, tracing::RawCpuRecorder::open(*run.buffer, cpu_numbers[i], i, page_size));
    recorders.push_back(std::move(recorder));
  }
  tracing::NewTraceDat file;
  VPERF_TRY(tracing::TraceDatWriter writer, begin_trace_dat(output, header, file));
  TraceDatRecording recording(run, writer, recorders, cpu_numbers, run.workload ? std::vector<pid_t>{run.workload->pid()} : options.pids);
  if (Result<void> started = start(run, options); !started) {
    ::unlink(output.c_str());  // nothing was recorded
    return started.error();
  }
  FtraceRunSummary summary;
  summary.top_level = run.top_level;
  // Each CPU's trace_pipe_raw wakes its reader when the buffer is buffer_percent full (the
  // kernel's default: half).
  std::vector<WatchedFd> watched;
  for (tracing::RawCpuRecorder& r : recorders) watched.push_back({r.raw_fd(), [&r, &recording] { return recording.drain(r, false); }});
  VPERF_TRY(summary.exit_status, wait_for_end(run, options, std::chrono::milliseconds(100), [&] { return recording.tick(); }, watched));
  VPERF_TRY(tracing::stop_tracing(*run.buffer));
  recording.finish();
  summary.lost_by_cpu = lost_events(*run.buffer, cpu_numbers);
  recording.close();
  recorders.clear();  // open trace_pipe_raw files keep the instance busy
  VPERF_TRY(run.buffer->release());
  if (const Result<void>& failed = recording.failed(); !failed) {
    if (!tracing::out_of_room(failed.error())) return failed.error();
    uint64_t kept = 0;
    for (size_t i = 0; i < cpu_numbers.size(); ++i) kept += writer.page_bytes(i);
    return Error{"the disk filled up: " + output.string() + " keeps the " + std::to_string(kept) + " bytes of whole pages recorded before it did",
                 failed.error().errno_value, "free some space or record elsewhere with -o"};
  }
  for (size_t i = 0; i < cpu_numbers.size(); ++i) {
    summary.bytes += writer.page_bytes(i);
    err << "CPU" << cpu_numbers[i] << ": " << writer.page_bytes(i) << " bytes recorded, " << summary.lost_by_cpu[i] << " events lost\n";
  }
  warn_about_loss(cpu_numbers, summary.lost_by_cpu, err);
  return summary;
}

namespace {

// Where start keeps what reset gives back: root's /run/vperf, on a tmpfs that goes at reboot, as
// does every setting it restores.
constexpr const char* kTopLevelSaved = "ftrace-top-level";
constexpr const char* kTopLevelOopsDump = "ftrace-top-level-oops-dump";

Result<PrivateDirectory> persisted_directory(CreateMissing create) { return PrivateDirectory::open("/run", "vperf", create); }

std::string top_level_hint() { return "vperf ftrace reset --instance '' gives the top level back"; }

// The oops dump as it is, once it is known that the kernel takes `instance` in it and lets
// vperf write it: the same value written back, so a refusal comes before anything changed.
Result<tracing::DumpOnOops> writable_oops_dump(const std::string& instance) {
  if (!instance.empty()) {
    struct utsname uts{};
    ::uname(&uts);
    if (!tracing::dump_on_oops_takes_instances(uts.release))
      return Error{std::string("this kernel (") + uts.release + ") dumps only the top-level buffer on an oops; instances need Linux 6.10", 0,
                   "start in the top level: vperf ftrace start --instance '' --dump-on-oops ..."};
    if (instance.find_first_of(",=") != std::string::npos)
      return Error{"the kernel cannot name the instance '" + instance + "' in ftrace_dump_on_oops (',' and '=' separate its fields)", 0,
                   "choose an --instance name without ',' or '='"};
  }
  VPERF_TRY(tracing::DumpOnOops now, tracing::read_dump_on_oops());
  VPERF_TRY(tracing::write_dump_on_oops(now));
  return now;
}

Result<void> start_top_level(const Tracefs& tracefs, const tracing::FtraceSettings& settings, const std::vector<tracing::TracepointName>& events,
                             std::optional<tracing::OopsDump> dump, std::ostream& err) {
  std::optional<tracing::DumpOnOops> oops_before;
  if (dump) {
    VPERF_TRY(oops_before, writable_oops_dump(""));
  }
  VPERF_TRY(PrivateDirectory saved_here, persisted_directory(CreateMissing::yes));
  if (saved_here.read(kTopLevelSaved))
    return Error{"vperf ftrace start holds the top-level buffer already", 0, top_level_hint() + ", then start again"};
  FtraceBuffer top = FtraceBuffer::top_level(tracefs);  // restores what it wrote on any error below
  VPERF_TRY(tracing::apply_settings(top, settings, events));
  VPERF_TRY(tracing::start_tracing(top));
  if (oops_before) {
    VPERF_TRY(tracing::write_dump_on_oops(tracing::with_oops_dump(*oops_before, "", *dump)));
    if (Result<void> kept = saved_here.replace(kTopLevelOopsDump, tracing::dump_on_oops_text(*oops_before)); !kept) {
      (void)tracing::write_dump_on_oops(*oops_before);
      return kept.error();
    }
  }
  if (Result<void> kept = saved_here.replace(kTopLevelSaved, tracing::saved_files_text(top.saved_files())); !kept) {
    if (oops_before) (void)tracing::write_dump_on_oops(*oops_before);
    (void)saved_here.remove(kTopLevelOopsDump);
    return kept.error();
  }
  top.keep();
  err << "vperf ftrace: tracing in the top-level buffer; " << top_level_hint() << " as it was\n";
  return top.release();
}

// What start --instance '' saved (in `saved_here`, /run/vperf, which may not exist); an error
// when no start holds the top level.
Result<tracing::SavedFiles> top_level_saved(const Result<PrivateDirectory>& saved_here) {
  const Error not_held{"vperf ftrace start does not hold the top-level buffer", 0, "start it first: vperf ftrace start --instance '' ..."};
  if (!saved_here) return saved_here.error().errno_value == ENOENT ? not_held : saved_here.error();
  Result<std::string> text = saved_here->read(kTopLevelSaved);
  if (!text) return text.error().errno_value == ENOENT ? not_held : text.error();
  return tracing::parse_saved_files(*text);
}

Result<void> reset_top_level(const Tracefs& tracefs) {
  Result<PrivateDirectory> saved_here = persisted_directory(CreateMissing::no);
  VPERF_TRY(tracing::SavedFiles saved, top_level_saved(saved_here));
  if (Result<std::string> oops_text = saved_here->read(kTopLevelOopsDump)) {
    VPERF_TRY(tracing::DumpOnOops now, tracing::read_dump_on_oops());
    VPERF_TRY(tracing::write_dump_on_oops(tracing::with_oops_dump(now, "", tracing::parse_dump_on_oops(*oops_text).top)));
  }
  VPERF_TRY(saved_here->remove(kTopLevelOopsDump));
  FtraceBuffer top = FtraceBuffer::top_level_restoring(tracefs, std::move(saved));
  VPERF_TRY(top.release());
  return saved_here->remove(kTopLevelSaved);
}

}  // namespace

Result<void> ftrace_start(const std::string& instance, const tracing::FtraceSettings& settings, std::optional<tracing::OopsDump> dump,
                          std::ostream& err) {
  VPERF_TRY(refuse_empty_selections(settings));
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  VPERF_TRY(tracing::TracepointCatalog catalog, tracing::TracepointCatalog::load(tracefs.root()));
  VPERF_TRY(std::vector<tracing::TracepointName> events, tracing::expand_events(catalog, settings.events));
  if (instance.empty()) return start_top_level(tracefs, settings, events, dump, err);
  std::optional<tracing::DumpOnOops> oops_before;
  if (dump) {
    VPERF_TRY(oops_before, writable_oops_dump(instance));
  }
  VPERF_TRY(FtraceBuffer buffer, FtraceBuffer::create_instance(tracefs, instance));
  VPERF_TRY(tracing::apply_settings(buffer, settings, events));
  VPERF_TRY(tracing::start_tracing(buffer));
  if (oops_before) VPERF_TRY(tracing::write_dump_on_oops(tracing::with_oops_dump(*oops_before, instance, *dump)));
  buffer.keep();  // it outlives this command, until stop/reset
  return buffer.release();
}

Result<void> ftrace_stop(const std::string& instance) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  if (instance.empty()) {
    // Only a top level that start holds: reset gives back its tracing_on with the rest.
    VPERF_TRY(top_level_saved(persisted_directory(CreateMissing::no)));
    FtraceBuffer top = FtraceBuffer::top_level(tracefs);
    VPERF_TRY(tracing::stop_tracing(top));
    top.keep();
    return top.release();
  }
  VPERF_TRY(FtraceBuffer buffer, FtraceBuffer::open_instance(tracefs, instance));
  return tracing::stop_tracing(buffer);
}

Result<std::string> ftrace_show(const std::string& instance, bool snapshot) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  if (instance.empty()) return tracefs.read(snapshot ? "snapshot" : "trace", size_t{1} << 30);
  VPERF_TRY(FtraceBuffer buffer, FtraceBuffer::open_instance(tracefs, instance));
  if (snapshot && !buffer.has("snapshot"))
    return Error{"this kernel has no snapshot buffer", ENOENT, "snapshots need CONFIG_TRACER_SNAPSHOT=y"};
  return read_file(buffer.file(snapshot ? "snapshot" : "trace"), size_t{1} << 30);
}

Result<void> ftrace_take_snapshot(const std::string& instance) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  VPERF_TRY(FtraceBuffer buffer, FtraceBuffer::open_instance(tracefs, instance));
  if (!buffer.has("snapshot")) return Error{"this kernel has no snapshot buffer", ENOENT, "snapshots need CONFIG_TRACER_SNAPSHOT=y"};
  return buffer.write("snapshot", "1");
}

Result<void> ftrace_pipe(const std::string& instance, const std::function<void(std::string_view)>& out) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  std::filesystem::path path = tracefs.file("trace_pipe");
  std::optional<FtraceBuffer> buffer;
  if (!instance.empty()) {
    VPERF_TRY(FtraceBuffer opened, FtraceBuffer::open_instance(tracefs, instance));
    path = opened.file("trace_pipe");
    buffer.emplace(std::move(opened));
  }
  ScopedFd pipe(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!pipe.valid()) return Error::from_errno("cannot open " + path.string());
  VPERF_TRY(perf::StopSignals signals, perf::StopSignals::install());
  tracing::TraceLineSplitter lines(out);
  SystemRunClock clock;
  RunLoop loop(clock);
  loop.watch_fd(pipe.get(), [&](short) {
    read_available(pipe.get(), [&](std::string_view text) { lines.feed(text); });
    return Next::keep_going;
  });
  loop.watch_signals(signals, [](const std::vector<perf::StopSignal>&) { return Next::stop; });
  VPERF_TRY(loop.run());
  lines.finish();
  return {};
}

Result<void> ftrace_marker(const std::string& instance, const std::string& text) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  if (instance.empty()) {
    FtraceBuffer top = FtraceBuffer::top_level(tracefs);
    return top.write("trace_marker", text);
  }
  VPERF_TRY(FtraceBuffer buffer, FtraceBuffer::open_instance(tracefs, instance));
  // The kernel refuses a marker with EBADF while the buffer is off; say why.
  if (std::string(trim(buffer.read("tracing_on").value_or("1"))) == "0")
    return Error{"tracing is off in the instance '" + instance + "': the marker would not be kept", 0,
                 "start it again: vperf ftrace start --instance " + instance + " ..."};
  return buffer.write("trace_marker", text);
}

Result<std::vector<std::string>> ftrace_reset(const std::string& instance) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  std::vector<std::string> removed = tracing::remove_leftover_instances(tracefs);
  if (instance.empty()) {
    VPERF_TRY(reset_top_level(tracefs));
    return removed;
  }
  VPERF_TRY(tracing::remove_instance(tracefs, instance));  // never "..": a name inside instances/ only
  removed.push_back(instance);
  // Its part of the oops dump goes with it (6.10+ only names instances there).
  VPERF_TRY(tracing::DumpOnOops oops, tracing::read_dump_on_oops());
  const tracing::DumpOnOops without = tracing::with_oops_dump(oops, instance, tracing::OopsDump::off);
  if (without != oops) VPERF_TRY(tracing::write_dump_on_oops(without));
  return removed;
}

Result<std::vector<std::string>> ftrace_list(FtraceListing what, const std::string& filter) {
  VPERF_TRY(Tracefs tracefs, open_tracefs());
  FtraceBuffer top = FtraceBuffer::top_level(tracefs);
  std::vector<std::string> names;
  auto keep = [&](std::string_view name) { return filter.empty() || glob_match(filter, name); };
  switch (what) {
    case FtraceListing::tracers:
      for (const std::string& t : tracing::available_tracers(top))
        if (keep(t)) names.push_back(t);
      break;
    case FtraceListing::events: {
      VPERF_TRY(tracing::TracepointCatalog catalog, tracing::TracepointCatalog::load(tracefs.root()));
      for (const tracing::Tracepoint& tp : catalog.all())
        if (keep(tp.name())) names.push_back(tp.name());
      break;
    }
    case FtraceListing::options: {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(tracefs.file("options"), ec)) {
        const std::string name = entry.path().filename().string();
        const bool on = trim(read_file(entry.path()).value_or("0")) == "1";
        if (keep(name)) names.push_back(on ? name : "no" + name);
      }
      std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return (a.starts_with("no") ? a.substr(2) : a) < (b.starts_with("no") ? b.substr(2) : b);
      });
      break;
    }
    case FtraceListing::functions: {
      if (std::optional<Error> refused = tracing::function_tracing_refused(top)) return *refused;
      VPERF_TRY(std::string text, tracefs.read("available_filter_functions", size_t{256} << 20));
      for (std::string_view line : split(text, '\n')) {
        const std::string_view name = line.substr(0, line.find_first_of(" \t"));
        if (!name.empty() && keep(name)) names.emplace_back(name);
      }
      break;
    }
  }
  return names;
}

Result<void> ftrace_report(const std::filesystem::path& input, const std::function<void(std::string_view)>& out, std::ostream& err) {
  VPERF_TRY(tracing::TraceDat file, tracing::TraceDat::open(input));
  VPERF_TRY(tracing::TraceReportSummary summary, tracing::print_trace_report(file, out));
  for (const std::string& line : tracing::describe_losses(file, summary)) err << "vperf ftrace report: " << line << "\n";
  const tracing::TraceShortcomings missing = tracing::shortcomings(file, summary);
  for (const std::string& line : missing.warnings) err << "vperf ftrace report: warning: " << line << "\n";
  if (missing.incomplete)
    return Error{input.string() + ": the report is incomplete (see the warnings above)", 0, "the file is damaged or was not written by a kernel; record it again"};
  return {};
}

}  // namespace vperf::session
