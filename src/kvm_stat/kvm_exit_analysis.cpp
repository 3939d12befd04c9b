#include "kvm_stat/kvm_exit_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vperf::kvm {

namespace {

constexpr KvmReportEvent kAllViews[] = {KvmReportEvent::Vmexit, KvmReportEvent::Ioport, KvmReportEvent::Mmio,
                                        KvmReportEvent::Msr, KvmReportEvent::Hypercall};

// KVM_EXIT_* reasons whose exit is for a pio / mmio / msr / hypercall event just before it.
constexpr uint64_t kExitIo = 2, kExitHypercall = 3, kExitMmio = 6, kExitX86Rdmsr = 29, kExitX86Wrmsr = 30;

std::string hex_key(uint64_t value, std::string_view suffix) {
  // perf's "%#llx:%s" (so 0 prints as "0", as perf prints it).
  char text[48];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  std::string out = text;
  if (!suffix.empty()) out.append(":").append(suffix);
  return out;
}

// perf's decode_key for each view.
std::string pio_name(uint64_t port, uint32_t rw) { return hex_key(port, rw ? "POUT" : "PIN"); }
std::string mmio_name(uint64_t gpa, uint32_t type) {
  return hex_key(gpa, type == static_cast<uint32_t>(MmioType::Write) ? "W" : "R");
}
std::string msr_name(uint64_t ecx, uint32_t write) { return hex_key(ecx, write ? "W" : "R"); }
std::string hypercall_name(uint64_t nr) { return hex_key(nr, ""); }

std::optional<KvmReportEvent> detail_view_for_exit(uint64_t reason) {
  switch (reason) {
    case kExitIo: return KvmReportEvent::Ioport;
    case kExitMmio: return KvmReportEvent::Mmio;
    case kExitX86Rdmsr:
    case kExitX86Wrmsr: return KvmReportEvent::Msr;
    case kExitHypercall: return KvmReportEvent::Hypercall;
    default: return std::nullopt;
  }
}

double sort_value(const KvmExitRow& row, KvmSortKey key) {
  const KvmTimeStats& t = row.time;
  switch (key) {
    case KvmSortKey::Sample: return static_cast<double>(row.count);
    case KvmSortKey::Time:
    case KvmSortKey::Mean: return t.n ? t.mean : 0.0;
    case KvmSortKey::MaxTime: return static_cast<double>(t.max);
    case KvmSortKey::MinTime: return t.n ? static_cast<double>(t.min) : 0.0;
  }
  return 0;
}

}  // namespace

std::optional<KvmReportEvent> parse_report_event(std::string_view name) {
  for (KvmReportEvent event : kAllViews)
    if (report_event_name(event) == name) return event;
  return std::nullopt;
}

std::string_view report_event_name(KvmReportEvent event) {
  switch (event) {
    case KvmReportEvent::Vmexit: return "vmexit";
    case KvmReportEvent::Ioport: return "ioport";
    case KvmReportEvent::Mmio: return "mmio";
    case KvmReportEvent::Msr: return "msr";
    case KvmReportEvent::Hypercall: return "hypercall";
  }
  return "?";
}

std::optional<KvmSortKey> parse_sort_key(std::string_view name) {
  if (name == "sample") return KvmSortKey::Sample;
  if (name == "time") return KvmSortKey::Time;
  if (name == "max_t") return KvmSortKey::MaxTime;
  if (name == "min_t") return KvmSortKey::MinTime;
  if (name == "mean") return KvmSortKey::Mean;
  return std::nullopt;
}

void KvmTimeStats::add(uint64_t ns) {
  ++n;
  total += ns;
  double delta = static_cast<double>(ns) - mean;
  mean += delta / static_cast<double>(n);
  m2 += delta * (static_cast<double>(ns) - mean);
  min = std::min(min, ns);
  max = std::max(max, ns);
}

double KvmTimeStats::relative_stddev_percent() const {
  if (n < 2 || mean == 0) return 0.0;
  double variance = m2 / static_cast<double>(n - 1);
  double stddev_of_mean = std::sqrt(variance / static_cast<double>(n));
  return 100.0 * stddev_of_mean / mean;
}

KvmExitAnalysis::KvmExitAnalysis(KvmAnalysisFilter filter) : filter_(std::move(filter)) {}

