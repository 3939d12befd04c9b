// KvmExitAnalysis on synthetic event sequences whose counts and times are worked out by hand:
// perf kvm stat's pairing (builtin-kvm.c) for VM exits, and the exits-to-user-space analysis.
#include "kvm_stat/kvm_exit_analysis.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vperf::kvm {
namespace {

constexpr pid_t kVm = 4242;

KvmEvent entry(pid_t tid, uint64_t time, uint32_t vcpu = 0) {
  return KvmEvent{.kind = KvmEventKind::Entry, .pid = kVm, .tid = tid, .time = time, .vcpu = vcpu};
}
KvmEvent vm_exit(pid_t tid, uint64_t time, uint64_t reason, KvmIsa isa = KvmIsa::Vmx) {
  return KvmEvent{.kind = KvmEventKind::Exit, .pid = kVm, .tid = tid, .time = time, .reason = reason, .isa = isa};
}
KvmEvent pio(pid_t tid, uint64_t time, uint64_t port, uint32_t rw) {
  return KvmEvent{.kind = KvmEventKind::Pio, .pid = kVm, .tid = tid, .time = time, .address = port, .access = rw, .size = 1};
}
KvmEvent mmio(pid_t tid, uint64_t time, uint64_t gpa, MmioType type) {
  return KvmEvent{.kind = KvmEventKind::Mmio, .pid = kVm, .tid = tid, .time = time, .address = gpa,
                  .access = static_cast<uint32_t>(type), .size = 4};
}
KvmEvent user_exit(pid_t tid, uint64_t time, uint64_t reason, int64_t error = 0) {
  return KvmEvent{.kind = KvmEventKind::UserspaceExit, .pid = kVm, .tid = tid, .time = time, .reason = reason, .error = error};
}
KvmEvent run(pid_t tid, uint64_t time) {
  return KvmEvent{.kind = KvmEventKind::RunIoctl, .pid = kVm, .tid = tid, .time = time};
}

const KvmExitRow* row(const KvmExitTable& t, const std::string& name) {
  for (const KvmExitRow& r : t.rows)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> names(const KvmExitTable& t) {
  std::vector<std::string> out;
  for (const KvmExitRow& r : t.rows) out.push_back(r.name);
  return out;
}

// Two IO exits of 500 and 1000 ns, one EPT violation of 200 ns, an exit never re-entered.
void add_vmx_sequence(KvmExitAnalysis& a) {
  a.add(entry(100, 1000));
  a.add(vm_exit(100, 2000, 30));
  a.add(entry(100, 2500));
  a.add(vm_exit(100, 3000, 30));
  a.add(entry(100, 4000));
  a.add(vm_exit(100, 5000, 48));
  a.add(entry(100, 5200));
  a.add(vm_exit(100, 6000, 1));  // no entry follows: not a sample
}

TEST(KvmExitAnalysis, PairsEachExitWithTheNextEntryOfItsThread) {
  KvmExitAnalysis a;
  add_vmx_sequence(a);
  EXPECT_EQ(a.mode(), KvmStatMode::GuestExits);
  KvmExitTable t = a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample);
  EXPECT_EQ(t.mode, KvmStatMode::GuestExits);
  ASSERT_EQ(names(t), (std::vector<std::string>{"IO_INSTRUCTION", "EPT_VIOLATION"}));
  const KvmExitRow& io = t.rows[0];
  EXPECT_EQ(io.count, 2u);
  EXPECT_EQ(io.time.n, 2u);
  EXPECT_EQ(io.time.min, 500u);
  EXPECT_EQ(io.time.max, 1000u);
  EXPECT_EQ(io.time.total, 1500u);
  EXPECT_DOUBLE_EQ(io.time.mean, 750.0);
  // perf's rel_stddev_stats: sd = sqrt(((250^2 + 250^2) / 1) / 2) = 250, of a mean of 750.
  EXPECT_NEAR(io.time.relative_stddev_percent(), 100.0 / 3.0, 1e-9);
  const KvmExitRow& ept = t.rows[1];
  EXPECT_EQ(ept.count, 1u);
  EXPECT_EQ(ept.time.min, 200u);
  EXPECT_EQ(ept.time.max, 200u);
  EXPECT_EQ(ept.time.relative_stddev_percent(), 0.0);  // one sample
  EXPECT_EQ(t.total_count, 3u);
  EXPECT_EQ(t.total_time, 1700u);
}

TEST(KvmExitAnalysis, SortsByTheChosenKeyLargestFirst) {
  KvmExitAnalysis a;
  add_vmx_sequence(a);
  a.add(vm_exit(100, 7000, 12));  // a long HLT: 5000 ns
  a.add(entry(100, 12000));
  EXPECT_EQ(names(a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample)),
            (std::vector<std::string>{"IO_INSTRUCTION", "EPT_VIOLATION", "HLT"}));  // 2, then 1 and 1 by name
  EXPECT_EQ(names(a.table(KvmReportEvent::Vmexit, KvmSortKey::Time)),
            (std::vector<std::string>{"HLT", "IO_INSTRUCTION", "EPT_VIOLATION"}));  // averages 5000, 750, 200
  EXPECT_EQ(names(a.table(KvmReportEvent::Vmexit, KvmSortKey::MinTime)),
            (std::vector<std::string>{"HLT", "IO_INSTRUCTION", "EPT_VIOLATION"}));  // 5000, 500, 200
  EXPECT_EQ(names(a.table(KvmReportEvent::Vmexit, KvmSortKey::MaxTime)),
            (std::vector<std::string>{"HLT", "IO_INSTRUCTION", "EPT_VIOLATION"}));
}

