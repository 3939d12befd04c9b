#pragma once
// VM-exit analysis (vperf kvm stat report): a time-ordered stream of decoded kvm tracepoint
// events in, one table of exits out. Pure logic: the events come from perf.data samples
// (kvm/kvm_recording.h decodes them) or, in tests, from synthetic sequences.
//
// Two modes, chosen by what the recording holds:
//
// Guest exits (perf kvm stat's own analysis; when kvm:kvm_exit / kvm:kvm_entry fired): each
// view pairs a begin event with the vCPU thread's next end event and times the gap, as perf
// 6.1's builtin-kvm.c does:
//   vmexit     kvm_exit (key: exit reason)               -> kvm_entry
//   ioport     kvm_pio (key: port, read/write)           -> kvm_entry
//   mmio       kvm_exit, or kvm_mmio write (key: gpa, W) -> kvm_entry, or kvm_mmio read (key: gpa, R)
//   msr        kvm_msr (key: MSR, read/write)            -> kvm_entry
//   hypercall  kvm_hypercall (key: nr)                   -> kvm_entry
// A thread counts only from its first kvm_entry on (which gives its vCPU id); an end with no
// begin, or a pair whose key stayed unknown, is not counted. Samples = the timed pairs.
//
// Exits to user space (when kvm_exit/kvm_entry never fired, e.g. under nested KVM, where L0
// handles the exits and L1's KVM only sees what it must pass on to its VMM): every
// kvm:kvm_userspace_exit counts under its KVM_EXIT_* reason, and every kvm_pio / kvm_mmio /
// kvm_msr / kvm_hypercall under its port, address, MSR or number (a kvm_mmio read is counted
// once: the "unsatisfied-read" the kernel logs before asking the VMM is not a second access).
// Times, when the recording has the thread's KVM_RUN entries (syscalls:sys_enter_ioctl with
// cmd KVM_RUN): from kvm_userspace_exit to the same thread's next KVM_RUN, i.e. how long the
// VMM took to handle the exit; a pio/mmio/msr/hypercall row gets that time when its event was
// the one the exit was for (IO, MMIO, X86_RDMSR/WRMSR, HYPERCALL). An exit with no later
// KVM_RUN (the last one of a VM) is counted but not timed.
#include <sys/types.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kvm_stat/kvm_exit_reasons.h"

namespace vperf::kvm {

enum class KvmEventKind {
  Exit,           // kvm:kvm_exit
  Entry,          // kvm:kvm_entry
  UserspaceExit,  // kvm:kvm_userspace_exit
  Pio,            // kvm:kvm_pio
  Mmio,           // kvm:kvm_mmio
  Msr,            // kvm:kvm_msr
  Hypercall,      // kvm:kvm_hypercall
  RunIoctl,       // syscalls:sys_enter_ioctl with cmd KVM_RUN: the VMM re-enters the vCPU
};

// kvm_mmio's type field (include/trace/events/kvm.h).
enum class MmioType : uint32_t { UnsatisfiedRead = 0, Read = 1, Write = 2 };

// One tracepoint sample, its fields decoded. Which fields matter depends on kind.
struct KvmEvent {
  KvmEventKind kind = KvmEventKind::Exit;
  pid_t pid = -1;
  pid_t tid = -1;
  uint64_t time = 0;          // ns
  uint32_t vcpu = 0;          // Exit, Entry: vcpu_id
  uint64_t reason = 0;        // Exit: exit_reason; UserspaceExit: reason
  KvmIsa isa = KvmIsa::Vmx;   // Exit
  int64_t error = 0;          // UserspaceExit: errno (< 0: KVM_RUN failed instead of exiting)
  uint64_t address = 0;       // Pio: port; Mmio: gpa; Msr: ecx; Hypercall: nr
  uint32_t access = 0;        // Pio: rw (1 write); Mmio: type (MmioType); Msr: write (1)
  uint32_t size = 0;          // Pio: size; Mmio: len
};

enum class KvmStatMode { GuestExits, UserspaceExits };
// --event: what the rows are.
enum class KvmReportEvent { Vmexit, Ioport, Mmio, Msr, Hypercall };
// -k: perf 6.1's sample (count) and time (average time); max_t, min_t and mean as later perfs.
enum class KvmSortKey { Sample, Time, MaxTime, MinTime, Mean };

std::optional<KvmReportEvent> parse_report_event(std::string_view name);
std::optional<KvmSortKey> parse_sort_key(std::string_view name);
// "vmexit", "ioport", ...
std::string_view report_event_name(KvmReportEvent event);

// Handling times of one row (perf's struct stats, Welford's running mean and M2).
struct KvmTimeStats {
  uint64_t n = 0;
  uint64_t total = 0;  // ns
  uint64_t min = std::numeric_limits<uint64_t>::max();
  uint64_t max = 0;
  double mean = 0;
  double m2 = 0;