void KvmExitAnalysis::add(const KvmEvent& e) {
  if (!filter_.pids.empty() && !filter_.pids.count(e.pid)) return;
  ++events_;
  if (e.kind == KvmEventKind::Exit || e.kind == KvmEventKind::Entry) saw_guest_exits_ = true;
  add_guest(e);
  add_userspace(e);
}

KvmExitAnalysis::PairStep KvmExitAnalysis::guest_step(KvmReportEvent view, const KvmEvent& e) {
  using Role = PairStep::Role;
  const bool entry = e.kind == KvmEventKind::Entry;
  switch (view) {
    case KvmReportEvent::Vmexit:
      if (e.kind == KvmEventKind::Exit)
        return {Role::Begin, RowKey{e.reason, static_cast<uint64_t>(e.isa)}, exit_reason_name(e.isa, e.reason)};
      break;
    case KvmReportEvent::Ioport:
      if (e.kind == KvmEventKind::Pio) return {Role::Begin, RowKey{e.address, e.access}, pio_name(e.address, e.access)};
      break;
    case KvmReportEvent::Mmio:
      // A read begins at the exit and learns its address from kvm_mmio read; a write is known
      // from its kvm_mmio write and ends at the entry (perf's mmio_event_begin/end).
      if (e.kind == KvmEventKind::Exit) return {Role::Begin, std::nullopt, {}};
      if (e.kind == KvmEventKind::Mmio && e.access == static_cast<uint32_t>(MmioType::Write))
        return {Role::Begin, RowKey{e.address, e.access}, mmio_name(e.address, e.access)};
      if (e.kind == KvmEventKind::Mmio && e.access == static_cast<uint32_t>(MmioType::Read))
        return {Role::End, RowKey{e.address, e.access}, mmio_name(e.address, e.access)};
      break;
    case KvmReportEvent::Msr:
      if (e.kind == KvmEventKind::Msr) return {Role::Begin, RowKey{e.address, e.access}, msr_name(e.address, e.access)};
      break;
    case KvmReportEvent::Hypercall:
      if (e.kind == KvmEventKind::Hypercall) return {Role::Begin, RowKey{e.address, 0}, hypercall_name(e.address)};
      break;
  }
  if (entry) return {Role::End, std::nullopt, {}};
  return {};
}

void KvmExitAnalysis::add_guest(const KvmEvent& e) {
  // perf keeps a thread's vCPU from its first kvm_entry (kvm_exit has it too, but perf reads
  // it from kvm_entry), and ignores the thread's events until then.
  if (e.kind == KvmEventKind::Entry) guest_threads_.try_emplace(e.tid, GuestThread{e.vcpu});
  auto thread = guest_threads_.find(e.tid);
  if (thread == guest_threads_.end()) return;
  if (filter_.vcpu && *filter_.vcpu != thread->second.vcpu) return;
  for (KvmReportEvent view : kAllViews) guest_pair(guest_views_[view], e, guest_step(view, e));
}

void KvmExitAnalysis::guest_pair(GuestView& view, const KvmEvent& e, PairStep step) {
  using Role = PairStep::Role;
  if (step.role == Role::None) return;
  PairState& state = view.threads[e.tid];
  if (step.role == Role::Begin) {
    state.start = e.time;
    state.key = step.key;
    state.name = std::move(step.name);
    return;
  }
  if (!state.start) return;  // the begin was not seen
  if (!state.key && !step.key) return;  // neither knows what it was (perf keeps waiting)
  RowKey key = state.key ? *state.key : *step.key;
  std::string name = state.key ? std::move(state.name) : std::move(step.name);
  uint64_t start = *state.start;
  state = PairState{};
  if (e.time < start) return;  // perf skips an end before its begin
  KvmExitRow& row = view.rows[key];
  if (row.name.empty()) row.name = std::move(name);
  ++row.count;
  row.time.add(e.time - start);
}

