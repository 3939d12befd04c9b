#include "session/record_session.h"

#include <linux/perf_event.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "core/cpu_set.h"
#include "core/files.h"
#include "core/strings.h"
#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "data/synthesize.h"
#include "tracing/tracefs_events.h"
#include "tracing/tracing_data.h"
#include "perf/permission_fallback.h"
#include "perf/sampling_session.h"
#include "perf/stop_signals.h"
#include "perf/workload.h"
#include "session/record_build_ids.h"
#include "session/record_sink.h"
#include "session/system_tasks.h"
#include "session/tracepoint_filter.h"
#include "symbols/build_id_cache.h"
#include "symbols/machines.h"

namespace vperf::session {

namespace {

using std::chrono::milliseconds;

constexpr int kFeatureTracingData = 1;  // HEADER_TRACING_DATA (data/perf_data_format.h)
// Rings are drained at least this often, so the file is readable up to a recent round.
constexpr milliseconds kDrainPeriod{100};

// -k's features, as perf record writes them: CLOCKID, the clock's resolution, and CLOCK_DATA
// (version 1, the clock, then the time of day and the clock's time read together), which
// lets a reader turn sample times into wall-clock times.
void add_clock_features(data::HeaderFeatures& features, int clockid) {
  if (timespec res{}; ::clock_getres(clockid, &res) == 0)
    features.clockid_res_ns = static_cast<uint64_t>(res.tv_sec) * 1000000000 + static_cast<uint64_t>(res.tv_nsec);
  timeval tod{};
  timespec clock{};
  if (::gettimeofday(&tod, nullptr) != 0 || ::clock_gettime(clockid, &clock) != 0) return;
  const uint32_t head[2] = {1, static_cast<uint32_t>(clockid)};
  const uint64_t times[2] = {static_cast<uint64_t>(tod.tv_sec) * 1000000000 + static_cast<uint64_t>(tod.tv_usec) * 1000,
                             static_cast<uint64_t>(clock.tv_sec) * 1000000000 + static_cast<uint64_t>(clock.tv_nsec)};
  std::vector<uint8_t> bytes(sizeof head + sizeof times);
  std::memcpy(bytes.data(), head, sizeof head);
  std::memcpy(bytes.data() + sizeof head, times, sizeof times);
  features.other.push_back({data::kFeatClockData, std::move(bytes)});
}

std::vector<perf::SamplingEvent> sampling_events(const std::vector<events::ResolvedEvent>& chosen,
                                                 events::RecordAttrOptions a) {
  std::vector<perf::SamplingEvent> out;
  int leader = -1;
  for (size_t i = 0; i < chosen.size(); ++i) {
    a.several_events = chosen.size() > 1;
    a.tracking = i == 0;
    if (chosen[i].group_role != events::GroupRole::Member) leader = chosen[i].group_role == events::GroupRole::Leader ? static_cast<int>(i) : -1;
    out.push_back({chosen[i].written.empty() ? chosen[i].name : chosen[i].written, events::build_record_attr(chosen[i], a),
                   chosen[i].group_role == events::GroupRole::Member ? leader : -1});
  }
  // perf's evlist__config: several events whose samples have one layout carry PERF_SAMPLE_ID
  // (its place known from that layout); only when the layouts differ does every record need
  // PERF_SAMPLE_IDENTIFIER, at a fixed place.
  const bool one_layout = std::all_of(out.begin(), out.end(), [&](const perf::SamplingEvent& e) {
    return e.attr.sample_type == out.front().attr.sample_type;
  });
  if (out.size() > 1 && one_layout)
    for (perf::SamplingEvent& e : out) e.attr.sample_type = (e.attr.sample_type & ~uint64_t{PERF_SAMPLE_IDENTIFIER}) | PERF_SAMPLE_ID;
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

// vperf kvm record with guest symbols: each guest's kernel and module maps, as perf kvm record
// writes them, so perf kvm report can read the file too.
std::vector<data::RecordBytes> guest_kernel_maps(const guest::GuestSymbolSources& guests, const data::SampleFormat& format) {
  std::vector<data::RecordBytes> out;
  auto add = [&](const std::filesystem::path& kallsyms, const std::filesystem::path& modules, pid_t pid) {
    Result<std::vector<data::RecordBytes>> maps = data::synthesize_guest_kernel_maps(kallsyms, modules, pid, format);
    if (maps) out.insert(out.end(), maps->begin(), maps->end());
  };
  if (!guests.kallsyms.empty()) add(guests.kallsyms, guests.modules, symbols::Machines::kDefaultGuestPid);
  if (!guests.mount.empty())
    if (auto mounted = guest::guests_under_mount(guests.mount); mounted)
      for (const auto& [pid, root] : *mounted) add(root / "proc/kallsyms", root / "proc/modules", pid);
  return out;
}

// The BUILD_ID feature, from the recording read back as perf's process_buildids reads it.
std::optional<RecordedBuildIds> read_back_build_ids(const std::string& path, std::ostream& err, bool quiet, bool all_mapped) {
  Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(path);
  Result<RecordedBuildIds> ids = reader ? recorded_build_ids(reader.value(), {}, all_mapped ? BuildIdTable::RecordAll : BuildIdTable::Record) : Result<RecordedBuildIds>(reader.error());
  if (ids) return std::move(ids).value();
  if (!quiet) err << "vperf: warning: " << path << " has no build-id list: " << ids.error().describe() << '\n';
  return std::nullopt;
}

// The tracepoint formats perf stores beside tracepoint samples; nullopt without tracepoints.
std::optional<std::vector<uint8_t>> tracepoint_formats(const std::vector<events::ResolvedEvent>& chosen) {
  std::vector<tracing::TracepointName> tracepoints;
  for (const events::ResolvedEvent& e : chosen)
    if (e.type == PERF_TYPE_TRACEPOINT) {
      size_t colon = e.name.find(':');
      tracepoints.push_back({e.name.substr(0, colon), e.name.substr(colon + 1)});
    }
  if (tracepoints.empty()) return std::nullopt;
  Result<std::vector<uint8_t>> bytes = tracing::build_local_tracing_data(tracepoints);
  if (!bytes) throw UserError("cannot save the tracepoint formats: " + bytes.error().describe(), "mount tracefs at /sys/kernel/tracing");
  return std::move(bytes).value();
}

class RecordSession {
 public:
  RecordSession(const RecordRequest& request, const perf::PerfEventOpener& opener, RunClock& clock, std::ostream& err)
      : r_(request), opener_(opener), clock_(clock), err_(err), chosen_(request.events) {}

  int run();

 private:
  void prepare_workload();
  // Removes the output begun for a recording that could not start, and puts back the earlier
  // one create_writer moved to .old.
  void discard_output();
  void open_events();
  void open_switch_events(events::RecordAttrOptions attr);
  void write_tail_records();
  void write_processes(const std::vector<pid_t>& pids, const data::SampleFormat& format);
  void drain_switch_events();
  void apply_filter();
  void set_filter(size_t index, const std::string& filter);
  void create_writer();
  // `again`: for the next file of a series, which also needs the command's own COMM and maps
  // (the first file has them from the kernel, as the command execs).
  void write_header_records(bool again = false);
  void sample();
  // A control command's enable/disable: every event, or the one named (a name the recording
  // does not have is ignored, as perf ignores it).
  void set_enabled(bool on, const std::string& event);
  Next on_control();
  void finish();
  bool switching() const { return r_.switch_output.trigger != SwitchOutput::Trigger::none; }
  // Ends the file (finish), renames it OUTPUT.TIMESTAMP and, but `at_exit`, begins the next.
  void switch_file(bool at_exit);
  void add_to_build_id_cache(const std::vector<data::BuildIdEntry>& entries) const;
  void print_summary() const;

  const RecordRequest& r_;
  const perf::PerfEventOpener& opener_;
  RunClock& clock_;
  std::ostream& err_;
  std::vector<events::ResolvedEvent> chosen_;
  std::optional<perf::StopSignals> signals_;
  std::optional<perf::Workload> workload_;
  perf::SamplingTarget target_;
  bool system_wide_ = false;
  bool to_pipe_ = false;
  bool moved_aside_ = false;  // an earlier recording at the output's name went to .old
  std::optional<perf::SamplingSession> session_;
  std::optional<perf::SamplingSession> switch_events_;  // --switch-output-event's side band
  std::optional<data::PerfDataWriter> writer_;
  std::optional<RecordSink> sink_;
  std::optional<std::vector<uint8_t>> tracing_;
  uint64_t wakeups_ = 0;  // a ring reached its wakeup mark (half full) or its task ended
  bool switch_requested_ = false;
  // SIGUSR2s taken at once beyond the first: each is a file of its own (perf daemon signal
  // sends two in a row and counts the files).
  unsigned extra_switches_ = 0;
  std::vector<std::string> switched_files_;  // the series so far, oldest first
  uint64_t processed_ = 0;
  std::optional<perf::WorkloadExit> exit_;
  std::optional<RecordControl> control_;
};

int RecordSession::run() {
  system_wide_ = !r_.cpus.empty();
  to_pipe_ = r_.output == "-";
  if (to_pipe_ && switching()) throw usage_error("--switch-output writes a series of files, not a pipe", "give -o a file name");
  if (r_.switch_output.trigger == SwitchOutput::Trigger::size && !r_.quiet) {
    // perf's warning: a ring is drained when half full, so files end up that large at least.
    const uint64_t wakeup_bytes = (uint64_t{r_.mmap_pages} + 1) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) / 2;
    if (r_.switch_output.bytes < wakeup_bytes)
      err_ << "vperf: warning: switch-output data size lower than wakeup kernel buffer size (" << wakeup_bytes / 1024
           << "K) expect bigger perf.data sizes\n";
  }
  // SIGUSR2 asks --switch-output=signal for the next file; otherwise it is ignored, as perf
  // record ignores it (it would end vperf).
  Result<perf::StopSignals> signals = perf::StopSignals::install(true);
  if (!signals) throw UserError("cannot install signal handlers: " + signals.error().describe(), "");
  signals_.emplace(std::move(signals).value());
  if (r_.control) {  // before anything is written: a wrong fifo leaves nothing behind
    Result<RecordControl> control = RecordControl::open(*r_.control);
    if (!control) throw usage_error(control.error().describe(), "make the fifos with mkfifo first, or pass open fds with --control=fd:CTL,ACK");
    control_.emplace(std::move(control).value());
  }
  prepare_workload();
  open_events();
  apply_filter();
  create_writer();
  write_header_records();
  sample();
  if (switching()) switch_file(true);
  else finish();
  print_summary();
  if (exit_ && exit_->signaled) err_ << r_.command.front() << ": " << ::strsignal(exit_->code) << '\n';
  return exit_ ? exit_->shell_status() : 0;
}

void RecordSession::prepare_workload() {
  target_ = perf::SamplingTarget{r_.threads, r_.cpus};
  if (!r_.command.empty()) {
    Result<perf::Workload> prepared = perf::Workload::prepare(
        r_.command, to_pipe_ ? perf::WorkloadStdout::to_stderr : perf::WorkloadStdout::inherited);
    if (!prepared) throw UserError("cannot start '" + r_.command.front() + "': " + prepared.error().describe(), "");
    workload_.emplace(std::move(prepared).value());
    if (!system_wide_ && r_.threads.empty()) target_.threads = {workload_->pid()};
  }
  if (!system_wide_ && r_.attr.inherit) {
    // Inherited per-task counters need a CPU each to have a ring.
    Result<std::vector<int>> online = online_cpus();
    if (!online) throw UserError("cannot list the online CPUs: " + online.error().describe(), "is /sys mounted?");
    target_.cpus = *online;
  }
}

void RecordSession::open_events() {
  events::RecordAttrOptions attr = r_.attr;
  attr.system_wide = system_wide_;
  attr.enable_on_exec = workload_ && !system_wide_ && r_.threads.empty() && !r_.delay_ms;
  std::vector<std::string> fallback_messages;
  perf::OpenRetry retry = permission_retry(fallback_messages);
  Result<perf::SamplingSession> session =
      perf::SamplingSession::open(opener_, sampling_events(chosen_, attr), target_, r_.mmap_pages, retry);
  if (!session && !r_.fallback_events.empty() && refused_as_missing(session.error().errno_value)) {
    // perf's fallback: no hardware cycles (a VM without a virtual PMU) -> cpu-clock.
    chosen_ = r_.fallback_events;
    if (!r_.quiet) err_ << "vperf: cycles is not supported here (no hardware PMU); sampling cpu-clock instead, as perf does\n";
    fallback_messages.clear();  // said of the events given up: the ones opened now say theirs
    session = perf::SamplingSession::open(opener_, sampling_events(chosen_, attr), target_, r_.mmap_pages, retry);
  }
  if (!session) throw UserError(session.error().describe(), open_hint(session.error().errno_value));
  if (!r_.quiet)
    for (const std::string& message : fallback_messages) err_ << "vperf: warning: " << message << '\n';
  session_.emplace(std::move(session).value());
  if (!r_.switch_events.empty()) open_switch_events(attr);
}

// Empties --switch-output-event's rings: a sample in them asks for the next file.
void RecordSession::drain_switch_events() {
  Result<size_t> n = switch_events_->drain([this](std::span<const uint8_t> record) {
    uint32_t type = 0;
    if (record.size() >= sizeof type) std::memcpy(&type, record.data(), sizeof type);
    if (type == PERF_RECORD_SAMPLE) switch_requested_ = true;
  });
  if (!n) throw UserError("cannot read --switch-output-event's events: " + n.error().describe(), "");
}

// --switch-output-event: each event counted on the recording's tasks or CPUs, every hit a
// sample that wakes the loop (period 1, a wakeup per sample) into a ring of one page whose
// records only say "switch now".
void RecordSession::open_switch_events(events::RecordAttrOptions attr) {
  attr.tracking = false;
  attr.several_events = false;
  attr.overwrite = false;  // read as they fill, whatever --overwrite does to the sampled rings
  attr.call_graph = events::CallGraph::None;
  attr.period = 1;
  attr.frequency.reset();
  std::vector<perf::SamplingEvent> side_band;
  for (const events::ResolvedEvent& event : r_.switch_events) {
    perf::SamplingEvent e{event.written.empty() ? event.name : event.written, events::build_record_attr(event, attr), -1};
    e.attr.sample_period = 1;
    e.attr.freq = 0;
    e.attr.wakeup_events = 1;
    side_band.push_back(std::move(e));
  }
  Result<perf::SamplingSession> opened = perf::SamplingSession::open(opener_, std::move(side_band), target_, 1);
  if (!opened) throw UserError("--switch-output-event: " + opened.error().describe(), open_hint(opened.error().errno_value));
  switch_events_.emplace(std::move(opened).value());
}

void RecordSession::apply_filter() {
  if (!r_.filter.empty()) {
    // perf applies --filter to the event named just before it; vperf's single --filter goes to
    // the last event, which must be a tracepoint.
    size_t last = chosen_.size() - 1;
    if (chosen_[last].type != PERF_TYPE_TRACEPOINT)
      throw filter_needs_a_tracepoint(session_->events()[last].name);
    set_filter(last, r_.filter);
  }
  for (const auto& named_filter : r_.tracepoint_filters) {
    // A structured binding is not captured here: clang 14 (the fuzz build) refuses that.
    const std::string& name = named_filter.first;
    const std::string& filter = named_filter.second;
    auto named = [&name](const events::ResolvedEvent& e) { return e.type == PERF_TYPE_TRACEPOINT && e.name == name; };
    auto found = std::find_if(chosen_.begin(), chosen_.end(), named);
    if (found == chosen_.end())
      throw usage_error("a filter names the tracepoint " + name + ", which is not recorded", "record " + name + " too");
    set_filter(static_cast<size_t>(found - chosen_.begin()), filter);
  }
}

// A kernel filter on every counter of event `index`; the kernel's refusal is a usage error
// naming the filter.
void RecordSession::set_filter(size_t index, const std::string& filter) {
  if (Result<void> ok = session_->set_filter(index, filter); !ok) throw filter_refused(filter, ok.error());
}

void RecordSession::create_writer() {
  std::vector<data::EventAttrEntry> attrs;
  std::vector<data::SampleFormat> formats;
  for (size_t i = 0; i < session_->events().size(); ++i) {
    attrs.push_back({session_->events()[i].attr, session_->events()[i].name, session_->ids()[i]});
    formats.push_back(data::SampleFormat::from_attr(session_->events()[i].attr));
  }
  // The previous file moves aside to .old (as perf does); the new file is created without
  // following links.
  if (!to_pipe_) {
    std::error_code ec;
    moved_aside_ = std::filesystem::exists(std::filesystem::symlink_status(r_.output, ec));
    if (Result<void> moved = move_aside_to_old(r_.output); !moved)
      throw UserError("cannot write the recording to " + r_.output + ": " + moved.error().describe(),
                      "give -o a file name (or -o - for a pipe)");
  }
  Result<data::PerfDataWriter> writer =
      to_pipe_ ? data::PerfDataWriter::create_pipe(r_.pipe_fd, attrs) : data::PerfDataWriter::create_file(r_.output, attrs);
  if (!writer) throw UserError("cannot write " + r_.output + ": " + writer.error().describe(), "check the directory exists and is writable");
  writer_.emplace(std::move(writer).value());
  if (r_.compression_level > 0) {
    // The feature's field is 32 bits: a larger ring is stated as 2 GiB (slices stay below it).
    const auto ring_bytes = static_cast<uint32_t>(
        std::min<uint64_t>(uint64_t{r_.mmap_pages} * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)), uint64_t{1} << 31));
    if (Result<void> compressing = writer_->compress(r_.compression_level, ring_bytes); !compressing)
      throw UserError("cannot compress the recording (-z): " + compressing.error().describe(), "install zstd's library: apt-get install libzstd1");
  }
  sink_.emplace(*writer_, std::move(formats), to_pipe_ ? "the pipe" : r_.output);
}