  void add(uint64_t ns);
  // perf's rel_stddev_stats(stddev_stats(), avg_stats()): the standard error of the mean as a
  // percentage of the mean; 0 below two samples.
  double relative_stddev_percent() const;
};

struct KvmExitRow {
  std::string name;    // "IO_INSTRUCTION", "0x10:POUT", "IO", ...
  uint64_t count = 0;  // Samples
  KvmTimeStats time;   // guest exits: time.n == count; user space: the timed ones
};

struct KvmExitTable {
  KvmStatMode mode = KvmStatMode::GuestExits;
  KvmReportEvent event = KvmReportEvent::Vmexit;
  std::vector<KvmExitRow> rows;  // sorted by the key, largest first; ties by name
  uint64_t total_count = 0;
  uint64_t total_time = 0;  // ns, over the rows' timed samples
  // User space mode: whether the recording has KVM_RUN entries, so that times exist at all;
  // and how many of the exits were timed.
  bool times_recorded = true;
  uint64_t exits = 0;
  uint64_t timed_exits = 0;
};

struct KvmAnalysisFilter {
  std::optional<uint32_t> vcpu;  // --vcpu: guest exits mode only (user space exits carry no vCPU)
  std::set<pid_t> pids;          // -p: empty = all
};

class KvmExitAnalysis {
 public:
  explicit KvmExitAnalysis(KvmAnalysisFilter filter = {});

  // The recording has the KVM_RUN entries user space exit times need.
  void set_run_entries_recorded(bool recorded) { run_entries_recorded_ = recorded; }

  // Events must come in time order (per thread at least).
  void add(const KvmEvent& event);

  // Guest exits when any kvm_exit or kvm_entry was seen, else user space exits.
  KvmStatMode mode() const { return saw_guest_exits_ ? KvmStatMode::GuestExits : KvmStatMode::UserspaceExits; }
  // Events added that the analysis used (after the filter).
  uint64_t events() const { return events_; }

  KvmExitTable table(KvmReportEvent event, KvmSortKey key) const;

  // A new interval (live mode): the counts start again; exits under way stay under way.
  void clear_counts();

 private:
  using RowKey = std::pair<uint64_t, uint64_t>;  // perf's event_key {key, info}
  using Rows = std::map<RowKey, KvmExitRow>;

  // perf's begin/end pairing for one guest exits view, per thread.
  struct PairState {
    std::optional<uint64_t> start;  // a begin under way
    std::optional<RowKey> key;
    std::string name;
  };
  struct GuestView {
    Rows rows;
    std::unordered_map<pid_t, PairState> threads;
  };
  struct GuestThread {
    uint32_t vcpu = 0;  // from its first kvm_entry
  };
  // What the next user space exit of a thread may be for.
  struct PendingDetail {
    KvmReportEvent event;
    RowKey key;
  };
  struct UserspaceThread {
    std::optional<PendingDetail> detail;
    std::optional<uint64_t> exit_start;  // in user space after an exit since then
    RowKey exit_key{};
    std::optional<PendingDetail> timed_detail;
  };

  void add_guest(const KvmEvent& e);
  void add_userspace(const KvmEvent& e);
  // What one event is to one view: a begin, an end, or nothing; with the key it knows, if any.
  struct PairStep {
    enum class Role { None, Begin, End } role = Role::None;
    std::optional<RowKey> key;
    std::string name;
  };
  static PairStep guest_step(KvmReportEvent view, const KvmEvent& e);
  void guest_pair(GuestView& view, const KvmEvent& e, PairStep step);

  KvmAnalysisFilter filter_;
  bool run_entries_recorded_ = false;
  bool saw_guest_exits_ = false;
  uint64_t events_ = 0;

  std::unordered_map<pid_t, GuestThread> guest_threads_;
  std::map<KvmReportEvent, GuestView> guest_views_;

  std::map<KvmReportEvent, Rows> user_rows_;
  std::unordered_map<pid_t, UserspaceThread> user_threads_;
  uint64_t user_exits_ = 0;
  uint64_t user_timed_exits_ = 0;
};

}  // namespace vperf::kvm
