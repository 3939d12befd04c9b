// vperf kvm stat: see cmd_kvm_stat.h and docs/kvm-stat.md.
#include "cli/cmd_kvm_stat.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "cli/cmd_record.h"
#include "cli/kvm_domain.h"
#include "cli/perf_data_input.h"
#include "cli/target_options.h"
#include "core/error.h"
#include "core/scoped_fd.h"
#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "events/tracefs_events.h"
#include "host/kvm_exit_analysis.h"
#include "output/json.h"
#include "perf/event_fd.h"
#include "session/record_session.h"
#include "report/sample_replay.h"
#include "report/tracepoint_decoder.h"
#include "symbols/machines.h"

namespace vperf::cli {

namespace {

using host::KvmEvent;
using host::KvmEventKind;

// The tracepoints kvm stat records and reads, by perf's names. kvm_entry/kvm_exit/kvm_mmio/
// kvm_pio/kvm_msr are what perf 6.1's `perf kvm stat record` records on x86; kvm_userspace_exit
// and kvm_hypercall are vperf's, for the exits that reach user space (host/kvm_exit_analysis.h).
struct KvmTracepoint {
  std::string_view system, event;
  KvmEventKind kind;
};
constexpr KvmTracepoint kTracepoints[] = {
    {"kvm", "kvm_entry", KvmEventKind::Entry},         {"kvm", "kvm_exit", KvmEventKind::Exit},
    {"kvm", "kvm_userspace_exit", KvmEventKind::UserspaceExit}, {"kvm", "kvm_pio", KvmEventKind::Pio},
    {"kvm", "kvm_mmio", KvmEventKind::Mmio},           {"kvm", "kvm_msr", KvmEventKind::Msr},
    {"kvm", "kvm_hypercall", KvmEventKind::Hypercall},
    // The VMM's KVM_RUN calls, filtered in the kernel to cmd == KVM_RUN: what ends an exit to
    // user space. Recorded last, since record's --filter applies to the last event.
    {"syscalls", "sys_enter_ioctl", KvmEventKind::RunIoctl},
};

std::string full_name(const KvmTracepoint& t) { return std::string(t.system) + ":" + std::string(t.event); }

std::optional<KvmEventKind> kind_of(std::string_view name) {
  for (const KvmTracepoint& t : kTracepoints)
    if (full_name(t) == name) return t.kind;
  return std::nullopt;
}

std::string run_filter() {
  char text[32];
  std::snprintf(text, sizeof text, "cmd == %#x", static_cast<unsigned>(KVM_RUN));
  return text;
}

constexpr std::string_view kRecordHint = "vperf kvm stat record -- VMM ARGS (or -a for every VM)";

// ---------------------------------------------------------------------------------------------
// Decoding samples into KvmEvents

class KvmSampleDecoder {
 public:
  void load_file_tracing_data(const data::PerfDataReader& reader, std::ostream& err) {
    for (const data::RawFeature& feature : reader.features().other)
      if (feature.feature == data::kFeatTracingData) load_tracing_data(feature.bytes, err);
  }

  void load_tracing_data(std::span<const uint8_t> bytes, std::ostream& err) {
    Result<report::TracepointDecoder> decoder = report::TracepointDecoder::parse(bytes);
    if (!decoder) {
      err << "vperf: warning: tracing data ignored: " << decoder.error().describe() << '\n';
      return;
    }
    decoder_.emplace(std::move(decoder).value());
    kinds_.clear();  // names may only now be known (pipe mode)
  }

  // The kind of an event of the recording, or nullopt for one kvm stat does not use.
  std::optional<KvmEventKind> kind(const data::EventAttrEntry& entry) {
    if (entry.attr.type != PERF_TYPE_TRACEPOINT) return std::nullopt;
    auto cached = kinds_.find(entry.attr.config);
    if (cached != kinds_.end()) return cached->second;
    std::optional<std::string> name = entry.name.empty() ? std::nullopt : std::optional<std::string>(entry.name);
    if (!name && decoder_) name = decoder_->event_name(entry.attr.config);
    std::optional<KvmEventKind> kind = name ? kind_of(*name) : std::nullopt;
    if (decoder_ || name) kinds_[entry.attr.config] = kind;
    if (kind) seen_kinds_.insert(*kind);
    return kind;
  }

