// saved_cmdlines_with: a recorder's own tasks' comms replace the kernel's lines for their pids
// (which may be stale ones of earlier tasks), every other line stays, and no pid has two lines.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tracing/tracing_data.h"

namespace vperf::tracing {
namespace {

TEST(SavedCmdlines, OwnTasksReplaceTheKernelsLinesForTheirPids) {
  const std::string kernels = "1 systemd\n14562 trace-cmd\n300 kworker/0:1 extra words\n145620 other\n";
  const std::string merged = saved_cmdlines_with(kernels, {{14562, "vperf-workload"}, {99, "new task"}});
  EXPECT_EQ(merged, "1 systemd\n300 kworker/0:1 extra words\n145620 other\n99 new task\n14562 vperf-workload\n");
}

TEST(SavedCmdlines, WithoutOwnTasksTheKernelsTextIsKeptLineForLine) {
  EXPECT_EQ(saved_cmdlines_with("7 a\n\n8 b", {}), "7 a\n8 b\n");
  EXPECT_EQ(saved_cmdlines_with("", {{5, "x"}}), "5 x\n");
  EXPECT_EQ(saved_cmdlines_with("garbage line\n5 stale\n", {{5, "x"}}), "garbage line\n5 x\n");
}

}  // namespace
}  // namespace vperf::tracing