void RecordSession::discard_output() {
  sink_.reset();
  writer_.reset();
  if (to_pipe_) return;
  std::error_code ec;
  std::filesystem::remove(r_.output, ec);
  if (moved_aside_) std::filesystem::rename(r_.output + ".old", r_.output, ec);
}

void RecordSession::write_header_records(bool again) {
  tracing_ = tracepoint_formats(chosen_);
  if (tracing_ && to_pipe_) sink_->write_all({tracing::tracing_data_record(*tracing_)});
  const data::SampleFormat format = data::SampleFormat::from_attr(session_->events().front().attr);
  Result<std::vector<data::RecordBytes>> kernel_maps = data::synthesize_kernel_maps(format);
  if (kernel_maps) sink_->write_all(*kernel_maps);
  // perf record's warning, where /proc/kallsyms shows this user only zero addresses (no map is
  // made from them) and an event samples the kernel: no report will name a kernel sample.
  const bool samples_kernel = std::any_of(session_->events().begin(), session_->events().end(),
                                          [](const auto& event) { return event.attr.exclude_kernel == 0 && event.attr.exclude_host == 0; });
  if (samples_kernel && (!kernel_maps || kernel_maps->empty()) && !r_.quiet)
    err_ << "vperf: warning: Kernel address maps (/proc/{kallsyms,modules}) are restricted, check /proc/sys/kernel/kptr_restrict "
            "and /proc/sys/kernel/perf_event_paranoid: samples in kernel functions and kernel modules will not be resolved\n";
  if (r_.attr.scope.guest) sink_->write_all(guest_kernel_maps(r_.guests, format));  // as perf kvm: not for --no-guest
  std::vector<pid_t> processes = system_wide_ ? all_processes() : r_.existing;
  if (again && workload_ && !system_wide_ && r_.threads.empty()) processes.push_back(workload_->pid());
  write_processes(processes, format);
  sink_->check();
}

