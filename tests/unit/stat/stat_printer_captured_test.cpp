// Whole outputs of the printer compared with what perf stat 6.1 printed on this machine.
//
// The "Captured" expectations come from `perf stat record` runs (the same options as the
// commands quoted; perf stat record prints exactly what perf stat prints), with the raw
// per-fd counts of the same run taken from `perf report -D` (PERF_RECORD_STAT: value,
// enabled, running; PERF_RECORD_STAT_ROUND: wall time / interval time). perf 6.1.192,
// Debian 12 KVM guest, 2 vCPUs (S0-D0-C0, S0-D0-C1), LANG=C.UTF-8, no hardware PMU.
#include <gtest/gtest.h>

#include "stat_test_support.h"

namespace vperf::stat {
namespace {

using namespace test_support;

// Captured with: perf stat -e task-clock,page-faults,context-switches,cpu-migrations,cycles,instructions -- true
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_default = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false), ev("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false)},
    {
        {2110287, {{0, -1, 644924, 644924, 644924}, {1, -1, 49, 644924, 644924}, {2, -1, 0, 644924, 644924}, {3, -1, 0, 644924, 644924}}},
    },
      "\n"
      " Performance counter stats for 'true':\n"
      "\n"
      "              0.64 msec task-clock                       #    0.306 CPUs utilized          \n"
      "                49      page-faults                      #   75.978 K/sec                  \n"
      "                 0      context-switches                 #    0.000 /sec                   \n"
      "                 0      cpu-migrations                   #    0.000 /sec                   \n"
      "   <not supported>      cycles                                                      \n"
      "   <not supported>      instructions                                                \n"
      "\n"
      "       0.002110287 seconds time elapsed\n"
      "\n"
      "       0.001527000 seconds user\n"
      "       0.000000000 seconds sys\n"
      "\n"
      "\n",
};

// Captured with: perf stat --json -e task-clock,page-faults,context-switches,cycles -- true
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_json_default = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {1039807, {{0, -1, 534236, 534236, 534236}, {1, -1, 48, 534236, 534236}, {2, -1, 0, 534236, 534236}}},
    },
      "{\"counter-value\" : \"0.534236\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 534236, \"pcnt-running\" : 100.00, \"metric-value\" : 0.513784, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"counter-value\" : \"48.000000\", \"unit\" : \"\", \"event\" : \"page-faults\", \"event-runtime\" : 534236, \"pcnt-running\" : 100.00, \"metric-value\" : 89.847932, \"metric-unit\" : \"K/sec\"}\n"
      "{\"counter-value\" : \"0.000000\", \"unit\" : \"\", \"event\" : \"context-switches\", \"event-runtime\" : 534236, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"/sec\"}\n"
      "{\"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n",
};

// Captured with: perf stat -a -A -e task-clock,context-switches,cycles -- sleep 0.02
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_percpu = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {21890702, {{0, 0, 21873378, 21873378, 21873378}, {1, 0, 14, 21873371, 21873371}, {0, 1, 21897259, 21897259, 21897259}, {1, 1, 12, 21898031, 21898031}}},
    },
      "\n"
      " Performance counter stats for 'system wide':\n"
      "\n"
      "CPU0                    21.87 msec task-clock                       #    0.999 CPUs utilized          \n"
      "CPU1                    21.90 msec task-clock                       #    1.000 CPUs utilized          \n"
      "CPU0                       14      context-switches                 #  640.047 /sec                   \n"
      "CPU1                       12      context-switches                 #  548.014 /sec                   \n"
      "CPU0          <not supported>      cycles                                                      \n"
      "CPU1          <not supported>      cycles                                                      \n"
      "\n"
      "       0.021890702 seconds time elapsed\n"
      "\n",
};

// Captured with: perf stat -a --per-core -e task-clock,context-switches,cycles -- sleep 0.02
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_percore = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {21985078, {{0, 0, 22005862, 22005862, 22005862}, {1, 0, 14, 22002435, 22002435}, {0, 1, 22013502, 22013502, 22013502}, {1, 1, 12, 22011385, 22011385}}},
    },
      "\n"
      " Performance counter stats for 'system wide':\n"
      "\n"
      "S0-D0-C0           1              22.01 msec task-clock                       #    1.001 CPUs utilized          \n"
      "S0-D0-C0           1                 14      context-switches                 #  636.194 /sec                   \n"
      "S0-D0-C0           1    <not supported>      cycles                                                      \n"
      "S0-D0-C1           1              22.01 msec task-clock                       #    1.001 CPUs utilized          \n"
      "S0-D0-C1           1                 12      context-switches                 #  545.120 /sec                   \n"
      "S0-D0-C1           1    <not supported>      cycles                                                      \n"
      "\n"
      "       0.021985078 seconds time elapsed\n"
      "\n",
};

