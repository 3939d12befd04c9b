#include "perf/permission_fallback.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "events/attr_builder.h"
#include "perf/sampling_session.h"
#include "support/fake_event_fs.h"

namespace vperf::perf {
namespace {

std::function<Result<int>()> paranoid_is(int level) {
  return [level] { return Result<int>(level); };
}

TEST(PermissionFallback, RetriesInUserSpaceOnlyAtParanoidTwoAndNamesItAsPerf) {
  perf_event_attr attr = events::blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
  std::string name = "cpu-clock";
  std::optional<std::string> message = fall_back_to_user_space(attr, name, EACCES, paranoid_is(2));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(*message, "kernel.perf_event_paranoid=2, trying to fall back to excluding kernel and hypervisor samples");
  EXPECT_EQ(name, "cpu-clock:u");
  EXPECT_TRUE(attr.exclude_kernel);
  EXPECT_TRUE(attr.exclude_hv);
  EXPECT_FALSE(attr.exclude_user);
  // Once narrowed there is nothing left to try.
  EXPECT_FALSE(fall_back_to_user_space(attr, name, EACCES, paranoid_is(2)).has_value());
  EXPECT_EQ(name, "cpu-clock:u");
}

TEST(PermissionFallback, LeavesOtherFailuresAndKernelOnlyEventsAlone) {
  perf_event_attr attr = events::blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
  std::string name = "cpu-clock";
  bool asked = false;
  auto ask = [&] {
    asked = true;
    return Result<int>(2);
  };
  EXPECT_FALSE(fall_back_to_user_space(attr, name, EPERM, ask).has_value());
  EXPECT_FALSE(fall_back_to_user_space(attr, name, ENOENT, ask).has_value());
  EXPECT_FALSE(asked) << "the sysctl is read only for EACCES";
  EXPECT_FALSE(fall_back_to_user_space(attr, name, EACCES, paranoid_is(1)).has_value());
  EXPECT_FALSE(fall_back_to_user_space(attr, name, EACCES, [] { return Result<int>(Error{"no /proc", ENOENT}); }));
  perf_event_attr kernel_only = attr;
  kernel_only.exclude_user = 1;  // cpu-clock:k
  EXPECT_FALSE(fall_back_to_user_space(kernel_only, name, EACCES, paranoid_is(2)).has_value());
  EXPECT_EQ(name, "cpu-clock");
  EXPECT_FALSE(attr.exclude_kernel || kernel_only.exclude_kernel);
}

TEST(PermissionFallback, NamesWithModifiersOrPmuSyntaxGetAPlainU) {
  EXPECT_EQ(user_space_event_name("cycles"), "cycles:u");
  EXPECT_EQ(user_space_event_name("cpu/cycles/"), "cpu/cycles/u");
  EXPECT_EQ(user_space_event_name("sched:sched_switch"), "sched:sched_switchu");  // perf 6.1 does this too
}

TEST(PermissionFallback, ReadsTheSysctl) {
  test::TempTree tree;
  tree.write("paranoid", "2\n");
  tree.write("negative", "-1\n");
  tree.write("garbage", "two\n");
  EXPECT_EQ(read_perf_event_paranoid(tree.root() / "paranoid").value(), 2);
  EXPECT_EQ(read_perf_event_paranoid(tree.root() / "negative").value(), -1);
  EXPECT_FALSE(read_perf_event_paranoid(tree.root() / "garbage").ok());
  EXPECT_FALSE(read_perf_event_paranoid(tree.root() / "missing").ok());
}

// A kernel at paranoid 2 for an unprivileged user: EACCES unless the kernel is excluded.
class UserSpaceOnlyKernel final : public PerfEventOpener {
 public:
  Result<EventFd> open(const perf_event_attr& attr, const OpenTarget& target) const override {
    ++calls;
    if (!attr.exclude_kernel) return Error{"perf_event_open", EACCES};
    return real_.open(attr, target);
  }
  mutable int calls = 0;

 private:
  KernelPerfEventOpener real_;
};

TEST(PermissionFallback, SamplingSessionReopensEverythingWithTheNarrowedEvent) {
  perf_event_attr attr = events::blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  attr.sample_period = 1000000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  attr.disabled = 1;
  pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
  UserSpaceOnlyKernel kernel;
  std::vector<std::string> messages;
  OpenRetry retry = [&](SamplingEvent& event, const Error& error) {
    auto message = fall_back_to_user_space(event.attr, event.name, error.errno_value, paranoid_is(2));
    if (message) messages.push_back(*message);
    return message.has_value();
  };
  Result<SamplingSession> refused = SamplingSession::open(kernel, {{"task-clock", attr}}, SamplingTarget{{me}, {}}, 8);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().errno_value, EACCES);

  Result<SamplingSession> session = SamplingSession::open(kernel, {{"task-clock", attr}}, SamplingTarget{{me}, {}}, 8, retry);
  ASSERT_TRUE(session.ok()) << session.error().describe();
  EXPECT_EQ(session->events()[0].name, "task-clock:u");
  EXPECT_TRUE(session->events()[0].attr.exclude_kernel);
  EXPECT_EQ(messages.size(), 1u);
  EXPECT_EQ(kernel.calls, 3);  // refused alone, refused with the retry, then opened narrowed
}

}  // namespace
}  // namespace vperf::perf