// The COMM and MMAP2 records of each live process in `pids` (one that is gone is left out).
void RecordSession::write_processes(const std::vector<pid_t>& pids, const data::SampleFormat& format) {
  const data::SynthesizedMaps maps = data::synthesized_maps_for(session_->events().front().attr);
  for (pid_t pid : pids)
    if (Result<std::vector<data::RecordBytes>> records = data::synthesize_process(pid, maps, format); records)
      sink_->write_all(*records);
}

// --overwrite: the rings have long overwritten the tasks' COMM and MMAP records when they are
// read, so, as perf record's tail synthesis, the processes are described again where the
// snapshot goes: every process (-a), the -p/-t ones, and the command: while it runs, as any
// process; once it has ended, by the name it ended with (its zombie's, as perf reads it).
void RecordSession::write_tail_records() {
  const data::SampleFormat format = data::SampleFormat::from_attr(session_->events().front().attr);
  std::vector<pid_t> processes = system_wide_ ? all_processes() : r_.existing;
  const bool command = workload_ && !system_wide_ && r_.threads.empty();
  if (command && !exit_) processes.push_back(workload_->pid());
  write_processes(processes, format);
  if (command && exit_ && !exit_->comm.empty())
    sink_->write_all({data::comm_record(workload_->pid(), workload_->pid(), exit_->comm, false, format)});
  sink_->check();
}

