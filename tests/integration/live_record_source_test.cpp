// The live record source: SampleReplay reads a running sampling session refresh by refresh,
// with the same results as from a file. Ground truth: a held task that makes exactly N getppid
// calls once released, each one sample of syscalls:sys_enter_getppid.
#include "session/live_record_source.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/files.h"
#include "core/strings.h"
#include "events/record_attr.h"
#include "perf/event_fd.h"
#include "report/sample_replay.h"
#include "support/background.h"
#include "support/capability.h"
#include "symbols/machines.h"

namespace vperf::session {
namespace {

constexpr uint64_t kCalls = 2500;

TEST(LiveRecordSource, ReplaysEveryCallOfATaskRefreshByRefresh) {
  VPERF_REQUIRE(test::has_tracefs() && test::running_as_root(), "tracefs and root (tracepoint sampling)");
  Result<std::string> id = read_first_line("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id");
  VPERF_REQUIRE(id.ok(), "the syscalls:sys_enter_getppid tracepoint");
  events::ResolvedEvent getppid;
  getppid.name = getppid.written = "syscalls:sys_enter_getppid";
  getppid.pmu = "tracepoint";
  getppid.type = PERF_TYPE_TRACEPOINT;
  getppid.config = *parse_u64(trim(*id));
  events::RecordAttrOptions options;
  options.period = 1;
  options.tracking = true;  // COMM (the exec's new name) and MMAP records
  options.inherit = false;

  test::HeldChild child({VPERF_WORKLOAD, "getppid", std::to_string(kCalls)});
  perf::KernelPerfEventOpener opener;
  // 512 KiB: every sample of the run fits, so the test needs no reader thread.
  Result<perf::SamplingSession> sampling = perf::SamplingSession::open(
      opener, {{getppid.name, events::build_record_attr(getppid, options)}}, perf::SamplingTarget{{child.pid()}, {}}, 128);
  ASSERT_TRUE(sampling) << sampling.error().describe();
  ASSERT_TRUE(sampling->enable());
  const data::SampleFormat format = data::SampleFormat::from_attr(sampling->events().front().attr);
  Result<std::vector<data::RecordBytes>> existing =
      data::synthesize_process(child.pid(), data::synthesized_maps_for(sampling->events().front().attr), format);
  ASSERT_TRUE(existing) << existing.error().describe();
  LiveRecordSource source(sampling.value(), *existing);
  ASSERT_EQ(source.attrs().size(), 1u);

  symbols::Machines machines{symbols::SymbolConfig{}};
  report::SampleReplay replay(machines, report::ReplayOptions{.ordered = false});
  uint64_t samples = 0;
  std::set<std::string> comms;
  std::set<pid_t> pids;
  auto count = [&](const report::ResolvedSample& s) {
    ++samples;
    comms.insert(std::string(s.comm));
    pids.insert(s.pid);
    return true;
  };
  // First refresh: only what existed (the held task's COMM and maps), no sample yet.
  Result<data::ReadStats> first = replay.run(source, count);
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_GT(first->records, 0u);
  EXPECT_EQ(samples, 0u);

  child.release();
  ASSERT_EQ(child.wait(), 0);
  // Second refresh: every call, under the workload's name from the exec's COMM record.
  Result<data::ReadStats> second = replay.run(source, count);
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_EQ(second->lost, 0u);
  EXPECT_EQ(samples, kCalls);
  EXPECT_EQ(second->samples, kCalls);
  EXPECT_EQ(comms, std::set<std::string>{"vperf-workload"});
  EXPECT_EQ(pids, std::set<pid_t>{child.pid()});
  EXPECT_TRUE(source.warnings().empty());
  // Nothing new: a third refresh delivers nothing.
  Result<data::ReadStats> third = replay.run(source, count);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->records, 0u);
}

}  // namespace
}  // namespace vperf::session
