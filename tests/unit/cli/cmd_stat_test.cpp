#include "cli/cmd_stat.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"

namespace vperf::cli {
namespace {

StatOptions with_command() {
  StatOptions o;
  o.command = {"true"};
  return o;
}

TEST(StatEventList, DefaultSetAndDetailLevelsArePerfs) {
  // perf 6.1: `perf stat -ddd -x, true | cut -d, -f3` on a machine without stalled-cycles events.
  StatOptions o = with_command();
  EXPECT_EQ(stat_event_list(o, false),
            "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses");
  o.detail = 3;
  EXPECT_EQ(stat_event_list(o, false),
            "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses,"
            "L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses,"
            "L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,iTLB-load-misses,"
            "L1-dcache-prefetches,L1-dcache-prefetch-misses");
}

TEST(StatEventList, SystemWideCountsCpuClockAndStalledCyclesComeAfterCycles) {
  StatOptions o;
  o.system_wide = true;
  EXPECT_EQ(stat_event_list(o, true),
            "cpu-clock,context-switches,cpu-migrations,page-faults,cycles,stalled-cycles-frontend,"
            "stalled-cycles-backend,instructions,branches,branch-misses");
}

TEST(StatEventList, ExplicitEventsReplaceTheDefaults) {
  StatOptions o = with_command();
  o.events = {"cycles:u", "{task-clock,page-faults}"};
  o.detail = 2;
  EXPECT_EQ(stat_event_list(o, false), "cycles:u,{task-clock,page-faults}");
}

// Option combinations perf refuses are refused before anything is opened, with exit 2.
void expect_usage_error(StatOptions o, const std::string& fragment) {
  std::ostringstream err;
  try {
    run_stat(o, err);
    FAIL() << "accepted; expected an error containing '" << fragment << "'";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  EXPECT_TRUE(err.str().empty());
}

TEST(RunStat, RefusesOptionCombinationsLikePerf) {
  StatOptions repeat_nothing;  // no command counts every CPU, as perf does; -r needs one to repeat
  repeat_nothing.repeat = 2;
  expect_usage_error(repeat_nothing, "-r repeats a COMMAND");
  StatOptions per_cpu = with_command();
  per_cpu.no_aggr = true;
  expect_usage_error(per_cpu, "need -a or -C");
  StatOptions cgroup = with_command();
  cgroup.cgroup = "x";
  expect_usage_error(cgroup, "-G");
  StatOptions both = with_command();
  both.pids = "1";
  both.tids = "1";
  expect_usage_error(both, "-p and -t cannot be combined");
  StatOptions formats = with_command();
  formats.json = true;
  formats.csv_separator = ",";
  expect_usage_error(formats, "-x and --json");
  StatOptions count = with_command();
  count.interval_count = 2;
  expect_usage_error(count, "--interval-count needs -I");
  StatOptions repeat = with_command();
  repeat.repeat = 0;
  expect_usage_error(repeat, "-r");
  StatOptions bad_pid;
  bad_pid.pids = "12,abc";
  expect_usage_error(bad_pid, "bad -p value 'abc'");
}

}  // namespace
}  // namespace vperf::cli