void RecordSession::switch_file(bool at_exit) {
  if (!at_exit) {
    if (!r_.quiet) err_ << "[ vperf record: dump data: Woken up " << wakeups_ << " times ]\n";
    wakeups_ = 0;
  }
  sink_->flush_round();
  sink_->check();
  finish();
  const std::string stamped = switched_file_name(r_.output, clock_.wall());
  std::string name = stamped;
  std::error_code ec;
  // Two files ended within one hundredth of a second would get one name, and the rename would
  // replace the first: the second gets a suffix instead (perf's rename loses the first).
  for (int n = 1; std::filesystem::exists(std::filesystem::symlink_status(name, ec)); ++n) name = stamped + "." + std::to_string(n);
  std::filesystem::rename(r_.output, name, ec);
  if (ec) throw UserError("cannot rename " + r_.output + " to " + name + ": " + ec.message(), "check the directory is writable");
  if (!r_.quiet) err_ << "[ vperf record: Dump " << name << " ]\n";
  switched_files_.push_back(name);
  if (r_.switch_output.max_files > 0 && switched_files_.size() > r_.switch_output.max_files) {
    std::filesystem::remove(switched_files_.front(), ec);
    switched_files_.erase(switched_files_.begin());
  }
  if (at_exit) return;
  create_writer();
  write_header_records(true);
}

