// Printer cases that this machine cannot capture whole (no hardware PMU; CSV, which
// `perf stat record` does not print properly; -r, which it refuses). Every expected line
// below either is a line perf 6.1 printed here (the command is quoted) with inputs that
// reproduce every number it printed, or follows perf 6.1's formats in stat-display.c and
// stat-shadow.c with numbers computed by hand in the comment next to it.
#include <gtest/gtest.h>

#include "stat_test_support.h"

namespace vperf::stat {
namespace {

using namespace test_support;

// perf stat -x, -e task-clock,page-faults,context-switches,cycles true
// perf printed everything but the wall time; 655 us makes 353267 ns "0.539 CPUs utilized".
TEST(StatPrinterCsv, ForkedCommand) {
  const Capture c = {
      {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
       ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true),
       ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true),
       ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
      {{655000,
        {{0, -1, 353267, 353267, 353267}, {1, -1, 49, 353267, 353267}, {2, -1, 0, 353267, 353267}}}},
      "0.35,msec,task-clock,353267,100.00,0.539,CPUs utilized\n"
      "49,,page-faults,353267,100.00,138.705,K/sec\n"
      "0,,context-switches,353267,100.00,0.000,/sec\n"
      "<not supported>,,cycles,0,100.00,,\n"};
  EXPECT_EQ(summary(c, opts(StatFormat::Csv), "'true'"), c.expected);
}

// perf stat -a -A -x, -e task-clock,context-switches,cycles -- sleep 0.05
// Task clocks equal to their running times (51078122 ns) and 51.087800 ms reproduce the printed "/sec" rates.
TEST(StatPrinterCsv, PerCpu) {
  const Capture c = {
      {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
       ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true),
       ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
      {{51100000,
        {{0, 0, 51078122, 51078122, 51078122},
         {1, 0, 11, 51078498, 51078498},
         {0, 1, 51087800, 51087835, 51087835},
         {1, 1, 15, 51088034, 51088034}}}},
      "CPU0,51.08,msec,task-clock,51078122,100.00,1.000,CPUs utilized\n"
      "CPU1,51.09,msec,task-clock,51087835,100.00,1.000,CPUs utilized\n"
      "CPU0,11,,context-switches,51078498,100.00,215.356,/sec\n"
      "CPU1,15,,context-switches,51088034,100.00,293.612,/sec\n"
      "CPU0,<not supported>,,cycles,0,100.00,,\n"
      "CPU1,<not supported>,,cycles,0,100.00,,\n"};
  EXPECT_EQ(summary(c, opts(StatFormat::Csv, AggrMode::PerCpu), "'system wide'"), c.expected);
}

// perf stat -a --per-socket -x, -e task-clock,context-switches,cycles -- sleep 0.05
// perf printed the socket's sums; split over the two CPUs, with a wall time of 51.68 ms.
TEST(StatPrinterCsv, PerSocket) {
  const Capture c = {
      {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
       ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true),
       ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
      {{51680000,
        {{0, 0, 51650000, 51650000, 51650000},
         {1, 0, 16, 51650300, 51650300},
         {0, 1, 51653257, 51653257, 51653257},
         {1, 1, 16, 51653434, 51653434}}}},
      "S0,2,103.30,msec,task-clock,103303257,100.00,1.999,CPUs utilized\n"
      "S0,2,32,,context-switches,103303734,100.00,309.768,/sec\n"
      "S0,1,<not supported>,,cycles,0,100.00,,\n"};
  EXPECT_EQ(summary(c, opts(StatFormat::Csv, AggrMode::PerSocket), "'system wide'"), c.expected);
}

// perf stat -I 100 -x, -e task-clock,page-faults,cycles -- sleep 0.15
TEST(StatPrinterCsv, Intervals) {
  const Capture c = {
      {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
       ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true),
       ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
      {{100242597, {{0, -1, 516255, 516255, 516255}, {1, -1, 77, 516255, 516255}}},
       {150942750, {{0, -1, 551872, 551872, 551872}, {1, -1, 77, 551872, 551872}}}},
      "     0.100242597,0.52,msec,task-clock,516255,100.00,0.005,CPUs utilized\n"
      "     0.100242597,77,,page-faults,516255,100.00,149.151,K/sec\n"
      "     0.100242597,<not supported>,,cycles,0,100.00,,\n"
      "     0.150942750,0.04,msec,task-clock,35617,100.00,0.000,CPUs utilized\n"
      "     0.150942750,0,,page-faults,35617,100.00,0.000,/sec\n"
      "     0.150942750,<not supported>,,cycles,0,100.00,,\n"};
  EXPECT_EQ(intervals(c, opts(StatFormat::Csv)), c.expected);
}

// -r 3 with hand-picked runs:
//   task-clock 300000, 350000, 400000 ns: mean 350000 (0.35 msec); M2 = 2 * 50000^2 = 5e9,
//     variance 5e9 / 2 = 2.5e9, of the mean 2.5e9 / 3, stddev 28867.51, 8.2479% of the mean;
//   page-faults 48, 49, 50: mean 49; M2 = 2, variance 1, of the mean 1/3, stddev 0.57735, 1.1783%;
//   wall time 700, 720, 740 us: mean 720 us; stddev of the mean 11547 ns = 1.6038%;
//     perf's precision: ceil(-log10(1.1547e-5)) = 5, plus 2 = 7 digits;
//   CPUs utilized 350000 / 720000 = 0.486111; page-faults 49 / 350 us = 140.000 K/sec.
const Capture k_three_runs = {
    {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
     ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true),
     ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)},
    {{700000, {{0, -1, 300000, 300000, 300000}, {1, -1, 48, 300000, 300000}}},
     {720000, {{0, -1, 350000, 350000, 350000}, {1, -1, 49, 350000, 350000}}},
     {740000, {{0, -1, 400000, 400000, 400000}, {1, -1, 50, 400000, 400000}}}},
    ""};