TEST(KvmExitAnalysis, IgnoresAThreadUntilItsFirstEntryAsPerf) {
  KvmExitAnalysis a;
  a.add(vm_exit(7, 100, 30));
  a.add(entry(7, 200));  // ends nothing: the exit came before perf knew the thread's vCPU
  a.add(vm_exit(7, 300, 30));
  a.add(entry(7, 350));
  KvmExitTable t = a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].count, 1u);
  EXPECT_EQ(t.rows[0].time.total, 50u);
}

TEST(KvmExitAnalysis, VcpuFilterKeepsOneVcpusThreads) {
  KvmExitAnalysis a(KvmAnalysisFilter{.vcpu = 1, .pids = {}});
  a.add(entry(10, 100, 0));
  a.add(entry(11, 100, 1));
  a.add(vm_exit(10, 200, 30));
  a.add(vm_exit(11, 210, 12));
  a.add(entry(10, 400, 0));
  a.add(entry(11, 610, 1));
  KvmExitTable t = a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample);
  ASSERT_EQ(names(t), (std::vector<std::string>{"HLT"}));
  EXPECT_EQ(t.rows[0].time.total, 400u);
}

TEST(KvmExitAnalysis, DecodesSvmExitCodes) {
  KvmExitAnalysis a;
  a.add(entry(1, 10));
  a.add(vm_exit(1, 20, 0x7b, KvmIsa::Svm));
  a.add(entry(1, 30));
  a.add(vm_exit(1, 40, 0x400, KvmIsa::Svm));
  a.add(entry(1, 45));
  EXPECT_EQ(names(a.table(KvmReportEvent::Vmexit, KvmSortKey::Time)), (std::vector<std::string>{"io", "npf"}));
}

TEST(KvmExitAnalysis, IoportAndMmioViewsPairAsPerf) {
  KvmExitAnalysis a;
  a.add(entry(1, 10));
  // out 0x10: kvm_exit, kvm_pio, kvm_entry: the port is timed from kvm_pio.
  a.add(vm_exit(1, 100, 30));
  a.add(pio(1, 110, 0x10, 1));
  a.add(entry(1, 170));
  // an MMIO read: from kvm_exit to the kvm_mmio read that names the address.
  a.add(vm_exit(1, 200, 49));
  a.add(mmio(1, 260, 0xfee00000, MmioType::Read));
  a.add(entry(1, 300));
  // an MMIO write: from kvm_mmio write to kvm_entry.
  a.add(vm_exit(1, 400, 49));
  a.add(mmio(1, 410, 0xfee000b0, MmioType::Write));
  a.add(entry(1, 490));
  KvmExitTable ports = a.table(KvmReportEvent::Ioport, KvmSortKey::Sample);
  ASSERT_EQ(names(ports), (std::vector<std::string>{"0x10:POUT"}));
  EXPECT_EQ(ports.rows[0].time.total, 60u);
  KvmExitTable mmios = a.table(KvmReportEvent::Mmio, KvmSortKey::Time);
  ASSERT_EQ(names(mmios), (std::vector<std::string>{"0xfee000b0:W", "0xfee00000:R"}));
  EXPECT_EQ(row(mmios, "0xfee00000:R")->time.total, 60u);
  EXPECT_EQ(row(mmios, "0xfee000b0:W")->time.total, 80u);
}

