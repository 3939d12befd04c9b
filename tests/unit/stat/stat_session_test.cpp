#include "stat/stat_session.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

#include "core/error.h"

namespace vperf::stat {
namespace {

// A fake kernel for the hardware paths this PMU-less machine cannot take: `answer` decides,
// per attr and place, either an errno or the bytes a read() of the counter returns.
struct Opened {
  perf_event_attr attr;
  perf::OpenTarget target;
};

class ScriptedKernel final : public perf::PerfEventOpener {
 public:
  using Answer = std::function<Result<std::vector<uint64_t>>(const perf_event_attr&, const perf::OpenTarget&)>;
  explicit ScriptedKernel(Answer answer) : answer_(std::move(answer)) {}
  mutable std::vector<Opened> opened;

  Result<perf::EventFd> open(const perf_event_attr& attr, const perf::OpenTarget& target) const override {
    Result<std::vector<uint64_t>> words = answer_(attr, target);
    if (!words) return words.error();
    opened.push_back({attr, target});
    int fds[2];
    if (::pipe(fds) != 0) return Error::from_errno("pipe");
    size_t size = words->size() * sizeof(uint64_t);
    if (::write(fds[1], words->data(), size) != static_cast<ssize_t>(size)) return Error::from_errno("write");
    ::close(fds[1]);
    return perf::EventFd(ScopedFd(fds[0]));
  }