StatPrintOptions three_runs(StatFormat format) {
  StatPrintOptions o = opts(format);
  o.runs = 3;
  o.show_rusage = true;  // perf shows no user/sys times with -r
  return o;
}

// The layout of perf stat -r 3 -e task-clock,page-faults,cycles true (perf 6.1 here):
//               0.35 msec task-clock                       #    0.482 CPUs utilized            ( +-  4.69% )
//                 49      page-faults                      #  134.580 K/sec                    ( +-  1.18% )
//    <not supported>      cycles
//          0.0007190 +- 0.0000403 seconds time elapsed  ( +-  5.61% )
TEST(StatPrinterRuns, TextMeanAndNoise) {
  EXPECT_EQ(summary(k_three_runs, three_runs(StatFormat::Text), "'true'"),
            "\n"
            " Performance counter stats for 'true' (3 runs):\n"
            "\n"
            "              0.35 msec task-clock                       #    0.486 CPUs utilized            ( +-  8.25% )\n"
            "                49      page-faults                      #  140.000 K/sec                    ( +-  1.18% )\n"
            "   <not supported>      cycles                                                      \n"
            "\n"
            "         0.0007200 +- 0.0000115 seconds time elapsed  ( +-  1.60% )\n"
            "\n");
}

// As perf stat -x';' -r 3 -e task-clock,page-faults,cycles true prints it:
//   0.27;msec;task-clock;7.16%;268956;100.00;0.462;CPUs utilized
//   <not supported>;;cycles;0.00%;0;100.00;;
TEST(StatPrinterRuns, CsvNoiseColumn) {
  StatPrintOptions o = three_runs(StatFormat::Csv);
  o.csv_separator = ";";
  EXPECT_EQ(summary(k_three_runs, o, "'true'"),
            "0.35;msec;task-clock;8.25%;350000;100.00;0.486;CPUs utilized\n"
            "49;;page-faults;1.18%;350000;100.00;140.000;K/sec\n"
            "<not supported>;;cycles;0.00%;0;100.00;;\n");
}