// Captured with: perf stat -a --per-socket -e task-clock,context-switches,cycles -- sleep 0.02
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_persocket = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {26273604, {{0, 0, 26234358, 26234358, 26234358}, {1, 0, 15, 26235494, 26235494}, {0, 1, 26267965, 26267965, 26267965}, {1, 1, 16, 26269688, 26269688}}},
    },
      "\n"
      " Performance counter stats for 'system wide':\n"
      "\n"
      "S0        2              52.50 msec task-clock                       #    1.998 CPUs utilized          \n"
      "S0        2                 31      context-switches                 #  590.450 /sec                   \n"
      "S0        1    <not supported>      cycles                                                      \n"
      "\n"
      "       0.026273604 seconds time elapsed\n"
      "\n",
};

// Captured with: perf stat -a --per-die -e task-clock,context-switches,cycles -- sleep 0.02
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_perdie = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {23497186, {{0, 0, 21712948, 21712948, 21712948}, {1, 0, 8, 21712936, 21712936}, {0, 1, 23497413, 23497413, 23497413}, {1, 1, 17, 23498009, 23498009}}},
    },
      "\n"
      " Performance counter stats for 'system wide':\n"
      "\n"
      "S0-D0           2              45.21 msec task-clock                       #    1.924 CPUs utilized          \n"
      "S0-D0           2                 25      context-switches                 #  552.971 /sec                   \n"
      "S0-D0           1    <not supported>      cycles                                                      \n"
      "\n"
      "       0.023497186 seconds time elapsed\n"
      "\n",
};

// Captured with: perf stat -I 100 -e task-clock,page-faults,cycles -- sleep 0.25
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_interval = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {103758387, {{0, -1, 861253, 861253, 861253}, {1, -1, 75, 861253, 861253}}},
        {207760515, {{0, -1, 861253, 861253, 861253}, {1, -1, 75, 861253, 861253}}},
        {251835919, {{0, -1, 931902, 931902, 931902}, {1, -1, 75, 931902, 931902}}},
    },
      "#           time             counts unit events\n"
      "     0.103758387               0.86 msec task-clock                       #    0.009 CPUs utilized          \n"
      "     0.103758387                 75      page-faults                      #   87.082 K/sec                  \n"
      "     0.103758387    <not supported>      cycles                                                      \n"
      "     0.207760515      <not counted> msec task-clock                                                  \n"
      "     0.207760515      <not counted>      page-faults                                                 \n"
      "     0.207760515    <not supported>      cycles                                                      \n"
      "     0.251835919               0.07 msec task-clock                       #    0.001 CPUs utilized          \n"
      "     0.251835919                  0      page-faults                      #    0.000 /sec                   \n"
      "     0.251835919    <not supported>      cycles                                                      \n",
};

// Captured with: perf stat --json -a --per-socket -e task-clock,context-switches,cycles -- sleep 0.02
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_json_persocket = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {23901915, {{0, 0, 23903658, 23903658, 23903658}, {1, 0, 11, 23902808, 23902808}, {0, 1, 23913902, 23913902, 23913902}, {1, 1, 14, 23913885, 23913885}}},
    },
      "{\"socket\" : \"S0\", \"aggregate-number\" : 2, \"counter-value\" : \"47.817560\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 47817560, \"pcnt-running\" : 100.00, \"metric-value\" : 2.000574, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"socket\" : \"S0\", \"aggregate-number\" : 2, \"counter-value\" : \"25.000000\", \"unit\" : \"\", \"event\" : \"context-switches\", \"event-runtime\" : 47816693, \"pcnt-running\" : 100.00, \"metric-value\" : 522.820487, \"metric-unit\" : \"/sec\"}\n"
      "{\"socket\" : \"S0\", \"aggregate-number\" : 1, \"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n",
};