void RecordSession::set_enabled(bool on, const std::string& event) {
  std::optional<size_t> index;
  if (!event.empty()) {
    const auto& events = session_->events();
    auto named = std::find_if(events.begin(), events.end(), [&](const perf::SamplingEvent& e) { return e.name == event; });
    if (named == events.end()) return;  // perf ignores a name it does not have
    index = static_cast<size_t>(named - events.begin());
  }
  if (Result<void> ok = session_->set_enabled(on, index); !ok)
    throw UserError(std::string("cannot ") + (on ? "enable" : "disable") + " the events: " + ok.error().describe(), "");
  if (!r_.quiet) err_ << (index ? event + " " : std::string("Events ")) << (on ? "enabled" : "disabled") << '\n';
}

Next RecordSession::on_control() {
  Result<std::vector<ControlCommand>> commands = control_->read_commands();
  if (!commands) throw UserError(commands.error().describe(), "");
  Next next = Next::keep_going;
  for (const ControlCommand& command : *commands) {
    switch (command.kind) {
      case ControlCommand::Kind::enable: set_enabled(true, command.event); break;
      case ControlCommand::Kind::disable: set_enabled(false, command.event); break;
      case ControlCommand::Kind::stop: next = Next::stop; break;
      case ControlCommand::Kind::evlist:
        for (const perf::SamplingEvent& e : session_->events()) err_ << e.name << '\n';
        break;
      case ControlCommand::Kind::ping:
      case ControlCommand::Kind::snapshot:  // no AUX area to snapshot: acknowledged, as perf does without one
        break;
      case ControlCommand::Kind::unknown: continue;  // no ack, as perf
    }
    control_->ack();
  }
  return next;
}