TEST(KvmExitAnalysis, WithoutGuestExitsCountsExitsToUserSpaceAndTimesThemToTheNextRun) {
  KvmExitAnalysis a;
  a.set_run_entries_recorded(true);
  a.add(run(5, 0));
  a.add(pio(5, 100, 0x10, 1));
  a.add(user_exit(5, 110, 2));  // IO
  a.add(run(5, 160));           // handled in 50 ns
  a.add(pio(5, 200, 0x10, 1));
  a.add(user_exit(5, 210, 2));
  a.add(run(5, 310));           // 100 ns
  a.add(pio(5, 400, 0x61, 0));  // handled in the kernel: no exit to user space follows it
  a.add(user_exit(5, 500, 5));  // HLT, the VM's last exit: never re-entered
  EXPECT_EQ(a.mode(), KvmStatMode::UserspaceExits);

  KvmExitTable exits = a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample);
  EXPECT_EQ(exits.mode, KvmStatMode::UserspaceExits);
  EXPECT_TRUE(exits.times_recorded);
  EXPECT_EQ(exits.exits, 3u);
  EXPECT_EQ(exits.timed_exits, 2u);
  ASSERT_EQ(names(exits), (std::vector<std::string>{"IO", "HLT"}));
  EXPECT_EQ(exits.rows[0].count, 2u);
  EXPECT_EQ(exits.rows[0].time.n, 2u);
  EXPECT_EQ(exits.rows[0].time.min, 50u);
  EXPECT_EQ(exits.rows[0].time.max, 100u);
  EXPECT_EQ(exits.rows[0].time.total, 150u);
  EXPECT_EQ(exits.rows[1].count, 1u);
  EXPECT_EQ(exits.rows[1].time.n, 0u);  // counted, not timed
  EXPECT_EQ(exits.total_count, 3u);
  EXPECT_EQ(exits.total_time, 150u);

  KvmExitTable ports = a.table(KvmReportEvent::Ioport, KvmSortKey::Sample);
  ASSERT_EQ(names(ports), (std::vector<std::string>{"0x10:POUT", "0x61:PIN"}));
  EXPECT_EQ(ports.rows[0].count, 2u);
  EXPECT_EQ(ports.rows[0].time.total, 150u);
  EXPECT_EQ(ports.rows[1].count, 1u);
  EXPECT_EQ(ports.rows[1].time.n, 0u);  // the HLT exit is not the in-kernel pio's
}

TEST(KvmExitAnalysis, CountsAnMmioReadTheVmmCompletesOnce) {
  KvmExitAnalysis a;
  a.set_run_entries_recorded(true);
  a.add(mmio(3, 10, 0x1000, MmioType::UnsatisfiedRead));
  a.add(user_exit(3, 20, 6));  // MMIO
  a.add(run(3, 50));
  a.add(mmio(3, 55, 0x1000, MmioType::Read));  // the value the VMM supplied
  a.add(mmio(3, 100, 0x1000, MmioType::Write));
  a.add(user_exit(3, 105, 6));
  a.add(run(3, 125));
  KvmExitTable t = a.table(KvmReportEvent::Mmio, KvmSortKey::Sample);
  ASSERT_EQ(names(t), (std::vector<std::string>{"0x1000:R", "0x1000:W"}));
  EXPECT_EQ(t.rows[0].count, 1u);
  EXPECT_EQ(t.rows[0].time.total, 30u);
  EXPECT_EQ(t.rows[1].count, 1u);
  EXPECT_EQ(t.rows[1].time.total, 20u);
}

TEST(KvmExitAnalysis, WithoutRunEntriesThereAreCountsOnly) {
  KvmExitAnalysis a;
  a.add(user_exit(3, 20, 2));
  a.add(user_exit(3, 40, 2));
  a.add(user_exit(3, 60, 0, -4));  // KVM_RUN interrupted by a signal
  KvmExitTable t = a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample);
  EXPECT_FALSE(t.times_recorded);
  EXPECT_EQ(t.timed_exits, 0u);
  ASSERT_EQ(names(t), (std::vector<std::string>{"IO", "restart"}));
  EXPECT_EQ(t.rows[0].count, 2u);
  EXPECT_EQ(t.total_time, 0u);
}

TEST(KvmExitAnalysis, PidFilterAndIntervals) {
  KvmExitAnalysis a(KvmAnalysisFilter{.vcpu = std::nullopt, .pids = {kVm}});
  KvmEvent other = user_exit(9, 10, 2);
  other.pid = 1;
  a.add(other);
  EXPECT_EQ(a.events(), 0u);
  a.add(entry(1, 100));
  a.add(vm_exit(1, 1000, 30));
  a.clear_counts();  // a live interval ends while the exit is under way
  EXPECT_TRUE(a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample).rows.empty());
  a.add(entry(1, 1500));
  KvmExitTable t = a.table(KvmReportEvent::Vmexit, KvmSortKey::Sample);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].time.total, 500u);
}

TEST(KvmExitAnalysis, ParsesEventsAndSortKeys) {
  EXPECT_EQ(parse_report_event("vmexit"), KvmReportEvent::Vmexit);
  EXPECT_EQ(parse_report_event("ioport"), KvmReportEvent::Ioport);
  EXPECT_EQ(parse_report_event("mmio"), KvmReportEvent::Mmio);
  EXPECT_EQ(parse_report_event("exits"), std::nullopt);
  EXPECT_EQ(parse_sort_key("sample"), KvmSortKey::Sample);
  EXPECT_EQ(parse_sort_key("time"), KvmSortKey::Time);
  EXPECT_EQ(parse_sort_key("max_t"), KvmSortKey::MaxTime);
  EXPECT_EQ(parse_sort_key("min_t"), KvmSortKey::MinTime);
  EXPECT_EQ(parse_sort_key("mean"), KvmSortKey::Mean);
  EXPECT_EQ(parse_sort_key("avg"), std::nullopt);
}

}  // namespace
}  // namespace vperf::kvm