// Captured with: perf stat --json -a --per-core -e task-clock,context-switches -- sleep 0.02
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_json_percore = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true)},
    {
        {23380917, {{0, 0, 21894657, 21894657, 21894657}, {1, 0, 10, 21894980, 21894980}, {0, 1, 23382890, 23382890, 23382890}, {1, 1, 16, 23383505, 23383505}}},
    },
      "{\"core\" : \"S0-D0-C0\", \"aggregate-number\" : 1, \"counter-value\" : \"21.894657\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 21894657, \"pcnt-running\" : 100.00, \"metric-value\" : 0.936433, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"core\" : \"S0-D0-C0\", \"aggregate-number\" : 1, \"counter-value\" : \"10.000000\", \"unit\" : \"\", \"event\" : \"context-switches\", \"event-runtime\" : 21894980, \"pcnt-running\" : 100.00, \"metric-value\" : 456.732435, \"metric-unit\" : \"/sec\"}\n"
      "{\"core\" : \"S0-D0-C1\", \"aggregate-number\" : 1, \"counter-value\" : \"23.382890\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 23382890, \"pcnt-running\" : 100.00, \"metric-value\" : 1.000084, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"core\" : \"S0-D0-C1\", \"aggregate-number\" : 1, \"counter-value\" : \"16.000000\", \"unit\" : \"\", \"event\" : \"context-switches\", \"event-runtime\" : 23383505, \"pcnt-running\" : 100.00, \"metric-value\" : 684.261013, \"metric-unit\" : \"/sec\"}\n",
};

// Captured with: perf stat --json -a -A -I 100 -e task-clock,cycles -- sleep 0.12
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_json_interval_percpu = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {103744442, {{0, 0, 107807565, 107806721, 107806721}, {0, 1, 107842666, 107841844, 107841844}}},
        {121945113, {{0, 0, 123820123, 123818751, 123818751}, {0, 1, 123838031, 123837295, 123837295}}},
    },
      "{\"interval\" : 0.103744442, \"cpu\" : \"0\", \"counter-value\" : \"107.807565\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 107806721, \"pcnt-running\" : 100.00, \"metric-value\" : 1.078076, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"interval\" : 0.103744442, \"cpu\" : \"1\", \"counter-value\" : \"107.842666\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 107841844, \"pcnt-running\" : 100.00, \"metric-value\" : 1.078427, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"interval\" : 0.103744442, \"cpu\" : \"0\", \"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n"
      "{\"interval\" : 0.103744442, \"cpu\" : \"1\", \"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n"
      "{\"interval\" : 0.121945113, \"cpu\" : \"0\", \"counter-value\" : \"16.012558\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 16012030, \"pcnt-running\" : 100.00, \"metric-value\" : 0.160126, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"interval\" : 0.121945113, \"cpu\" : \"1\", \"counter-value\" : \"15.995365\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 15995451, \"pcnt-running\" : 100.00, \"metric-value\" : 0.159954, \"metric-unit\" : \"CPUs utilized\"}\n"
      "{\"interval\" : 0.121945113, \"cpu\" : \"0\", \"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n"
      "{\"interval\" : 0.121945113, \"cpu\" : \"1\", \"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n",
};

// Captured with: perf stat -a --per-socket -I 100 -e task-clock,context-switches,cycles -- sleep 0.12
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_interval_persocket = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {100148753, {{0, 0, 100261656, 100261005, 100261005}, {1, 0, 37, 100275019, 100275019}, {0, 1, 100300836, 100300049, 100300049}, {1, 1, 36, 100307053, 100307053}}},
        {124240904, {{0, 0, 124352676, 124351964, 124351964}, {1, 0, 49, 124360555, 124360555}, {0, 1, 124379787, 124379217, 124379217}, {1, 1, 47, 124387209, 124387209}}},
    },
      "#           time socket cpus             counts unit events\n"
      "     0.100148753 S0        2             200.56 msec task-clock                       #    2.006 CPUs utilized          \n"
      "     0.100148753 S0        2                 73      context-switches                 #  363.976 /sec                   \n"
      "     0.100148753 S0        1    <not supported>      cycles                                                      \n"
      "     0.124240904 S0        2              48.17 msec task-clock                       #    0.482 CPUs utilized          \n"
      "     0.124240904 S0        2                 23      context-switches                 #  477.476 /sec                   \n"
      "     0.124240904 S0        1    <not supported>      cycles                                                      \n",
};