// As perf stat --json -r 3 prints it: "variance" before "event-runtime".
TEST(StatPrinterRuns, JsonVariance) {
  EXPECT_EQ(summary(k_three_runs, three_runs(StatFormat::Json), "'true'"),
            "{\"counter-value\" : \"0.350000\", \"unit\" : \"msec\", \"event\" : \"task-clock\", \"variance\" : 8.25, "
            "\"event-runtime\" : 350000, \"pcnt-running\" : 100.00, \"metric-value\" : 0.486111, \"metric-unit\" : "
            "\"CPUs utilized\"}\n"
            "{\"counter-value\" : \"49.000000\", \"unit\" : \"\", \"event\" : \"page-faults\", \"variance\" : 1.18, "
            "\"event-runtime\" : 350000, \"pcnt-running\" : 100.00, \"metric-value\" : 140.000000, \"metric-unit\" : "
            "\"K/sec\"}\n"
            "{\"counter-value\" : \"<not supported>\", \"unit\" : \"\", \"event\" : \"cycles\", \"variance\" : 0.00, "
            "\"event-runtime\" : 0, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n");
}

// Hardware events, one second of one CPU (task-clock 1e9 ns, wall time 1e9 ns):
//   cycles 2.9e9 / 1e9 ns = 2.900 GHz; cycles / ref-cycles = 2.9e9 / 2.5e9 = 1.16 turbo ratio;
//   ref-cycles (no msr/tsc/): 2.5e9/s = 2.500 G/sec;
//   instructions 5.8e9 / 2.9e9 cycles = 2.00 insn per cycle; stalled per insn =
//     max(0.58e9, 1.16e9) / 5.8e9 = 0.20;
//   stalled-cycles-frontend 0.58e9 / 2.9e9 = 20.00%, -backend 1.16e9 / 2.9e9 = 40.00%;
//   branches 1e9/s: 1e9 -> 1e6 K -> 1000 M, and 1000 is not above 1000: 1000.000 M/sec;
//   branch-misses 1e7 / 1e9 = 1.00%; cache-references 1e8/s = 100.000 M/sec;
//   cache-misses 2.5e7 / 1e8 = 25.000 % (perf's "%8.3f %%").
std::vector<Ev> hardware_events() {
  return {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
          ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true),
          ev("ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, true),
          ev("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true),
          ev("stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, true),
          ev("stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true),
          ev("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true),
          ev("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true),
          ev("cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true),
          ev("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true)};
}

Round hardware_round() {
  const uint64_t s = 1'000'000'000;
  const uint64_t values[] = {s, 2'900'000'000, 2'500'000'000, 5'800'000'000, 580'000'000, 1'160'000'000,
                             s, 10'000'000,    100'000'000,   25'000'000};
  Round r{s, {}};
  for (size_t i = 0; i < std::size(values); ++i) r.samples.push_back({i, -1, values[i], s, s});
  return r;
}

TEST(StatPrinterHardware, TextMetricsAndContinuationLines) {
  const Capture c = {hardware_events(), {hardware_round()}, ""};
  StatPrintOptions o = opts(StatFormat::Text);
  o.null_run = true;  // no blank line before the elapsed time: only the counter lines matter here
  const std::string out = summary(c, o, "'./work'");
  const std::string lines =
      "           1000.00 msec task-clock                       #    1.000 CPUs utilized          \n"
      "        2900000000      cycles                           #    2.900 GHz                    \n"
      "                                                  #    1.16  turbo ratio            \n"
      "        2500000000      ref-cycles                       #    2.500 G/sec                  \n"
      "        5800000000      instructions                     #    2.00  insn per cycle         \n"
      "                                                  #    0.20  stalled cycles per insn\n"
      "         580000000      stalled-cycles-frontend          #   20.00% frontend cycles idle   \n"
      "        1160000000      stalled-cycles-backend           #   40.00% backend cycles idle    \n"
      "        1000000000      branches                         # 1000.000 M/sec                  \n"
      "          10000000      branch-misses                    #    1.00% of all branches        \n"
      "         100000000      cache-references                 #  100.000 M/sec                  \n"
      "          25000000      cache-misses                     #   25.000 % of all cache refs    \n";
  EXPECT_EQ(out, "\n Performance counter stats for './work':\n\n" + lines +
                     "       1.000000000 seconds time elapsed\n\n");
}

// perf's continuation lines in CSV (new_line_csv): the (empty) prefix, a separator, then
// 3 separators for the value, unit and event columns, then the metric's own separator.
TEST(StatPrinterHardware, CsvContinuationLine) {
  const Capture c = {{ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true),
                      ev("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true),
                      ev("stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, true)},
                     {{1000, {{0, -1, 2000, 10, 10}, {1, -1, 1000, 10, 10}, {2, -1, 500, 10, 10}}}},
                     ""};
  // No clock: cycles has a blank "Ghz"; IPC 1000 / 2000 = 0.50; stalled 500 / 1000 = 0.50 per insn;
  // frontend 500 / 2000 = 25.00%.
  EXPECT_EQ(summary(c, opts(StatFormat::Csv), "'x'"),
            "2000,,cycles,10,100.00,,\n"
            "1000,,instructions,10,100.00,0.50,insn per cycle\n"
            ",,,,,0.50,stalled cycles per insn\n"
            "500,,stalled-cycles-frontend,10,100.00,25.00,frontend cycles idle\n");
}

// JSON: each metric closes its object; a continuation metric opens a new one.
TEST(StatPrinterHardware, JsonContinuationObject) {
  const Capture c = {{ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true),
                      ev("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true),
                      ev("stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true)},
                     {{1000, {{0, -1, 2000, 10, 10}, {1, -1, 1000, 10, 10}, {2, -1, 500, 10, 10}}}},
                     ""};
  EXPECT_EQ(summary(c, opts(StatFormat::Json), "'x'"),
            "{\"counter-value\" : \"2000.000000\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : 10, "
            "\"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"Ghz\"}\n"
            "{\"counter-value\" : \"1000.000000\", \"unit\" : \"\", \"event\" : \"instructions\", \"event-runtime\" : 10, "
            "\"pcnt-running\" : 100.00, \"metric-value\" : 0.500000, \"metric-unit\" : \"insn per cycle\"}\n"
            "{\"metric-value\" : 0.500000, \"metric-unit\" : \"stalled cycles per insn\"}\n"
            "{\"counter-value\" : \"500.000000\", \"unit\" : \"\", \"event\" : \"stalled-cycles-backend\", "
            "\"event-runtime\" : 10, \"pcnt-running\" : 100.00, \"metric-value\" : 25.000000, \"metric-unit\" : "
            "\"backend cycles idle\"}\n");
}

// Multiplexing: cycles ran 1/3 of the time it was enabled. The value is scaled to
// 1000 * 3 = 3000; text shows perf's "  (33.33%)", CSV and JSON perf's integer percent
// (100 * run / ena = 33, printed "33.00"). An event that never ran is "<not counted>" and
// keeps its own "(0.00%)" when it was enabled.
TEST(StatPrinterHardware, MultiplexedAndNotCounted) {
  const Capture c = {{ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true),
                      ev("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true)},
                     {{1000, {{0, -1, 1000, 300, 100}, {1, -1, 0, 300, 0}}}},
                     ""};
  StatPrintOptions text = opts(StatFormat::Text);
  text.null_run = true;
  // Text: count, unit and "%-32s" name, 35 blank metric columns (no clock for "GHz"), then
  // "  (33.33%)"; a <not counted> row has a "%-25s" name.
  EXPECT_EQ(summary(c, text, "'x'"),
            "\n Performance counter stats for 'x':\n\n"
            "              3000      cycles" + std::string(32 - 6 + 35, ' ') + "  (33.33%)\n" +
            "     <not counted>      instructions" + std::string(25 - 12 + 35, ' ') + "  (0.00%)\n" +
            "       0.000001000 seconds time elapsed\n\n");
  EXPECT_EQ(summary(c, opts(StatFormat::Csv), "'x'"),
            "3000,,cycles,100,33.00,,\n"
            "<not counted>,,instructions,0,0.00,,\n");
}

// --summary after -I: CSV lines start with perf's "%16s" "summary" field; text prints the
// usual header and footer.
TEST(StatPrinterIntervals, SummaryAfterIntervals) {
  const std::vector<Ev> evs = {ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true)};
  StatPrintOptions o = opts(StatFormat::Csv);
  o.interval = true;
  o.interval_summary = true;
  std::ostringstream out;
  StatPrinter printer(stat_events(evs), o, two_cpus(), out);
  printer.add_run(snapshot(evs, Round{5, {{0, -1, 7, 5, 5}}}), RunTimes{5, 0, 0});
  printer.print_summary("'x'");
  EXPECT_EQ(out.str(), "         summary,7,,page-faults,5,100.00,,\n");
}

// perf 6.1 repeats the interval column header every 25 intervals.
TEST(StatPrinterIntervals, HeaderEvery25Intervals) {
  const std::vector<Ev> evs = {ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true)};
  std::ostringstream out;
  StatPrintOptions o = opts(StatFormat::Text);
  o.interval = true;
  StatPrinter printer(stat_events(evs), o, two_cpus(), out);
  for (int i = 0; i < 26; ++i) printer.print_interval(1'000'000'000ULL * (i + 1), snapshot(evs, Round{1, {{0, -1, 1, 1, 1}}}));
  const std::string s = out.str();
  size_t headers = 0;
  for (size_t at = s.find("#           time"); at != std::string::npos; at = s.find("#           time", at + 1)) ++headers;
  EXPECT_EQ(headers, 2u);
  EXPECT_NE(s.find("    25.000000000                  1      page-faults"), std::string::npos);
  EXPECT_EQ(s.rfind("#           time"), s.find("    26.000000000") - std::string("#           time             counts unit events\n").size());
}

// perf's "%'18.0f" under a locale with grouping (en_US.UTF-8), on request.
TEST(StatPrinterText, ThousandsGrouping) {
  const Capture c = {{ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
                      ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true)},
                     {{2'000'000'000, {{0, -1, 1'234'567'890, 1, 1}, {1, -1, 1'234'567, 1, 1}}}},
                     ""};
  StatPrintOptions o = opts(StatFormat::Text);
  o.thousands_grouping = true;
  const std::string out = summary(c, o, "'x'");
  EXPECT_NE(out.find("          1,234.57 msec task-clock "), std::string::npos) << out;
  EXPECT_NE(out.find("         1,234,567      page-faults "), std::string::npos) << out;
}

// perf stat --per-thread -a true (perf 6.1 here; its rows and metrics, rebuilt from what it
// printed: perf-30055's 2 page faults at 926.200/sec give its cpu-clock, 2159361 ns, and the
// context-switch rates the other two's). Event by event, threads by count, ties in TID order
// (perf printed rcu_preempt, memfd, perf for their one switch each); a thread that counted
// nothing (kthreadd here) is left out when every thread of the system is counted.
TEST(StatPrinterText, PerThreadSystemWide) {
  const Capture c = {
      {ev("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true),
       ev("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true),
       ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true)},
      {{5210773,
        {{0, -1, 4800, 4800, 4800, 15}, {1, -1, 1, 4800, 4800, 15}, {2, -1, 0, 4800, 4800, 15},
         {0, -1, 0, 0, 0, 2}, {1, -1, 0, 0, 0, 2}, {2, -1, 0, 0, 0, 2},
         {0, -1, 38594, 38594, 38594, 26063}, {1, -1, 1, 38594, 38594, 26063}, {2, -1, 0, 38594, 38594, 26063},
         {0, -1, 2159361, 2159361, 2159361, 30055}, {1, -1, 1, 2159361, 2159361, 30055},
         {2, -1, 2, 2159361, 2159361, 30055}}}},
      "\n Performance counter stats for 'system wide':\n\n"
      "            perf-30055                  2.16 msec cpu-clock                        #    0.414 CPUs utilized          \n"
      " memfd:sealed-91-26063                  0.04 msec cpu-clock                        #    0.007 CPUs utilized          \n"
      "     rcu_preempt-15                     0.00 msec cpu-clock                        #    0.001 CPUs utilized          \n"
      "     rcu_preempt-15                        1      context-switches                 #  208.333 K/sec                  \n"
      " memfd:sealed-91-26063                     1      context-switches                 #   25.911 K/sec                  \n"
      "            perf-30055                     1      context-switches                 #  463.100 /sec                   \n"
      "            perf-30055                     2      page-faults                      #  926.200 /sec                   \n"
      "\n       0.005210773 seconds time elapsed\n\n"};
  StatPrintOptions options = opts(StatFormat::Text, AggrMode::PerThread);
  options.thread_names = {{2, "kthreadd"}, {15, "rcu_preempt"}, {26063, "memfd:sealed-91"}, {30055, "perf"}};
  options.skip_zero_threads = true;
  EXPECT_EQ(summary(c, options, "'system wide'"), c.expected);
  // The same in CSV: "comm-tid" as the first field, no CPU count (perf: 7 separators a line).
  options.format = StatFormat::Csv;
  options.csv_separator = ",";
  const std::string csv = summary(c, options, "'system wide'");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "perf-30055,2.16,msec,cpu-clock,2159361,100.00,0.414,CPUs utilized");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7) << csv;
}

// perf's header texts (print_header): -a wins over -C, -C over the command, then -p, then -t.
TEST(StatTarget, DescribesLikePerf) {
  EXPECT_EQ(describe_target({false, "", {"sleep", "1"}, "", ""}), "'sleep 1'");
  EXPECT_EQ(describe_target({true, "0-1", {"sleep", "1"}, "", ""}), "'system wide'");
  EXPECT_EQ(describe_target({false, "0-1", {"sleep", "1"}, "", ""}), "'CPU(s) 0-1'");
  EXPECT_EQ(describe_target({false, "", {}, "123,456", ""}), "process id '123,456'");
  EXPECT_EQ(describe_target({false, "", {}, "", "45"}), "thread id '45'");
}

// What perf 6.1's table ends with when an event was not counted. The arm64 guest's perf
// (tests/arm64_guest) printed, for eight events in a group on seven counters,
// `perf stat -e '{cycles,instructions,r11,r8,r11,r8,r11,r8}'`: every member "<not counted>"
// but the refused one, and "The events in group usually have to be from the same PMU. Try
// reorganizing the group." (the leader was not counted and the list mixes PERF_TYPE_HARDWARE
// with PERF_TYPE_RAW); with the NMI watchdog on, the hint to turn it off comes first.
std::string footer_of(const std::vector<Ev>& evs, int members_led_by_first, bool watchdog) {
  std::vector<StatEvent> events = stat_events(evs);
  for (int i = 0; i < members_led_by_first; ++i) events[static_cast<size_t>(i)].group_leader = 0;
  StatPrintOptions options = opts(StatFormat::Text);
  options.nmi_watchdog_on = watchdog ? +[] { return true; } : +[] { return false; };
  std::ostringstream out;
  StatPrinter printer(events, options, two_cpus(), out);
  printer.add_run(snapshot(evs, Round{1000000, {}}), RunTimes{1000000, 0, 0});
  printer.print_summary("'true'");
  const std::string text = out.str();
  return text.substr(text.find("seconds time elapsed") + std::string("seconds time elapsed").size());
}

TEST(StatPrinterFooter, ANotCountedLeaderOfAMixedListSaysToReorganizeTheGroup) {
  const std::vector<Ev> mixed = {ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true),
                                 ev("r11", PERF_TYPE_RAW, 0x11, true), ev("r8", PERF_TYPE_RAW, 0x8, false)};
  EXPECT_EQ(footer_of(mixed, 3, false),
            "\n\nThe events in group usually have to be from the same PMU. Try reorganizing the group.\n");
  EXPECT_EQ(footer_of(mixed, 3, true),
            "\n\nSome events weren't counted. Try disabling the NMI watchdog:\n"
            "\techo 0 > /proc/sys/kernel/nmi_watchdog\n"
            "\tperf stat ...\n"
            "\techo 1 > /proc/sys/kernel/nmi_watchdog\n"
            "The events in group usually have to be from the same PMU. Try reorganizing the group.\n");
  // Not a group (no leader with members): no word about groups.
  EXPECT_EQ(footer_of(mixed, 0, false), "\n\n");
  // A group of one PMU type, software events aside: nothing to reorganize (perf's
  // `perf stat -e '{task-clock,page-faults,cycles}' true` here, without a PMU).
  const std::vector<Ev> one_type = {ev("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true),
                                    ev("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true),
                                    ev("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)};
  EXPECT_EQ(footer_of(one_type, 3, false), "\n\n");
}

}  // namespace
}  // namespace vperf::stat