  bool saw_kind(KvmEventKind kind) const { return seen_kinds_.count(kind) != 0; }
  bool saw_any_kind() const { return !seen_kinds_.empty(); }
  uint64_t undecodable() const { return undecodable_; }

  std::optional<KvmEvent> decode(const report::ResolvedSample& s, KvmEventKind kind, std::string_view cpuid) {
    if (!decoder_) {
      ++undecodable_;
      return std::nullopt;
    }
    const uint64_t id = s.view.attr->attr.config;
    std::span<const uint8_t> raw = s.sample.raw;
    auto field = [&](std::string_view name) { return decoder_->field_value(id, raw, name); };
    KvmEvent e;
    e.kind = kind;
    e.pid = s.pid;
    e.tid = s.tid;
    e.time = s.time;
    bool ok = true;
    auto need = [&](std::string_view name) -> uint64_t {
      std::optional<uint64_t> v = field(name);
      if (!v) ok = false;
      return v.value_or(0);
    };
    switch (kind) {
      case KvmEventKind::Exit: {
        e.reason = need("exit_reason");
        e.vcpu = static_cast<uint32_t>(field("vcpu_id").value_or(0));
        // The isa field (Linux 5.7+) says which table; perf 6.1 goes by the recording's CPU.
        if (std::optional<uint64_t> isa = field("isa"))
          e.isa = static_cast<host::KvmIsa>(*isa);
        else if (std::optional<host::KvmIsa> from_cpu = host::isa_from_cpuid(cpuid))
          e.isa = *from_cpu;
        else
          throw UserError("cannot tell VMX from SVM exit reasons: kvm_exit has no isa field and the recording's CPU ('" +
                              std::string(cpuid) + "') is neither Intel nor AMD",
                          "vperf kvm stat knows x86 only");
        break;
      }
      case KvmEventKind::Entry: e.vcpu = static_cast<uint32_t>(need("vcpu_id")); break;
      case KvmEventKind::UserspaceExit:
        e.reason = need("reason");
        e.error = static_cast<int64_t>(field("errno").value_or(0));
        break;
      case KvmEventKind::Pio:
        e.access = static_cast<uint32_t>(need("rw"));
        e.address = need("port");
        e.size = static_cast<uint32_t>(need("size"));
        break;
      case KvmEventKind::Mmio:
        e.access = static_cast<uint32_t>(need("type"));
        e.address = need("gpa");
        e.size = static_cast<uint32_t>(field("len").value_or(0));
        break;
      case KvmEventKind::Msr:
        e.access = static_cast<uint32_t>(need("write"));
        e.address = need("ecx");
        break;
      case KvmEventKind::Hypercall: e.address = need("nr"); break;
      case KvmEventKind::RunIoctl:
        // The kernel filter keeps only KVM_RUN; a recording made without it has them all.
        if (need("cmd") != KVM_RUN) return std::nullopt;
        break;
    }
    if (!ok) {
      ++undecodable_;
      return std::nullopt;
    }
    return e;
  }

