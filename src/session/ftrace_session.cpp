#include "session/ftrace_session.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "core/files.h"
#include "core/private_files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"
#include "session/inline_probes.h"
#include "session/run_loop.h"
#include "tracing/trace_dat.h"
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
  remove_leftover_inline_probes(tracefs);
  return tracefs;
}

// Everything a live or recorded run holds, in the order it must go: the buffer before the
// inline probes its events use, the workload last of all (its destructor kills a child that
// is still running when an error ends the run).
struct PreparedRun {
  // Installed before anything else: a ^C while the instance is being set up must end the run
  // through its clean-up, not kill vperf with the instance half made.
  std::optional<perf::StopSignals> signals;
  std::optional<perf::Workload> workload;
  InlineProbes probes;
  std::optional<FtraceBuffer> buffer;
  std::vector<tracing::TracepointName> events;
  bool top_level = false;
};

Result<void> prepare(PreparedRun& run, const FtraceRunOptions& options, std::ostream& err) {
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
// with a delay, the workload first and tracing that long after.
Result<void> start(PreparedRun& run, const FtraceRunOptions& options) {
  if (!options.delay) VPERF_TRY(tracing::start_tracing(*run.buffer));
  if (run.workload) VPERF_TRY(run.workload->start());
  if (options.delay) {
    ::usleep(static_cast<useconds_t>(options.delay->count() * 1000));
    VPERF_TRY(tracing::start_tracing(*run.buffer));
  }
  return {};
}

// Runs the loop until the workload ends, a stop signal comes (no workload), or the duration
// passes; `on_tick` runs every `tick` (record drains its buffers there).
struct WatchedFd {
  int fd = -1;
  std::function<void()> on_readable;
};

Result<int> wait_for_end(PreparedRun& run, const FtraceRunOptions& options, std::optional<std::chrono::nanoseconds> tick,
                         const std::function<void()>& on_tick, const std::vector<WatchedFd>& watched) {
  const perf::StopSignals& signals = *run.signals;
  SystemRunClock clock;
  RunLoop loop(clock);
  int status = 0;
  for (const WatchedFd& w : watched)
    loop.watch_fd(w.fd, [&w](short revents) {
      w.on_readable();
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
  if (options.duration)
    loop.at(loop.now() + std::chrono::duration_cast<std::chrono::nanoseconds>(*options.duration), [] { return Next::stop; });
  if (tick)
    loop.every(loop.now() + *tick, *tick, [&] {
      on_tick();
      return Next::keep_going;
    });
  VPERF_TRY(loop.run());
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

// One CPU's trace_pipe_raw drained into a temporary file: whole pages spliced while the run
// goes (no copy through vperf), and at the end read() for the last, partly filled page, which
// splice leaves in the kernel.
class RawCpuRecorder {
 public:
  static Result<RawCpuRecorder> open(const FtraceBuffer& buffer, int cpu, const std::filesystem::path& temp_dir, size_t page_size) {
    RawCpuRecorder r;
    r.cpu_ = cpu;
    r.page_size_ = page_size;
    const std::filesystem::path raw = buffer.file("per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw");
    r.raw_ = ScopedFd(::open(raw.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!r.raw_.valid()) return Error::from_errno("cannot open " + raw.string());
    r.file_ = ScopedFd(::open(temp_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!r.file_.valid()) return Error::from_errno("cannot create a temporary file in " + temp_dir.string());
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) == 0) {
      r.pipe_read_ = ScopedFd(ends[0]);
      r.pipe_write_ = ScopedFd(ends[1]);
    }
    return r;
  }

  // Moves the whole pages there are now; `final` also takes the partly filled last page.
  Result<void> drain(bool final) {
    if (pipe_read_.valid() && !final) {
      for (;;) {
        const ssize_t in = ::splice(raw_.get(), nullptr, pipe_write_.get(), nullptr, page_size_ * 16, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (in < 0 && errno == EINTR) continue;
        if (in < 0 && errno == EINVAL) {
          pipe_read_.reset();  // no splice here: read() below
          break;
        }
        if (in <= 0) return {};
        size_t left = static_cast<size_t>(in);
        while (left > 0) {
          const ssize_t out = ::splice(pipe_read_.get(), nullptr, file_.get(), nullptr, left, SPLICE_F_MOVE);
          if (out < 0 && errno == EINTR) continue;
          if (out <= 0) return Error::from_errno("writing CPU " + std::to_string(cpu_) + "'s pages");
          left -= static_cast<size_t>(out);
          bytes_ += static_cast<uint64_t>(out);
        }
      }
    }
    std::vector<uint8_t> page(page_size_);
    for (;;) {
      const ssize_t n = ::read(raw_.get(), page.data(), page.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return {};
      // A read gives one page, padded to the page size (a short read is padded here).
      std::fill(page.begin() + n, page.end(), 0);
      if (::write(file_.get(), page.data(), page.size()) != static_cast<ssize_t>(page.size()))
        return Error::from_errno("writing CPU " + std::to_string(cpu_) + "'s pages");
      bytes_ += page.size();
    }
  }

  int cpu() const { return cpu_; }
  int raw_fd() const { return raw_.get(); }
  int data_fd() const { return file_.get(); }
  uint64_t bytes() const { return bytes_; }

 private:
  RawCpuRecorder() = default;
  int cpu_ = 0;
  size_t page_size_ = 4096;
  ScopedFd raw_, file_, pipe_read_, pipe_write_;
  uint64_t bytes_ = 0;
};

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
    Result<std::string> text = read_file("/proc/" + std::to_string(pid) + "/comm");
    if (!text || text->empty()) return std::nullopt;
    return comms[pid] = text->substr(0, text->find('\n'));
  };
  tracing::TraceLineSplitter lines([&](std::string_view line) { out(tracing::with_task_name(line, comm_of)); });
  auto pump = [&] { read_available(pipe.get(), [&](std::string_view text) { lines.feed(text); }); };
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
  if (bpf_asked) err << "vperf ftrace latency: no BPF in vperf: the function_graph tracer measures the durations\n";
  FtraceRunOptions graph = options;
  graph.settings.tracer = "function_graph";
  tracing::LatencyHistogram histogram(nanoseconds);
  VPERF_TRY(FtraceRunSummary summary, run_ftrace_live(graph, [&](std::string_view line) { histogram.add_line(line); }, err));
  out << histogram.table();
  return summary;
}

Result<FtraceRunSummary> run_ftrace_record(const FtraceRunOptions& options, const std::filesystem::path& output, std::ostream& err) {
  PreparedRun run;
  VPERF_TRY(prepare(run, options, err));
  const size_t page_size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::filesystem::path temp_dir = output.parent_path().empty() ? std::filesystem::path(".") : output.parent_path();
  std::vector<RawCpuRecorder> recorders;
  for (int cpu : buffer_cpus(*run.buffer)) {
    Result<RawCpuRecorder> recorder = RawCpuRecorder::open(*run.buffer, cpu, temp_dir, page_size);
    if (!recorder) return recorder.error();
    recorders.push_back(std::move(recorder).value());
  }
  Result<void> drained;
  auto drain_all = [&] {
    for (RawCpuRecorder& r : recorders)
      if (Result<void> d = r.drain(false); !d && drained) drained = d;
  };
  VPERF_TRY(start(run, options));
  FtraceRunSummary summary;
  summary.top_level = run.top_level;
  // Each CPU's trace_pipe_raw wakes its reader when the buffer is buffer_percent full (the
  // kernel's default: half); the periodic drain takes what a quiet CPU leaves below that.
  std::vector<WatchedFd> watched;
  for (RawCpuRecorder& r : recorders)
    watched.push_back({r.raw_fd(), [&r, &drained] {
                         if (Result<void> d = r.drain(false); !d && drained) drained = d;
                       }});
  VPERF_TRY(summary.exit_status, wait_for_end(run, options, std::chrono::milliseconds(100), drain_all, watched));
  VPERF_TRY(tracing::stop_tracing(*run.buffer));
  drain_all();
  if (!drained) return drained.error();

  tracing::TraceDatHeader header;
  header.page_size = static_cast<uint32_t>(page_size);
  header.version = options.file_version;
  header.compression = options.compression;
  std::vector<tracing::TraceDatCpu> cpus;
  std::vector<int> cpu_numbers;
  for (RawCpuRecorder& r : recorders) {
    VPERF_TRY(r.drain(true));
    tracing::TraceDatCpu cpu;
    cpu.cpu = r.cpu();
    cpu.data_fd = r.data_fd();
    cpu.size = r.bytes();
    cpu.stats = run.buffer->read("per_cpu/cpu" + std::to_string(r.cpu()) + "/stats").value_or("");
    cpus.push_back(std::move(cpu));
    cpu_numbers.push_back(r.cpu());
    summary.bytes += r.bytes();
  }
  summary.lost_by_cpu = lost_events(*run.buffer, cpu_numbers);
  header.trace_clock = run.buffer->read("trace_clock").value_or("");
  header.uname = uname_text();
  VPERF_TRY(header.tracing_data, tracing::build_tracing_data(run.buffer->tracefs(), run.events,
                                                             tracing::TracingDataLayout{"6", true, true}));
  VPERF_TRY(ScopedFd file, create_regular_file(output, 0644));
  VPERF_TRY(tracing::write_trace_dat(file.get(), header, cpus));
  for (size_t i = 0; i < cpu_numbers.size(); ++i)
    err << "CPU" << cpu_numbers[i] << ": " << cpus[i].size << " bytes recorded, " << summary.lost_by_cpu[i] << " events lost\n";
  warn_about_loss(cpu_numbers, summary.lost_by_cpu, err);
  recorders.clear();  // open trace_pipe_raw files keep the instance busy
  VPERF_TRY(run.buffer->release());
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
  if (instance.empty()) return read_file(tracefs.file(snapshot ? "snapshot" : "trace"), size_t{1} << 30);
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
      VPERF_TRY(std::string text, read_file(tracefs.file("available_filter_functions"), size_t{256} << 20));
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