void RecordSession::sample() {
  if (r_.delay_ms && !r_.quiet) err_ << "Events disabled\n";
  if (!r_.delay_ms)
    if (Result<void> ok = session_->enable(); !ok) throw UserError("cannot start sampling: " + ok.error().describe(), "");
  if (switch_events_)
    if (Result<void> ok = switch_events_->enable(); !ok) throw UserError("cannot start --switch-output-event: " + ok.error().describe(), "");
  if (workload_)
    if (Result<void> ok = workload_->start(); !ok) {
      discard_output();  // nothing was recorded: leave the directory as it was
      throw UserError(ok.error().describe(), "check the command name and your PATH");
    }
  auto drain = [this] {
    Result<size_t> n = session_->drain([this](std::span<const uint8_t> record) { sink_->write(record); });
    if (!n) throw UserError("cannot read the samples: " + n.error().describe(), "run 'vperf check'");
    if (*n > 0) sink_->flush_round();
    sink_->check();
    if (r_.switch_output.trigger == SwitchOutput::Trigger::size && writer_->data_bytes() >= r_.switch_output.bytes)
      switch_requested_ = true;
  };
  auto end_workload = [this] {
    workload_->terminate(SIGTERM);
    if (Result<perf::WorkloadExit> ended = workload_->wait(); ended) exit_ = *ended;
  };

  RunLoop loop(clock_);
  bool woke = false;
  // An overwrite ring is watched for its task's end only, as perf polls it: it fills for ever.
  for (int fd : session_->ring_fds())
    loop.watch_fd(
        fd,
        [&woke](short revents) {
          if (revents & (POLLIN | POLLHUP)) woke = true;  // perf counts the times a ring woke it
          return revents & (POLLHUP | POLLERR) ? Next::unwatch : Next::keep_going;  // its task ended
        },
        r_.attr.overwrite ? 0 : POLLIN);
  if (switch_events_)
    for (int fd : switch_events_->ring_fds())
      loop.watch_fd(fd, [this](short revents) {
        drain_switch_events();
        return revents & (POLLHUP | POLLERR) ? Next::unwatch : Next::keep_going;
      });
  // As perf record: a stop signal ends the recording, and the command gets SIGTERM below.
  // Forwarding the signal is not enough: a command started in the background (`vperf record
  // CMD &`) inherits SIGINT ignored from the shell and would run to its end.
  bool stopped_by_signal = false;
  loop.watch_signals(*signals_, [&](const std::vector<perf::StopSignal>& received) {
    bool stop = false;
    for (const perf::StopSignal& s : received) {
      if (s.number != SIGUSR2) stop = true;
      else if (r_.switch_output.trigger == SwitchOutput::Trigger::signal) {
        if (switch_requested_) ++extra_switches_;
        switch_requested_ = true;
      }
    }
    if (!stop) return Next::keep_going;
    stopped_by_signal = true;
    return Next::stop;
  });
  if (workload_)
    loop.watch_workload(*workload_, [this](const perf::WorkloadExit& exit) {
      exit_ = exit;
      return Next::stop;
    });
  // Timing -p/-t tasks that have all ended (the VM was shut down): the command goes too.
  if (!r_.threads.empty())
    loop.watch_tasks(r_.threads, kDrainPeriod, [&] {
      if (workload_) end_workload();
      exit_.reset();  // the command was only a timer: its end by SIGTERM is not the run's status
      return Next::stop;
    });
  loop.every(clock_.now() + kDrainPeriod, kDrainPeriod, [] { return Next::keep_going; });
  if (r_.switch_output.trigger == SwitchOutput::Trigger::time)
    loop.every(clock_.now() + r_.switch_output.every, r_.switch_output.every, [this] {
      switch_requested_ = true;
      return Next::keep_going;
    });
  if (r_.delay_ms && *r_.delay_ms >= 0)
    loop.at(clock_.now() + std::chrono::milliseconds(*r_.delay_ms), [this] {
      set_enabled(true, "");
      return Next::keep_going;
    });
  bool stopped_by_control = false;
  if (control_)
    loop.watch_fd(control_->control_fd(), [&](short) {
      if (on_control() == Next::keep_going) return Next::keep_going;
      stopped_by_control = true;
      return Next::stop;
    });
  if (r_.also_wait_for) r_.also_wait_for(loop);
  loop.after_each_wait([&] {
    wakeups_ += woke ? 1 : 0;
    woke = false;
    // Overwrite rings are read when a file ends, not as they fill.
    if (r_.attr.overwrite && switch_requested_) write_tail_records();
    if (!r_.attr.overwrite || switch_requested_) drain();
    if (switch_requested_) {
      switch_requested_ = false;
      switch_file(false);
      for (; extra_switches_ > 0; --extra_switches_) switch_file(false);
    }
    return Next::keep_going;
  });
  if (Result<bool> ran = loop.run(); !ran) throw UserError(ran.error().describe(), "");
  // The wait that ended the recording (the command ended, a signal, the tasks gone) is a
  // wakeup as perf counts them: its poll returning counts, so perf never says "0 times".
  ++wakeups_;

  (void)session_->disable();
  // An event of --switch-output-event the loop had no turn to see (the command ended at once
  // after it) still ends a file.
  if (switch_events_) {
    drain_switch_events();
    if (switch_requested_) {
      switch_requested_ = false;
      switch_file(false);
    }
  }
  if (r_.attr.overwrite) write_tail_records();
  drain();
  if ((stopped_by_signal || stopped_by_control) && workload_) end_workload();
  sink_->flush_round();
  sink_->check();
}