 private:
  std::optional<report::TracepointDecoder> decoder_;
  std::map<uint64_t, std::optional<KvmEventKind>> kinds_;  // by tracepoint id
  std::set<KvmEventKind> seen_kinds_;
  uint64_t undecodable_ = 0;
};

struct PassResult {
  uint64_t lost = 0;
  bool kvm_events_recorded = false;  // the recording has kvm tracepoint events at all
  bool run_entries_recorded = false;
  bool userspace_exits_recorded = false;
  uint64_t undecodable = 0;
};

// The one pass over a recording (report, and live's reader thread): every kvm sample decoded
// and added to `analysis`, and `result` filled in, under `lock` when one is given.
void analyse_recording(data::PerfDataReader& reader, host::KvmExitAnalysis& analysis, PassResult& result, std::mutex* lock,
                       const std::string& input, std::ostream& err) {
  KvmSampleDecoder decoder;
  decoder.load_file_tracing_data(reader, err);
  symbols::Machines machines{symbols::SymbolConfig{}};
  report::SampleReplay replay(machines, report::ReplayOptions{.ordered = true, .resolve_chain = false});
  replay.set_record_observer([&](const data::RecordView& view) {
    if (const auto* tracing = std::get_if<data::TracingDataRecord>(&view.record.body)) decoder.load_tracing_data(tracing->data, err);
    if (const auto* lost = std::get_if<data::LostRecord>(&view.record.body)) {
      std::unique_lock<std::mutex> guard = lock ? std::unique_lock<std::mutex>(*lock) : std::unique_lock<std::mutex>();
      result.lost += lost->lost;
    }
  });
  Result<data::ReadStats> stats = replay.run(reader, [&](const report::ResolvedSample& s) {
    if (!s.view.attr) return true;
    std::optional<KvmEventKind> kind = decoder.kind(*s.view.attr);
    if (!kind) return true;
    std::optional<KvmEvent> event = decoder.decode(s, *kind, reader.features().cpuid);
    if (!event) return true;
    std::unique_lock<std::mutex> guard = lock ? std::unique_lock<std::mutex>(*lock) : std::unique_lock<std::mutex>();
    analysis.add(*event);
    return true;
  });
  if (!stats) throw unreadable_samples(input, stats.error());
  for (const std::string& warning : reader.warnings()) err << "vperf: warning: " << warning << '\n';
  // Events the recording has but no sample of: their attrs still say they were recorded.
  for (const data::EventAttrEntry& entry : reader.attrs()) (void)decoder.kind(entry);
  std::unique_lock<std::mutex> guard = lock ? std::unique_lock<std::mutex>(*lock) : std::unique_lock<std::mutex>();
  result.kvm_events_recorded = decoder.saw_any_kind();
  result.run_entries_recorded = decoder.saw_kind(KvmEventKind::RunIoctl);
  result.userspace_exits_recorded = decoder.saw_kind(KvmEventKind::UserspaceExit);
  result.undecodable = decoder.undecodable();
}

// ---------------------------------------------------------------------------------------------
// Printing

struct TableContext {
  std::string pids;               // -p as given
  std::optional<uint32_t> vcpu;
  uint64_t lost = 0;
};

constexpr int kNameWidth = 20;  // perf's decode_str_len on x86

std::string_view column_title(const host::KvmExitTable& t) {
  switch (t.event) {
    case host::KvmReportEvent::Vmexit: return t.mode == host::KvmStatMode::GuestExits ? "VM-EXIT" : "USERSPACE-EXIT";
    case host::KvmReportEvent::Ioport: return "IO Port Access";
    case host::KvmReportEvent::Mmio: return "MMIO Access";
    case host::KvmReportEvent::Msr: return "MSR Access";
    case host::KvmReportEvent::Hypercall: return "HYPERCALL";
  }
  return "?";
}

bool has_times(const host::KvmExitTable& t) { return t.mode == host::KvmStatMode::GuestExits || t.times_recorded; }

std::string mode_line(const host::KvmExitTable& t) {
  if (t.mode == host::KvmStatMode::GuestExits)
    return "Mode: VM exits (kvm:kvm_exit to the vCPU's next kvm:kvm_entry, as perf kvm stat)";
  std::string line = "Mode: exits to user space (kvm_exit/kvm_entry never fired, e.g. nested KVM); ";
  if (!t.times_recorded) return line + "times not available (no KVM_RUN entries recorded): counts only";
  return line + "time = kvm_userspace_exit to the thread's next KVM_RUN; " + std::to_string(t.timed_exits) + " of " +
         std::to_string(t.exits) + " exits timed";
}

void print_table(const host::KvmExitTable& t, const TableContext& c, std::ostream& out) {
  char line[512];
  out << mode_line(t) << "\n\n\n";
  out << "Analyze events for " << (c.pids.empty() ? std::string("all VMs, ") : "pid(s) " + c.pids + ", ");
  if (c.vcpu)
    out << "VCPU " << *c.vcpu << ":\n\n";
  else
    out << "all VCPUs:\n\n";
  const bool times = has_times(t);
  std::string title(column_title(t));
  if (times)
    std::snprintf(line, sizeof line, "%*s %10s %9s %9s %11s %11s %16s \n\n", kNameWidth, title.c_str(), "Samples", "Samples%",
                  "Time%", "Min Time", "Max Time", "Avg time");
  else
    std::snprintf(line, sizeof line, "%*s %10s %9s \n\n", kNameWidth, title.c_str(), "Samples", "Samples%");
  out << line;
  for (const host::KvmExitRow& row : t.rows) {
    // perf's columns and arithmetic (print_result in builtin-kvm.c).
    std::snprintf(line, sizeof line, "%*s %10llu %8.2f%% ", kNameWidth, row.name.c_str(),
                  static_cast<unsigned long long>(row.count),
                  static_cast<double>(row.count) / static_cast<double>(t.total_count) * 100);
    out << line;
    if (times && row.time.n > 0) {
      std::snprintf(line, sizeof line, "%8.2f%% %9.2fus %9.2fus %9.2fus ( +-%7.2f%% )",
                    static_cast<double>(row.time.total) / static_cast<double>(t.total_time) * 100,
                    static_cast<double>(row.time.min) / 1000.0, static_cast<double>(row.time.max) / 1000.0,
                    static_cast<double>(row.time.total) / static_cast<double>(row.time.n) / 1000.0,
                    row.time.relative_stddev_percent());
      out << line;
    } else if (times) {
      std::snprintf(line, sizeof line, "%9s %11s %11s %11s", "-", "-", "-", "-");  // no exit of it was timed
      out << line;
    }
    out << '\n';
  }
  if (times)
    std::snprintf(line, sizeof line, "\nTotal Samples:%llu, Total events handled time:%.2fus.\n\n",
                  static_cast<unsigned long long>(t.total_count), static_cast<double>(t.total_time) / 1000.0);
  else
    std::snprintf(line, sizeof line, "\nTotal Samples:%llu.\n\n", static_cast<unsigned long long>(t.total_count));
  out << line;
  if (c.lost) out << "\nLost events: " << c.lost << "\n\n";
}

boost::json::value table_json(const host::KvmExitTable& t, const TableContext& c) {
  boost::json::object o;
  o["mode"] = t.mode == host::KvmStatMode::GuestExits ? "vm-exits" : "userspace-exits";
  o["event"] = std::string(host::report_event_name(t.event));
  o["pids"] = c.pids.empty() ? boost::json::value(nullptr) : boost::json::value(c.pids);
  o["vcpu"] = c.vcpu ? boost::json::value(*c.vcpu) : boost::json::value(nullptr);
  const bool times = has_times(t);
  o["times"] = times;
  if (t.mode == host::KvmStatMode::UserspaceExits) {
    o["exits"] = t.exits;
    o["timed_exits"] = t.timed_exits;
  }
  boost::json::array rows;
  for (const host::KvmExitRow& row : t.rows) {
    boost::json::object r;
    r["name"] = row.name;
    r["samples"] = row.count;
    r["samples_percent"] = static_cast<double>(row.count) / static_cast<double>(t.total_count) * 100;
    if (times && row.time.n > 0) {
      r["timed"] = row.time.n;
      r["total_ns"] = row.time.total;
      if (t.total_time) r["time_percent"] = static_cast<double>(row.time.total) / static_cast<double>(t.total_time) * 100;
      r["min_ns"] = row.time.min;
      r["max_ns"] = row.time.max;
      r["avg_ns"] = static_cast<double>(row.time.total) / static_cast<double>(row.time.n);
      r["stddev_percent"] = row.time.relative_stddev_percent();
    }
    rows.push_back(std::move(r));
  }
  o["rows"] = std::move(rows);
  o["total_samples"] = t.total_count;
  if (times) o["total_time_ns"] = t.total_time;
  o["lost_events"] = c.lost;
  return o;
}

// ---------------------------------------------------------------------------------------------
// Options shared by report and live

struct ReportChoice {
  host::KvmReportEvent event;
  host::KvmSortKey key;
  host::KvmAnalysisFilter filter;
};

ReportChoice parse_report_choice(const std::string& event, const std::string& key, std::optional<uint32_t> vcpu,
                                 const std::string& pids) {
  ReportChoice c{};
  std::optional<host::KvmReportEvent> e = host::parse_report_event(event);
  if (!e) throw usage_error("unknown --event '" + event + "'", "vmexit, ioport, mmio, msr or hypercall");
  std::optional<host::KvmSortKey> k = host::parse_sort_key(key);
  if (!k) throw usage_error("unknown sort key '" + key + "'", "-k sample, time (average), max_t, min_t or mean");
  c.event = *e;
  c.key = *k;
  c.filter.vcpu = vcpu;
  if (!pids.empty())
    for (pid_t pid : parse_pid_list(pids, "-p")) c.filter.pids.insert(pid);
  return c;
}

void require_vcpus_known(const host::KvmExitAnalysis& analysis, std::optional<uint32_t> vcpu) {
  if (vcpu && analysis.mode() == host::KvmStatMode::UserspaceExits)
    throw UserError("--vcpu needs kvm:kvm_entry events (they give each thread its vCPU), and none fired in this recording",
                    "drop --vcpu: exits to user space are counted per VM only");
}

std::filesystem::path tracefs_root() {
  Result<std::filesystem::path> root = events::find_tracefs_root();
  if (!root)
    throw UserError("tracefs is not mounted: " + root.error().describe(), "mount -t tracefs nodev /sys/kernel/tracing");
  return *root;
}

bool tracepoint_exists(const std::filesystem::path& root, const KvmTracepoint& t) {
  return std::filesystem::exists(root / "events" / std::string(t.system) / std::string(t.event) / "format");
}

// The VMs named by -p as given, or the VMM pid of the libvirt domain --domain names.
// Read-write: the pid comes from the vCPU threads, which only the domain's monitor tells.
std::string target_pids(const std::string& pids, const std::string& domain, const std::string& uri, bool allow_unsafe_uri) {
  if (domain.empty()) return pids;
  if (!pids.empty()) throw usage_error("-p and --domain both name the VM", "give one of them");
  return std::to_string(domain_vmm_pid(connect_to_libvirt(uri, guest::LibvirtAccess::read_write, allow_unsafe_uri), domain));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

namespace {

// perf kvm stat record's recording: every kvm tracepoint this kernel has (KVM_RUN entries
// filtered in the kernel), every hit (-c 1), -m 1024, system-wide unless given VMs or a command.
RecordOptions kvm_stat_recording(const std::string& pids, const std::vector<std::string>& command, const std::string& output,
                                 bool quiet) {
  std::filesystem::path root = tracefs_root();
  RecordOptions record;
  for (const KvmTracepoint& t : kTracepoints)
    if (tracepoint_exists(root, t)) record.events.push_back(full_name(t));
  bool any_kvm = false;
  for (const std::string& name : record.events) any_kvm = any_kvm || name.starts_with("kvm:");
  if (!any_kvm)
    throw UserError("no kvm tracepoints in " + (root / "events").string(),
                    "load KVM (modprobe kvm_intel or kvm_amd); /dev/kvm must exist");
  if (record.events.back() == "syscalls:sys_enter_ioctl") record.filter = run_filter();
  record.period = 1;  // perf kvm stat record: -c 1, every event
  record.mmap_pages = 1024;  // and -m 1024
  record.system_wide = pids.empty() && command.empty();
  record.pids = pids;
  record.command = command;
  record.command_times_targets = true;  // perf kvm stat record -p PID -- sleep 10
  record.output = output;
  record.quiet = quiet;
  return record;
}

}  // namespace

int run_kvm_stat_record(const KvmStatRecordOptions& o, std::ostream& err) {
  const std::string pids = target_pids(o.pids, o.domain, o.uri, o.allow_unsafe_uri);
  return run_record(kvm_stat_recording(pids, o.command, o.output, o.quiet), err);
}

int run_kvm_stat_report(const KvmStatReportOptions& options, std::ostream& out, std::ostream& err) {
  KvmStatReportOptions o = options;
  o.pids = target_pids(o.pids, o.domain, o.uri, o.allow_unsafe_uri);
  ReportChoice choice = parse_report_choice(o.event, o.sort_key, o.vcpu, o.pids);
  data::PerfDataReader reader = open_perf_data(o.input, kRecordHint);
  host::KvmExitAnalysis analysis(choice.filter);
  PassResult pass;
  analyse_recording(reader, analysis, pass, nullptr, o.input, err);
  if (!pass.kvm_events_recorded)
    throw UserError(o.input + " has no kvm tracepoint events", std::string("record them: ") + std::string(kRecordHint));
  if (pass.undecodable)
    err << "vperf: warning: " << pass.undecodable << " kvm samples could not be decoded (no tracing data for their format)\n";
  if (analysis.events() == 0 && !o.domain.empty())
    throw UserError(o.input + " has no kvm events of domain " + o.domain + "'s VMM (pid " + o.pids + " now)",
                    "a domain started again since the recording runs under another pid: give the recorded one with -p");
  if (analysis.events() == 0)
    throw UserError(o.input + " has no kvm events" + (choice.filter.pids.empty() ? "" : " of pid(s) " + o.pids) +
                        ": no VM ran while it was recorded",
                    "record while a VM runs: " + std::string(kRecordHint));
  require_vcpus_known(analysis, o.vcpu);
  analysis.set_run_entries_recorded(pass.run_entries_recorded);
  host::KvmExitTable table = analysis.table(choice.event, choice.key);
  if (table.mode == host::KvmStatMode::UserspaceExits && choice.event == host::KvmReportEvent::Vmexit &&
      !pass.userspace_exits_recorded)
    err << "vperf: warning: " << o.input << " has no kvm:kvm_userspace_exit events (perf kvm stat record does not record "
        << "them): see --event ioport or mmio, or record with vperf kvm stat record\n";
  TableContext context{o.pids, o.vcpu, pass.lost};
  if (o.json)
    output::print_json(out, table_json(table, context));
  else
    print_table(table, context, out);
  return 0;
}

namespace {

// vCPU ids are below KVM_MAX_VCPU_IDS (4096 on x86 in 6.x); 2^20 is a generous bound.
constexpr int64_t kMaxVcpu = (1 << 20) - 1;
// -d: perf kvm stat live's display interval; a day is a generous bound.
constexpr double kOneDaySeconds = 24 * 3600;

// perf kvm stat live's time of day before each table.
std::string time_of_day() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  tm local{};
  char text[64] = "00:00:00.000000";
  if (::localtime_r(&tv.tv_sec, &local)) {
    char hms[16];
    std::strftime(hms, sizeof hms, "%H:%M:%S", &local);
    std::snprintf(text, sizeof text, "%s.%06ld", hms, static_cast<long>(tv.tv_usec));
  }
  return text;
}

// The live report's reader: perf.data in pipe mode from the recording in this process, read
// on a thread as it comes and fed to the analysis. When it stops reading (end of file, or
// damage it cannot read past) it closes `done`, which ends the recording's run loop, and reads
// on to the end so that the recording never blocks on a full pipe.
class LiveReader {
 public:
  LiveReader(host::KvmExitAnalysis& analysis, std::mutex& lock, std::ostream& err) : analysis_(analysis), lock_(lock), err_(err) {
    int data[2], done[2];
    if (::pipe2(data, O_CLOEXEC) != 0 || ::pipe2(done, O_CLOEXEC) != 0) throw UserError(Error::from_errno("pipe").describe(), "");
    data_read_ = ScopedFd(data[0]);
    data_write_ = ScopedFd(data[1]);
    done_read_ = ScopedFd(done[0]);
    done_write_ = ScopedFd(done[1]);
    thread_ = std::thread([this] { read(); });
  }
  ~LiveReader() { finish(); }

  int recording_fd() const { return data_write_.get(); }
  int done_fd() const { return done_read_.get(); }  // hung up once the reader stopped
  // The end of the recording: the reader sees end of file and is joined.
  void finish() {
    data_write_.reset();
    if (thread_.joinable()) thread_.join();
  }
  PassResult pass;  // under `lock`
  std::string error;

 private:
  void read() {
    try {
      Result<data::PerfDataReader> pipe = data::PerfDataReader::open_pipe(data_read_.get());
      if (!pipe) {
        std::lock_guard<std::mutex> guard(lock_);
        error = "the recording sent no perf.data: " + pipe.error().describe();
      } else {
        analyse_recording(pipe.value(), analysis_, pass, &lock_, "the recording's pipe", err_);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> guard(lock_);
      error = e.what();
    }
    done_write_.reset();
    char discard[4096];
    while (::read(data_read_.get(), discard, sizeof discard) > 0) {
    }
  }

  host::KvmExitAnalysis& analysis_;
  std::mutex& lock_;
  std::ostream& err_;
  ScopedFd data_read_, data_write_, done_read_, done_write_;
  std::thread thread_;
};

}  // namespace

int run_kvm_stat_live(const KvmStatLiveOptions& options, std::ostream& out, std::ostream& err) {
  KvmStatLiveOptions o = options;
  o.pids = target_pids(o.pids, o.domain, o.uri, o.allow_unsafe_uri);
  ReportChoice choice = parse_report_choice(o.event, o.sort_key, o.vcpu, o.pids);
  if (!(o.interval_seconds >= 0.1)) throw usage_error("-d must be at least 0.1 seconds", "e.g. -d 1");
  // The recording records the KVM_RUN entries wherever the kernel has the tracepoint.
  const bool run_entries = tracepoint_exists(tracefs_root(), kTracepoints[std::size(kTracepoints) - 1]);

  std::mutex lock;
  host::KvmExitAnalysis analysis(choice.filter);
  // The recording runs here, as perf.data in pipe mode into the reader: nothing is written to
  // disk and nothing is left behind.
  session::RecordRequest request = record_request(kvm_stat_recording(o.pids, {}, "-", true));
  LiveReader reader(analysis, lock, err);
  request.pipe_fd = reader.recording_fd();

  uint64_t lost_reported = 0;
  bool vcpu_noted = false;
  auto print_interval = [&] {
    std::lock_guard<std::mutex> guard(lock);
    if (choice.filter.vcpu && analysis.mode() == host::KvmStatMode::UserspaceExits && analysis.events() > 0 && !vcpu_noted) {
      err << "vperf: warning: --vcpu is ignored: no kvm:kvm_entry fired, so exits to user space have no vCPU; showing all\n";
      vcpu_noted = true;
    }
    analysis.set_run_entries_recorded(run_entries);
    host::KvmExitTable table = analysis.table(choice.event, choice.key);
    out << time_of_day() << '\n';
    // Exits to user space have no vCPU: the header says so rather than naming one.
    std::optional<uint32_t> vcpu = table.mode == host::KvmStatMode::GuestExits ? o.vcpu : std::nullopt;
    print_table(table, TableContext{o.pids, vcpu, reader.pass.lost - std::min(reader.pass.lost, lost_reported)}, out);
    out.flush();
    lost_reported = reader.pass.lost;
    analysis.clear_counts();
  };
  const std::chrono::nanoseconds interval(static_cast<int64_t>(o.interval_seconds * 1e9));
  request.also_wait_for = [&](session::RunLoop& loop) {
    loop.every(loop.now() + interval, interval, [&] {
      print_interval();
      return session::Next::keep_going;
    });
    loop.watch_fd(reader.done_fd(), [](short) { return session::Next::stop; });
  };
  perf::KernelPerfEventOpener opener;
  session::SystemRunClock clock;
  session::record(request, opener, clock, err);
  reader.finish();
  if (!reader.error.empty()) throw UserError(reader.error, "run 'vperf kvm stat record' to see what the recording gives");
  print_interval();
  return 0;
}

// ---------------------------------------------------------------------------------------------

namespace {

void add_domain_options(CLI::App& sub, std::string& domain, std::string& uri, bool& allow_unsafe_uri,
                        const std::string& description) {
  sub.add_option("--domain", domain, description)->check(non_empty());
  add_connect_options(sub, "--connect", uri, allow_unsafe_uri, "With --domain: ");
}

void require_domain_for_connect(const CLI::App& sub, const std::string& domain) {
  if (domain.empty() && sub.count("--connect") > 0)
    throw usage_error("--connect goes with --domain", "vperf kvm stat " + sub.get_name() + " --domain NAME --connect URI");
}

}  // namespace

void add_kvm_stat_subcommand(CLI::App& kvm, Invocation& inv) {
  CLI::App* stat = kvm.add_subcommand("stat", "VM-exit analysis from the kvm tracepoints (perf kvm stat)");
  stat->require_subcommand(1);

  auto record = std::make_shared<KvmStatRecordOptions>();
  CLI::App* rec = stat->add_subcommand("record", "Record the kvm tracepoints (every CPU, or a COMMAND, or -p PID)");
  rec->add_option("-o,--output", record->output, "Output file (default perf.data.guest; - for a pipe)")->check(non_empty());
  rec->add_option("-p,--pid", record->pids, "Record these VMM processes")->check(non_empty());
  add_domain_options(*rec, record->domain, record->uri, record->allow_unsafe_uri, "Record the VMM of this libvirt domain (as -p its pid)");
  rec->add_flag("-q,--quiet", record->quiet, "No messages");
  rec->prefix_command();
  rec->footer("COMMAND: a VMM to start and record, e.g. vperf kvm stat record -- qemu-system-x86_64 ...;\n"
              "with -p or --domain, the command the recording lasts for, e.g. vperf kvm stat record --domain vm1 -- sleep 10\n");
  rec->callback([rec, record, &inv] {
    require_domain_for_connect(*rec, record->domain);
    record->command = command_words(*rec, inv);
    inv.action = [record, &inv] { return run_kvm_stat_record(*record, *inv.err); };
  });

  auto report = std::make_shared<KvmStatReportOptions>();
  CLI::App* rep = stat->add_subcommand("report", "Analyse the VM exits of a kvm stat recording");
  rep->add_option("-i,--input", report->input, "perf.data to read (default perf.data.guest; - for a pipe)")->check(non_empty());
  rep->add_option("--event", report->event, "vmexit (default), ioport, mmio, msr or hypercall");
  rep->add_option("--vcpu", report->vcpu, "Only this vCPU")->check(whole_number_in(0, kMaxVcpu));
  rep->add_option("-k,--key", report->sort_key, "Sort by sample (default), time (average), max_t, min_t or mean");
  rep->add_option("-p,--pid", report->pids, "Only these VMs (VMM processes)")->check(non_empty());
  add_domain_options(*rep, report->domain, report->uri, report->allow_unsafe_uri, "Only the VMM of this libvirt domain (by its pid now)");
  add_json_flag(*rep, report->json);
  rep->callback([rep, report, &inv] {
    require_domain_for_connect(*rep, report->domain);
    inv.action = [report, &inv] { return run_kvm_stat_report(*report, *inv.out, *inv.err); };
  });

  auto live = std::make_shared<KvmStatLiveOptions>();
  CLI::App* liv = stat->add_subcommand("live", "Show VM exits every interval while recording, until ^C");
  liv->add_option("-d,--display", live->interval_seconds, "Seconds between tables (default 1)")
      ->check(number_in(0.01, kOneDaySeconds));
  liv->add_option("-p,--pid", live->pids, "Only these VMM processes")->check(non_empty());
  add_domain_options(*liv, live->domain, live->uri, live->allow_unsafe_uri, "Only the VMM of this libvirt domain (as -p its pid)");
  liv->add_option("--event", live->event, "vmexit (default), ioport, mmio, msr or hypercall");
  liv->add_option("--vcpu", live->vcpu, "Only this vCPU")->check(whole_number_in(0, kMaxVcpu));
  liv->add_option("-k,--key", live->sort_key, "Sort by sample (default), time (average), max_t, min_t or mean");
  liv->callback([liv, live, &inv] {
    require_domain_for_connect(*liv, live->domain);
    inv.action = [live, &inv] { return run_kvm_stat_live(*live, *inv.out, *inv.err); };
  });
}

}  // namespace vperf::cli