void KvmExitAnalysis::add_userspace(const KvmEvent& e) {
  UserspaceThread& thread = user_threads_[e.tid];
  auto count = [&](KvmReportEvent view, RowKey key, std::string name) {
    KvmExitRow& row = user_rows_[view][key];
    if (row.name.empty()) row.name = std::move(name);
    ++row.count;
  };
  switch (e.kind) {
    case KvmEventKind::Pio: {
      RowKey key{e.address, e.access};
      count(KvmReportEvent::Ioport, key, pio_name(e.address, e.access));
      thread.detail = PendingDetail{KvmReportEvent::Ioport, key};
      break;
    }
    case KvmEventKind::Mmio: {
      // A read the VMM completes logs "unsatisfied-read" at the exit and "read" once the value
      // is in: one access, counted at the read, timed from the exit.
      auto type = static_cast<MmioType>(e.access);
      uint32_t as = type == MmioType::Write ? e.access : static_cast<uint32_t>(MmioType::Read);
      RowKey key{e.address, as};
      if (type != MmioType::UnsatisfiedRead) count(KvmReportEvent::Mmio, key, mmio_name(e.address, as));
      if (type != MmioType::Read) thread.detail = PendingDetail{KvmReportEvent::Mmio, key};
      if (type == MmioType::UnsatisfiedRead) {
        KvmExitRow& row = user_rows_[KvmReportEvent::Mmio][key];
        if (row.name.empty()) row.name = mmio_name(e.address, as);
      }
      break;
    }
    case KvmEventKind::Msr: {
      RowKey key{e.address, e.access};
      count(KvmReportEvent::Msr, key, msr_name(e.address, e.access));
      thread.detail = PendingDetail{KvmReportEvent::Msr, key};
      break;
    }
    case KvmEventKind::Hypercall: {
      RowKey key{e.address, 0};
      count(KvmReportEvent::Hypercall, key, hypercall_name(e.address));
      thread.detail = PendingDetail{KvmReportEvent::Hypercall, key};
      break;
    }
    case KvmEventKind::UserspaceExit: {
      // Errors (KVM_RUN returned -errno, no exit) get rows of their own, apart from reasons.
      RowKey key = e.error < 0 ? RowKey{static_cast<uint64_t>(e.error), 1} : RowKey{e.reason, 0};
      count(KvmReportEvent::Vmexit, key, userspace_exit_name(e.reason, e.error));
      ++user_exits_;
      std::optional<KvmReportEvent> for_view = e.error < 0 ? std::nullopt : detail_view_for_exit(e.reason);
      thread.timed_detail.reset();
      if (for_view && thread.detail && thread.detail->event == *for_view) thread.timed_detail = thread.detail;
      thread.detail.reset();
      thread.exit_start = e.time;
      thread.exit_key = key;
      break;
    }
    case KvmEventKind::RunIoctl: {
      if (thread.exit_start && e.time >= *thread.exit_start) {
        uint64_t took = e.time - *thread.exit_start;
        user_rows_[KvmReportEvent::Vmexit][thread.exit_key].time.add(took);
        if (thread.timed_detail) user_rows_[thread.timed_detail->event][thread.timed_detail->key].time.add(took);
        ++user_timed_exits_;
      }
      thread.exit_start.reset();
      thread.timed_detail.reset();
      thread.detail.reset();  // a new run: whatever the guest did before is handled
      break;
    }
    case KvmEventKind::Exit:
    case KvmEventKind::Entry: break;
  }
}

KvmExitTable KvmExitAnalysis::table(KvmReportEvent event, KvmSortKey key) const {
  KvmExitTable out;
  out.mode = mode();
  out.event = event;
  const Rows* rows = nullptr;
  if (out.mode == KvmStatMode::GuestExits) {
    auto view = guest_views_.find(event);
    if (view != guest_views_.end()) rows = &view->second.rows;
  } else {
    auto view = user_rows_.find(event);
    if (view != user_rows_.end()) rows = &view->second;
    out.times_recorded = run_entries_recorded_;
    out.exits = user_exits_;
    out.timed_exits = user_timed_exits_;
  }
  if (rows)
    for (const auto& [row_key, row] : *rows) {
      if (row.count == 0) continue;  // perf's event_is_valid
      out.rows.push_back(row);
      out.total_count += row.count;
      out.total_time += row.time.total;
    }
  std::stable_sort(out.rows.begin(), out.rows.end(), [key](const KvmExitRow& a, const KvmExitRow& b) {
    double va = sort_value(a, key), vb = sort_value(b, key);
    if (va != vb) return va > vb;
    return a.name < b.name;
  });
  return out;
}

void KvmExitAnalysis::clear_counts() {
  for (auto& [event, view] : guest_views_) view.rows.clear();
  user_rows_.clear();
  user_exits_ = 0;
  user_timed_exits_ = 0;
  events_ = 0;
}

}  // namespace vperf::kvm