void RecordSession::finish() {
  data::HeaderFeatures features = data::this_machine_features(r_.cmdline);
  // perf counts what it processed while listing build-ids; a pipe is not read back, so there
  // the count is of the records vperf drained.
  processed_ = sink_->tally().records;
  if (!to_pipe_ && !r_.no_buildid && !switching())
    if (std::optional<RecordedBuildIds> ids = read_back_build_ids(r_.output, err_, r_.quiet, r_.buildid_all)) {
      features.build_ids = std::move(ids->entries);
      processed_ = ids->stats.records;
      if (!r_.no_buildid_cache) add_to_build_id_cache(features.build_ids);
    }
  if (tracing_ && !to_pipe_) features.other.push_back({kFeatureTracingData, *tracing_});
  if (r_.attr.clockid) add_clock_features(features, *r_.attr.clockid);
  // The {groups}, as perf record describes them (an unnamed one is perf's "{anon_group}").
  for (size_t i = 0; i < chosen_.size(); ++i) {
    if (chosen_[i].group_role != events::GroupRole::Leader) continue;
    uint32_t members = 1;
    while (i + members < chosen_.size() && chosen_[i + members].group_role == events::GroupRole::Member) ++members;
    features.groups.push_back({"{anon_group}", static_cast<uint32_t>(i), members});
  }
  if (Result<void> ok = writer_->finish(features); !ok)
    throw UserError("cannot finish " + r_.output + ": " + ok.error().describe(), "check the disk space");
}

