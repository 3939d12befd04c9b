// vperf kvm stat: see cmd_kvm_stat.h and docs/kvm-stat.md.
#include "cli/cmd_kvm_stat.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>

#include "cli/perf_record_options.h"
#include "cli/libvirt_connect.h"
#include "guest/domain_guest_mount.h"
#include "cli/target_options.h"
#include "core/error.h"
#include "data/perf_data_reader.h"
#include "session/reading_session.h"
#include "tracing/tracefs.h"
#include "kvm_stat/kvm_live_display.h"
#include "kvm_stat/kvm_live_reader.h"
#include "kvm_stat/kvm_recording.h"
#include "kvm_stat/kvm_stat_table.h"
#include "kvm_stat/kvm_tracepoints.h"
#include "output/json.h"
#include "perf/event_fd.h"
#include "session/record_session.h"

namespace vperf::cli {

namespace {

constexpr std::string_view kRecordHint = "vperf kvm stat record -- VMM ARGS (or -a for every VM)";

// Options shared by report and live.
struct ReportChoice {
  kvm::KvmReportEvent event;
  kvm::KvmSortKey key;
  kvm::KvmAnalysisFilter filter;
};

ReportChoice parse_report_choice(const std::string& event, const std::string& key, std::optional<uint32_t> vcpu,
                                 const std::string& pids) {
  ReportChoice c{};
  std::optional<kvm::KvmReportEvent> e = kvm::parse_report_event(event);
  if (!e) throw usage_error("unknown --event '" + event + "'", "vmexit, ioport, mmio, msr or hypercall");
  std::optional<kvm::KvmSortKey> k = kvm::parse_sort_key(key);
  if (!k) throw usage_error("unknown sort key '" + key + "'", "-k sample, time (average), max_t, min_t or mean");
  c.event = *e;
  c.key = *k;
  c.filter.vcpu = vcpu;
  if (!pids.empty())
    for (pid_t pid : parse_pid_list(pids, "-p")) c.filter.pids.insert(pid);
  return c;
}

void require_vcpus_known(const kvm::KvmExitAnalysis& analysis, std::optional<uint32_t> vcpu) {
  if (vcpu && analysis.mode() == kvm::KvmStatMode::UserspaceExits)
    throw UserError("--vcpu needs kvm:kvm_entry events (they give each thread its vCPU), and none fired in this recording",
                    "drop --vcpu: exits to user space are counted per VM only");
}

tracing::Tracefs open_tracefs() {
  Result<tracing::Tracefs> tracefs = tracing::Tracefs::open_mounted();
  if (!tracefs) throw user_error(tracefs.error());
  return std::move(tracefs).value();
}

// The VMs named by -p as given, or the VMM pid of the libvirt domain --domain names.
// Read-write: the pid comes from the vCPU threads, which only the domain's monitor tells.
std::string target_pids(const std::string& pids, const std::string& domain, const std::string& uri, bool allow_unsafe_uri) {
  if (domain.empty()) return pids;
  if (!pids.empty()) throw usage_error("-p and --domain both name the VM", "give one of them");
  Result<pid_t> pid = guest::domain_vmm_pid(connect_to_libvirt(uri, guest::LibvirtAccess::read_write, allow_unsafe_uri), domain);
  if (!pid) throw user_error(pid.error());
  return std::to_string(*pid);
}

// perf kvm stat record's recording: every kvm tracepoint this kernel has (KVM_RUN entries
// filtered in the kernel), every hit (-c 1), -m 1024, system-wide unless given VMs or a command.
RecordOptions kvm_stat_recording(const std::string& pids, const std::vector<std::string>& command, const std::string& output,
                                 bool quiet) {
  Result<kvm::KvmRecordEvents> recorded = kvm::kvm_record_events(open_tracefs());
  if (!recorded) throw user_error(recorded.error());
  RecordOptions record;
  record.events = recorded->events;
  record.request.tracepoint_filters = recorded->filters;
  record.period = 1;  // perf kvm stat record: -c 1, every event
  record.request.mmap_pages = 1024;  // and -m 1024
  record.system_wide = pids.empty() && command.empty();
  record.pids = pids;
  record.request.command = command;
  record.request.output = output;
  record.request.quiet = quiet;
  return record;
}

}  // namespace

int run_kvm_stat_record(const KvmStatRecordOptions& o, std::ostream& err) {
  const std::string pids = target_pids(o.pids, o.domain, o.uri, o.allow_unsafe_uri);
  RecordOptions recording = kvm_stat_recording(pids, o.command, o.output, o.quiet);
  recording.request.cmdline = o.cmdline;
  return run_record(recording, err);
}

int run_kvm_stat_report(const KvmStatReportOptions& options, std::ostream& out, std::ostream& err) {
  KvmStatReportOptions o = options;
  o.pids = target_pids(o.pids, o.domain, o.uri, o.allow_unsafe_uri);
  ReportChoice choice = parse_report_choice(o.event, o.sort_key, o.vcpu, o.pids);
  session::ReadingSession recording(session::ReadingInput{.input = o.input}, std::string(kRecordHint));
  kvm::KvmExitAnalysis analysis(choice.filter);
  kvm::KvmPass pass;
  if (Result<void> read = kvm::analyse_kvm_recording(recording.reader(), analysis, pass, nullptr, err); !read)
    throw user_error(read.error());
  if (pass.unreadable) throw recording.unreadable(*pass.unreadable);
  if (std::optional<Error> problem =
          kvm::kvm_report_problem(pass, analysis, {o.input, std::string(kRecordHint), o.domain, o.pids}, err))
    throw user_error(*problem);
  require_vcpus_known(analysis, o.vcpu);
  analysis.set_run_entries_recorded(pass.run_entries_recorded);
  kvm::KvmExitTable table = analysis.table(choice.event, choice.key);
  if (table.mode == kvm::KvmStatMode::UserspaceExits && choice.event == kvm::KvmReportEvent::Vmexit &&
      !pass.userspace_exits_recorded)
    err << "vperf: warning: " << o.input << " has no kvm:kvm_userspace_exit events (perf kvm stat record does not record "
        << "them): see --event ioport or mmio, or record with vperf kvm stat record\n";
  kvm::KvmTableContext context{o.pids, o.vcpu, pass.lost};
  if (o.json)
    output::print_json(out, kvm::kvm_table_json(table, context));
  else
    kvm::print_kvm_table(table, context, out);
  return 0;
}

namespace {

// vCPU ids are below KVM_MAX_VCPU_IDS (4096 on x86 in 6.x); 2^20 is a generous bound.
constexpr int64_t kMaxVcpu = (1 << 20) - 1;
// -d: perf kvm stat live's display interval; a day is a generous bound.
constexpr double kOneDaySeconds = 24 * 3600;

}  // namespace

int run_kvm_stat_live(const KvmStatLiveOptions& options, std::ostream& out, std::ostream& err) {
  KvmStatLiveOptions o = options;
  o.pids = target_pids(o.pids, o.domain, o.uri, o.allow_unsafe_uri);
  ReportChoice choice = parse_report_choice(o.event, o.sort_key, o.vcpu, o.pids);
  if (!(o.interval_seconds >= 0.1)) throw usage_error("-d must be at least 0.1 seconds", "e.g. -d 1");
  // The recording records the KVM_RUN entries wherever the kernel has the tracepoint.
  const bool run_entries = kvm::tracepoint_exists(open_tracefs(), kvm::kvm_tracepoint(kvm::KvmEventKind::RunIoctl));

  std::mutex lock;
  kvm::KvmExitAnalysis analysis(choice.filter);
  // The recording runs here, as perf.data in pipe mode into the reader: nothing is written to
  // disk and nothing is left behind.
  session::RecordRequest request = record_request(kvm_stat_recording(o.pids, {}, "-", true));
  kvm::KvmLiveReader reader(analysis, lock, err);
  request.pipe_fd = reader.recording_fd();

  kvm::KvmLiveDisplay display(analysis, lock, reader, {choice.event, choice.key, o.pids, o.vcpu, run_entries});
  auto print_interval = [&] { display.print_interval(out, err); };
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
  if (reader.pass.unreadable) throw session::unreadable_recording("the recording's pipe", *reader.pass.unreadable);
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

void add_kvm_stat_subcommand(CLI::App& kvm, Invocation& inv, std::shared_ptr<const KvmOptions> kvm_options) {
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
  rec->callback([rec, record, kvm_options, &inv] {
    require_domain_for_connect(*rec, record->domain);
    record->command = command_words(*rec, inv);
    record->cmdline = inv.cmdline;
    if (rec->count("--output") == 0 && !kvm_options->file.empty()) record->output = kvm_options->file;
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
  rep->callback([rep, report, kvm_options, &inv] {
    require_domain_for_connect(*rep, report->domain);
    if (rep->count("--input") == 0 && !kvm_options->file.empty()) report->input = kvm_options->file;
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