 private:
  Answer answer_;
};

Error refused(int errno_value) { return Error{"perf_event_open", errno_value}; }

events::ResolvedEvent event(std::string name, uint32_t type, uint64_t config) {
  events::ResolvedEvent e;
  e.name = name;
  e.written = name;
  e.type = type;
  e.config = config;
  e.pmu = type == PERF_TYPE_SOFTWARE ? "software" : "cpu";
  return e;
}

events::ResolvedGroup alone(events::ResolvedEvent e) { return {{std::move(e)}, false}; }

events::ResolvedGroup braced(std::vector<events::ResolvedEvent> members) {
  for (size_t i = 0; i < members.size(); ++i)
    members[i].group_role = i == 0 ? events::GroupRole::Leader : events::GroupRole::Member;
  return {std::move(members), true};
}

const events::ResolvedEvent kTaskClock = event("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
const events::ResolvedEvent kCycles = event("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
const events::ResolvedEvent kInstructions = event("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);

// A machine without a PMU: hardware events are ENOENT, software ones count 100 of 1000 ns.
Result<std::vector<uint64_t>> no_pmu(const perf_event_attr& attr, const perf::OpenTarget&) {
  if (attr.type == PERF_TYPE_HARDWARE) return refused(ENOENT);
  return std::vector<uint64_t>{100, 1000, 1000};
}

TEST(StatSession, AWorkloadIsCountedPerTaskAndStartsOnExec) {
  ScriptedKernel kernel(no_pmu);
  CountTarget target;
  target.threads = {4242};
  target.enable_on_exec = true;
  StatSession session = StatSession::open(kernel, {alone(kTaskClock)}, target).value();
  ASSERT_EQ(kernel.opened.size(), 1u);
  EXPECT_EQ(kernel.opened[0].target.pid, 4242);
  EXPECT_EQ(kernel.opened[0].target.cpu, -1);
  EXPECT_TRUE(kernel.opened[0].attr.enable_on_exec);
  EXPECT_TRUE(kernel.opened[0].attr.disabled);
  EXPECT_TRUE(kernel.opened[0].attr.inherit);
  Result<StatSnapshot> snapshot = session.read(5000);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().describe();
  ASSERT_EQ(snapshot->counts.size(), 1u);
  ASSERT_EQ(snapshot->counts[0].samples.size(), 1u);
  EXPECT_EQ(snapshot->counts[0].samples[0].reading.value, 100u);
  EXPECT_EQ(snapshot->counts[0].samples[0].thread, 4242);
  EXPECT_EQ(snapshot->elapsed_ns, 5000u);
}

TEST(StatSession, SystemWideOpensOnePerCpuWithoutInheritOrExec) {
  ScriptedKernel kernel(no_pmu);
  CountTarget target;
  target.cpus = {0, 2, 3};
  target.enable_on_exec = true;  // a workload with -a: its counters are CPU-wide, enabled by ioctl
  StatSession session = StatSession::open(kernel, {alone(kTaskClock)}, target).value();
  ASSERT_EQ(kernel.opened.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(kernel.opened[i].target.pid, -1);
    EXPECT_FALSE(kernel.opened[i].attr.enable_on_exec);
    EXPECT_FALSE(kernel.opened[i].attr.inherit);
  }
  EXPECT_EQ(kernel.opened[2].target.cpu, 3);
  Result<StatSnapshot> snapshot = session.read(1);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->counts[0].samples.size(), 3u);
  EXPECT_EQ(snapshot->counts[0].samples[1].cpu, 2);
}

TEST(StatSession, ACgroupIsPassedAsPidWithTheCgroupFlag) {
  ScriptedKernel kernel(no_pmu);
  CountTarget target;
  target.cpus = {1};
  target.cgroup_fd = 77;
  ASSERT_TRUE(StatSession::open(kernel, {alone(kTaskClock)}, target).ok());
  ASSERT_EQ(kernel.opened.size(), 1u);
  EXPECT_EQ(kernel.opened[0].target.pid, 77);
  EXPECT_TRUE(kernel.opened[0].target.flags & PERF_FLAG_PID_CGROUP);
}

TEST(StatSession, PerCpuPmuEventsUseTheirCpumaskEvenForATask) {
  ScriptedKernel kernel(no_pmu);
  events::ResolvedEvent uncore = event("uncore_imc_0/cas_count_read/", 17, 0x304);
  uncore.pmu = "uncore_imc_0";
  uncore.cpumask = "0,28";
  CountTarget target;
  target.threads = {10};
  target.enable_on_exec = true;
  ASSERT_TRUE(StatSession::open(kernel, {alone(uncore), alone(kTaskClock)}, target).ok());
  ASSERT_EQ(kernel.opened.size(), 3u);
  EXPECT_EQ(kernel.opened[0].target.cpu, 0);
  EXPECT_EQ(kernel.opened[1].target.cpu, 28);
  EXPECT_EQ(kernel.opened[1].target.pid, -1);
  EXPECT_FALSE(kernel.opened[1].attr.enable_on_exec) << "a CPU-wide counter cannot start on a task's exec";
  EXPECT_EQ(kernel.opened[2].target.pid, 10);
}

TEST(StatSession, AMissingLoneEventIsNotSupportedAndTheRestCount) {
  ScriptedKernel kernel(no_pmu);
  CountTarget target;
  target.threads = {1};
  StatSession session = StatSession::open(kernel, {alone(kTaskClock), alone(kCycles), alone(kInstructions)}, target).value();
  Result<StatSnapshot> snapshot = session.read(1);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->counts[0].status, OpenStatus::Opened);
  EXPECT_EQ(snapshot->counts[1].status, OpenStatus::NotSupported);
  EXPECT_TRUE(snapshot->counts[1].samples.empty());
  EXPECT_EQ(snapshot->counts[2].status, OpenStatus::NotSupported);
  EXPECT_EQ(session.events()[1].name, "cycles");
}

// perf 6.1 without a PMU (checked on this machine): `perf stat -e '{task-clock,cycles}' true`
// prints task-clock "<not counted>" and cycles "<not supported>" and exits 0 (the member is
// left out, and the group read that expects it fails); `'{cycles,task-clock}'` ends with "The
// cycles event is not supported." (the leader itself failed).
TEST(StatSession, AnUnsupportedMemberIsLeftOutAndItsGroupIsNotCounted) {
  ScriptedKernel kernel(no_pmu);
  CountTarget target;
  target.threads = {1};
  const events::ResolvedEvent page_faults = event("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
  StatSession session = StatSession::open(kernel, {braced({kTaskClock, kCycles}), alone(page_faults)}, target).value();
  Result<StatSnapshot> snapshot = session.read(1);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().describe();
  EXPECT_EQ(snapshot->counts[0].status, OpenStatus::Opened);
  EXPECT_TRUE(snapshot->counts[0].samples.empty()) << "the group's read fails: task-clock is <not counted>";
  EXPECT_EQ(snapshot->counts[1].status, OpenStatus::NotSupported);
  EXPECT_EQ(snapshot->counts[2].samples.size(), 1u) << "an event outside the group counts";
  EXPECT_EQ(kernel.opened.size(), 2u) << "task-clock and page-faults stay open, cycles was refused";

  Result<StatSession> leader_refused = StatSession::open(kernel, {braced({kCycles, kTaskClock})}, target);
  ASSERT_FALSE(leader_refused.ok()) << "the leader's refusal ends the command";
  EXPECT_NE(leader_refused.error().message.find("{cycles,task-clock}"), std::string::npos) << leader_refused.error().message;
  EXPECT_NE(open_failure_hint(leader_refused.error()).find("count the unsupported member alone"), std::string::npos);
}

// perf's weak group: {a,b}:W that the kernel refuses together (EINVAL: it cannot schedule them
// at once) is counted member by member; without W the refused member is left out and the group
// is not counted (perf 6.1 in the arm64 guest: eight events on seven counters).
TEST(StatSession, AWeakGroupTheKernelRefusesIsCountedMemberByMember) {
  ScriptedKernel kernel([](const perf_event_attr& attr, const perf::OpenTarget& where) -> Result<std::vector<uint64_t>> {
    if (where.group_fd >= 0) return refused(EINVAL);
    return std::vector<uint64_t>{attr.config == PERF_COUNT_HW_CPU_CYCLES ? 300u : 400u, 1000, 1000};
  });
  CountTarget target;
  target.threads = {5};
  events::ResolvedGroup weak = braced({kCycles, kInstructions});
  for (events::ResolvedEvent& e : weak.members) e.group_modifiers.weak = true;
  StatSession session = StatSession::open(kernel, {weak}, target).value();
  EXPECT_EQ(session.events()[1].group_leader, -1);
  ASSERT_EQ(kernel.opened.size(), 3u) << "the leader in the group, then each member alone";
  EXPECT_FALSE(kernel.opened[1].attr.read_format & PERF_FORMAT_GROUP) << "a member counted alone is read alone";
  EXPECT_EQ(kernel.opened[2].target.group_fd, -1);
  Result<StatSnapshot> snapshot = session.read(1);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().describe();
  ASSERT_EQ(snapshot->counts[0].samples.size(), 1u);
  ASSERT_EQ(snapshot->counts[1].samples.size(), 1u);
  EXPECT_EQ(snapshot->counts[0].samples[0].reading.value, 300u);
  EXPECT_EQ(snapshot->counts[1].samples[0].reading.value, 400u);

  ScriptedKernel strict([](const perf_event_attr&, const perf::OpenTarget& where) -> Result<std::vector<uint64_t>> {
    if (where.group_fd >= 0) return refused(EINVAL);
    return std::vector<uint64_t>{2, 1000, 1000, 1, 1, 1, 1};
  });
  StatSession strict_session = StatSession::open(strict, {braced({kCycles, kInstructions})}, target).value();
  Result<StatSnapshot> strict_snapshot = strict_session.read(1);
  ASSERT_TRUE(strict_snapshot.ok());
  EXPECT_TRUE(strict_snapshot->counts[0].samples.empty());
  EXPECT_EQ(strict_snapshot->counts[1].status, OpenStatus::NotSupported);
}

TEST(StatSession, GroupsAreOpenedWithTheLeaderAndReadTogether) {
  // A PMU that counts both; multiplexed: running is half of enabled.
  ScriptedKernel kernel([](const perf_event_attr& attr, const perf::OpenTarget& where) -> Result<std::vector<uint64_t>> {
    EXPECT_TRUE(attr.read_format & PERF_FORMAT_GROUP);
    if (where.group_fd < 0) return std::vector<uint64_t>{2, 2000, 1000, 3000, 1, 6000, 2};
    return std::vector<uint64_t>{};
  });
  CountTarget target;
  target.threads = {5};
  StatSession session = StatSession::open(kernel, {braced({kCycles, kInstructions})}, target).value();
  ASSERT_EQ(kernel.opened.size(), 2u);
  EXPECT_EQ(kernel.opened[0].target.group_fd, -1);
  EXPECT_GE(kernel.opened[1].target.group_fd, 0);
  EXPECT_FALSE(kernel.opened[1].attr.disabled) << "members follow their leader";
  EXPECT_EQ(session.events()[1].group_leader, 0);
  Result<StatSnapshot> snapshot = session.read(1);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().describe();
  EXPECT_EQ(snapshot->counts[0].samples[0].reading.value, 3000u);
  EXPECT_EQ(snapshot->counts[1].samples[0].reading.value, 6000u);
  EXPECT_EQ(snapshot->counts[1].samples[0].reading.time_running, 1000u);
  perf::ScaledCount scaled = perf::scale_count(snapshot->counts[1].samples[0].reading);
  EXPECT_DOUBLE_EQ(scaled.value, 12000);
  EXPECT_DOUBLE_EQ(scaled.running_percent, 50);
}

TEST(StatSession, NoPermissionFallsBackToUserSpaceAndSaysSo) {
  // perf_event_paranoid 2 without privileges: kernel counting is refused.
  ScriptedKernel kernel([](const perf_event_attr& attr, const perf::OpenTarget&) -> Result<std::vector<uint64_t>> {
    if (!attr.exclude_kernel) return refused(EACCES);
    return std::vector<uint64_t>{7, 10, 10};
  });
  CountTarget target;
  target.threads = {1};
  StatSession session = StatSession::open(kernel, {alone(kTaskClock)}, target).value();
  EXPECT_EQ(session.events()[0].name, "task-clock:u");
  ASSERT_EQ(kernel.opened.size(), 1u);
  EXPECT_TRUE(kernel.opened[0].attr.exclude_kernel);
  EXPECT_TRUE(kernel.opened[0].attr.exclude_hv);
}

TEST(StatSession, NoPermissionWithExplicitModifiersOrSystemWideIsAnErrorWithTheFix) {
  ScriptedKernel kernel([](const perf_event_attr&, const perf::OpenTarget&) -> Result<std::vector<uint64_t>> {
    return refused(EACCES);
  });
  CountTarget system_wide;
  system_wide.cpus = {0};
  Result<StatSession> refused_system_wide = StatSession::open(kernel, {alone(kTaskClock)}, system_wide);
  ASSERT_FALSE(refused_system_wide.ok()) << "system-wide counting needs the privilege";
  EXPECT_NE(refused_system_wide.error().message.find("CPU 0"), std::string::npos) << refused_system_wide.error().message;
  EXPECT_NE(open_failure_hint(refused_system_wide.error()).find("perf_event_paranoid"), std::string::npos);
  events::ResolvedEvent kernel_only = kTaskClock;
  kernel_only.modifiers.kernel = true;
  CountTarget task;
  task.threads = {1};
  EXPECT_FALSE(StatSession::open(kernel, {alone(kernel_only)}, task).ok());
}

TEST(StatSession, APmuWithoutGuestFilteringIsRetriedWithoutExcludeGuest) {
  // The msr PMU answers EINVAL to exclude_guest, which perf sets by default; perf retries.
  ScriptedKernel kernel([](const perf_event_attr& attr, const perf::OpenTarget&) -> Result<std::vector<uint64_t>> {
    if (attr.exclude_guest) return refused(EINVAL);
    return std::vector<uint64_t>{5, 10, 10};
  });
  events::ResolvedEvent tsc = event("msr/tsc/", 10, 0);
  tsc.pmu = "msr";
  CountTarget target;
  target.cpus = {0, 1};
  StatSession session = StatSession::open(kernel, {alone(tsc)}, target).value();
  ASSERT_EQ(kernel.opened.size(), 2u);
  EXPECT_FALSE(kernel.opened[1].attr.exclude_guest);
  Result<StatSnapshot> snapshot = session.read(1);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->counts[0].status, OpenStatus::Opened);
  EXPECT_EQ(snapshot->counts[0].samples.size(), 2u);
}

TEST(StatSession, TooManyOpenFilesNamesTheLimit) {
  ScriptedKernel kernel([](const perf_event_attr&, const perf::OpenTarget&) -> Result<std::vector<uint64_t>> {
    return refused(EMFILE);
  });
  CountTarget target;
  target.threads = {1};
  Result<StatSession> session = StatSession::open(kernel, {alone(kTaskClock)}, target);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().errno_value, EMFILE);
  EXPECT_NE(open_failure_hint(session.error()).find("ulimit -n"), std::string::npos);
}

TEST(SnapshotDelta, SubtractsValuesAndTimesSampleBySample) {
  StatSnapshot before;
  before.elapsed_ns = 100;
  before.counts.resize(1);
  before.counts[0].samples.push_back({0, -1, {10, 100, 50, {}}});
  StatSnapshot after = before;
  after.elapsed_ns = 250;
  after.counts[0].samples[0].reading = {35, 250, 80, {}};
  StatSnapshot delta = snapshot_delta(after, before);
  EXPECT_EQ(delta.elapsed_ns, 150u);
  EXPECT_EQ(delta.counts[0].samples[0].reading.value, 25u);
  EXPECT_EQ(delta.counts[0].samples[0].reading.time_enabled, 150u);
  EXPECT_EQ(delta.counts[0].samples[0].reading.time_running, 30u);
}

}  // namespace
}  // namespace vperf::stat
