#include "perf/sampling_session.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "events/attr_builder.h"

namespace vperf::perf {
namespace {

SamplingEvent software_event(std::string name, uint64_t config) {
  perf_event_attr attr = events::blank_attr(PERF_TYPE_SOFTWARE, config);
  attr.sample_period = 500000;  // every 0.5 ms of CPU time
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  return {std::move(name), attr};
}

TEST(SamplingSession, TwoEventsShareOneRingAndTheirIdsTellThemApart) {
  pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
  KernelPerfEventOpener opener;
  Result<SamplingSession> session = SamplingSession::open(
      opener, {software_event("cpu-clock", PERF_COUNT_SW_CPU_CLOCK), software_event("task-clock", PERF_COUNT_SW_TASK_CLOCK)},
      SamplingTarget{{me}, {}}, 16);
  ASSERT_TRUE(session.ok()) << session.error().describe();
  ASSERT_EQ(session->ids().size(), 2u);
  ASSERT_EQ(session->ids()[0].size(), 1u);
  EXPECT_NE(session->ids()[0][0], session->ids()[1][0]);
  ASSERT_TRUE(session->enable().ok());
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 30000000; ++i) sink = sink + i * i;
  ASSERT_TRUE(session->disable().ok());
  std::set<uint64_t> ids_seen;
  size_t samples = 0;
  ASSERT_TRUE(session->drain([&](std::span<const uint8_t> r) {
                      perf_event_header h;
                      std::memcpy(&h, r.data(), sizeof h);
                      if (h.type != PERF_RECORD_SAMPLE) return;
                      uint64_t id;
                      std::memcpy(&id, r.data() + sizeof h, 8);  // PERF_SAMPLE_IDENTIFIER comes first
                      ids_seen.insert(id);
                      ++samples;
                    }).ok());
  EXPECT_GE(samples, 4u);
  EXPECT_EQ(ids_seen, (std::set<uint64_t>{session->ids()[0][0], session->ids()[1][0]}));
}

TEST(SamplingSession, AnEventTheKernelRefusesIsNamedInTheError) {
  KernelPerfEventOpener opener;
  SamplingEvent bogus = software_event("bogus", 0xdead);
  pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
  Result<SamplingSession> session = SamplingSession::open(opener, {bogus}, SamplingTarget{{me}, {}}, 8);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.error().message.find("cannot sample bogus on task " + std::to_string(me)), std::string::npos) << session.error().message;
}

}  // namespace
}  // namespace vperf::perf