// The table's files, as perf record adds them (the kernel's and modules' copies, which perf
// also keeps, are not made: see symbols/build_id_cache.h). A failure is silent for ~/.debug,
// as perf's is (a read-only or missing home must not add a line to every recording), and one
// warning for a directory the user named with --buildid-dir.
void RecordSession::add_to_build_id_cache(const std::vector<data::BuildIdEntry>& entries) const {
  const symbols::BuildIdCache cache(r_.buildid_dir.empty() ? symbols::BuildIdCache::default_dir() : std::filesystem::path(r_.buildid_dir));
  size_t failed = 0;
  std::string first_error;
  for (const data::BuildIdEntry& entry : entries) {
    if ((entry.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER || !entry.filename.starts_with("/")) continue;
    if (Result<bool> added = cache.add(entry.filename, symbols::BuildId{entry.build_id}); !added && failed++ == 0)
      first_error = added.error().describe();
  }
  if (failed && !r_.quiet && !r_.buildid_dir.empty())
    err_ << "vperf: warning: " << failed << " file" << (failed == 1 ? "" : "s") << " not added to the build-id cache "
         << cache.dir().string() << ": " << first_error << " (hint: -N records without it)\n";
}

void RecordSession::print_summary() const {
  if (r_.quiet) return;
  const RecordTally& tally = sink_->tally();
  err_ << "[ vperf record: Woken up " << wakeups_ << " times to write data ]\n";
  if (tally.lost_chunks)
    err_ << "vperf: warning: Processed " << processed_ << " events and lost " << tally.lost_chunks
         << " chunks! Check IO/CPU overload: " << tally.lost << " records were dropped (hint: use a larger -m or a lower -F)\n";
  char line[256];
  constexpr double kMiB = 1024.0 * 1024.0;
  const double written = static_cast<double>(writer_->data_bytes());
  std::string compressed;  // perf's words for -z
  if (r_.compression_level > 0 && written > 0) {
    char text[128];
    const double original = static_cast<double>(writer_->uncompressed_bytes());
    std::snprintf(text, sizeof text, ", compressed (original %.3f MB, ratio is %.3f)", original / kMiB, original / written);
    compressed = text;
  }
  // A series ends as perf's: the files' names are said above, and the count of samples is
  // the last file's, which perf leaves out.
  const std::string path = to_pipe_ ? "(pipe)" : switching() ? r_.output + ".<timestamp>" : r_.output;
  std::snprintf(line, sizeof line, "[ vperf record: Captured and wrote %.3f MB %s%s", written / kMiB, path.c_str(), compressed.c_str());
  err_ << line;
  if (!switching()) err_ << " (" << tally.samples << " samples)";
  err_ << " ]\n";
}

}  // namespace

int record(const RecordRequest& request, const perf::PerfEventOpener& opener, RunClock& clock, std::ostream& err) {
  return RecordSession(request, opener, clock, err).run();
}

}  // namespace vperf::session