// Captured with: perf stat -a -A -I 100 -e task-clock,cycles -- sleep 0.12
// (`perf stat record`, raw counts from `perf report -D`; perf 6.1.192, 2 vCPUs, C.UTF-8)
const Capture k_text_interval_percpu = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true), ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {
        {103897546, {{0, 0, 108004138, 108003081, 108003081}, {0, 1, 108023702, 108022816, 108022816}}},
        {121711799, {{0, 0, 122030476, 122029549, 122029549}, {0, 1, 122022452, 122021945, 122021945}}},
    },
      "#           time CPU                    counts unit events\n"
      "     0.103897546 CPU0                   108.00 msec task-clock                       #    1.080 CPUs utilized          \n"
      "     0.103897546 CPU1                   108.02 msec task-clock                       #    1.080 CPUs utilized          \n"
      "     0.103897546 CPU0          <not supported>      cycles                                                      \n"
      "     0.103897546 CPU1          <not supported>      cycles                                                      \n"
      "     0.121711799 CPU0                    14.03 msec task-clock                       #    0.140 CPUs utilized          \n"
      "     0.121711799 CPU1                    14.00 msec task-clock                       #    0.140 CPUs utilized          \n"
      "     0.121711799 CPU0          <not supported>      cycles                                                      \n"
      "     0.121711799 CPU1          <not supported>      cycles                                                      \n",
};

TEST(StatPrinterCaptured, TextForkedCommandWithRusage) {
  StatPrintOptions o = opts(StatFormat::Text);
  o.show_rusage = true;
  RunTimes t;
  t.user_seconds = 0.001527;
  t.system_seconds = 0;
  EXPECT_EQ(summary(k_text_default, o, describe_target(StatTarget{false, "", {"true"}, "", ""}), t),
            k_text_default.expected);
}

TEST(StatPrinterCaptured, JsonForkedCommand) {
  EXPECT_EQ(summary(k_json_default, opts(StatFormat::Json), "'true'"), k_json_default.expected);
}

TEST(StatPrinterCaptured, TextPerCpu) {
  EXPECT_EQ(summary(k_text_percpu, opts(StatFormat::Text, AggrMode::PerCpu), "'system wide'"), k_text_percpu.expected);
}

TEST(StatPrinterCaptured, TextPerCore) {
  EXPECT_EQ(summary(k_text_percore, opts(StatFormat::Text, AggrMode::PerCore), "'system wide'"),
            k_text_percore.expected);
}

TEST(StatPrinterCaptured, TextPerSocket) {
  EXPECT_EQ(summary(k_text_persocket, opts(StatFormat::Text, AggrMode::PerSocket), "'system wide'"),
            k_text_persocket.expected);
}

TEST(StatPrinterCaptured, TextPerDie) {
  EXPECT_EQ(summary(k_text_perdie, opts(StatFormat::Text, AggrMode::PerDie), "'system wide'"),
            k_text_perdie.expected);
}

TEST(StatPrinterCaptured, JsonPerSocket) {
  EXPECT_EQ(summary(k_json_persocket, opts(StatFormat::Json, AggrMode::PerSocket), "'system wide'"),
            k_json_persocket.expected);
}

TEST(StatPrinterCaptured, JsonPerCore) {
  EXPECT_EQ(summary(k_json_percore, opts(StatFormat::Json, AggrMode::PerCore), "'system wide'"),
            k_json_percore.expected);
}

TEST(StatPrinterCaptured, TextIntervals) {
  EXPECT_EQ(intervals(k_text_interval, opts(StatFormat::Text)), k_text_interval.expected);
}

TEST(StatPrinterCaptured, TextIntervalsPerSocket) {
  EXPECT_EQ(intervals(k_text_interval_persocket, opts(StatFormat::Text, AggrMode::PerSocket)),
            k_text_interval_persocket.expected);
}

TEST(StatPrinterCaptured, TextIntervalsPerCpu) {
  EXPECT_EQ(intervals(k_text_interval_percpu, opts(StatFormat::Text, AggrMode::PerCpu)),
            k_text_interval_percpu.expected);
}

TEST(StatPrinterCaptured, JsonIntervalsPerCpu) {
  EXPECT_EQ(intervals(k_json_interval_percpu, opts(StatFormat::Json, AggrMode::PerCpu)),
            k_json_interval_percpu.expected);
}

}  // namespace
}  // namespace vperf::stat
