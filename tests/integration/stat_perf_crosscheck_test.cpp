// `vperf stat` against Linux perf 6.1 on this machine, in the same test run, on the same
// deterministic workload: the same events in the same order, the same units and metric units,
// the same `<not supported>` rows byte for byte, the same layout line by line, and counts that
// agree (page faults within a few, task-clock within a stated tolerance).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/background.h"
#include "support/capability.h"
#include "support/processes.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"
#include "support/stat_output.h"

namespace vperf {
namespace {

bool has_perf() { return !test::find_program("perf").empty(); }
bool can_count_tracepoints() { return test::has_tracefs() && test::running_as_root(); }

// Both programs get the same arguments and the C locale (no thousands grouping).
struct Pair {
  test::ProgramResult vperf, perf;
};
// `fixed_layout`: both tools run under setarch -R, whose personality their command inherits, so
// its start-up touches the same pages every run (with address-space randomisation the
// start-up faults of `page-faults N` vary by 0 to 2 between runs; without it 60 of 60 runs of
// perf stat counted the same number).
Pair run_both(const std::vector<std::string>& args, bool fixed_layout = false) {
  std::vector<std::string> prefix;
  if (fixed_layout) prefix = {"setarch", "-R"};
  std::vector<std::string> perf_argv = prefix, vperf_argv = prefix;
  perf_argv.insert(perf_argv.end(), {"perf", "stat"});
  perf_argv.insert(perf_argv.end(), args.begin(), args.end());
  vperf_argv.insert(vperf_argv.end(), {VPERF_BINARY, "stat"});
  vperf_argv.insert(vperf_argv.end(), args.begin(), args.end());
  Pair p;
  p.vperf = test::run_program(vperf_argv, {{"LC_ALL", "C"}});
  p.perf = test::run_program(perf_argv, {{"LC_ALL", "C"}});
  return p;
}

std::string describe(const Pair& p) {
  return "--- vperf (exit " + std::to_string(p.vperf.exit_code) + "):\n" + p.vperf.err + "--- perf (exit " +
         std::to_string(p.perf.exit_code) + "):\n" + p.perf.err;
}

// Interval cases end their command half-way between two ticks (sleep, not spin: its wall time
// does not stretch when other builds load the CPUs), so both tools print the same number of
// intervals.
//
// A line with what varies from run to run taken out: each number becomes "N", each run of
// spaces one space, and a rate's scale prefix ("K/sec", "M/sec") goes (0 or 1 context switch
// in a short run moves it). What is left is the layout: which lines, which words, in which order.
std::string shape(const std::string& line) {
  static const std::regex number("[0-9]+(\\.[0-9]+)?");
  static const std::regex spaces(" +");
  static const std::regex rate("\\b[KMG]/sec");  // text " K/sec", CSV ",K/sec", JSON "\"K/sec"
  std::string s = std::regex_replace(line, number, "N");
  s = std::regex_replace(s, rate, "/sec");
  s = std::regex_replace(s, spaces, " ");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// A rate's metric unit without its scale: "K/sec" -> "/sec". Which scale perf picks depends on
// the count (0 context switches: "0.000 /sec"; 1 in a millisecond: "1.000 K/sec"), and a
// preemption under load changes that count; with equal counts the units must be equal as is.
std::string unscaled(const std::string& metric_unit) {
  if (metric_unit.size() == 5 && metric_unit.ends_with("/sec") && std::string_view("KMG").find(metric_unit[0]) != std::string_view::npos)
    return metric_unit.substr(1);
  return metric_unit;
}

std::vector<std::string> all_lines(const std::string& text) {
  std::vector<std::string> lines = test::split_fields(text, "\n");
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// ---------------------------------------------------------------------------------------------

TEST(StatPerfCrosscheck, DefaultSetTextMatchesPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  Pair p = run_both({"--", VPERF_WORKLOAD, "getppid", "10"});
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  std::vector<test::TextRow> v = test::parse_text_rows(p.vperf.err), f = test::parse_text_rows(p.perf.err);
  std::vector<std::string> v_names, f_names;
  for (const auto& r : v) v_names.push_back(r.event);
  for (const auto& r : f) f_names.push_back(r.event);
  EXPECT_EQ(v_names, f_names) << describe(p);
  ASSERT_FALSE(f_names.empty()) << describe(p);
  // `<not supported>` rows carry no number: they must be the same bytes.
  std::vector<std::string> v_unsupported, f_unsupported;
  for (const auto& r : v)
    if (r.value == "<not supported>") v_unsupported.push_back(r.line);
  for (const auto& r : f)
    if (r.value == "<not supported>") f_unsupported.push_back(r.line);
  EXPECT_EQ(v_unsupported, f_unsupported) << describe(p);
  for (size_t i = 0; i < std::min(v.size(), f.size()); ++i) EXPECT_EQ(v[i].unit, f[i].unit) << v[i].line;
}

// The whole text output, line by line, with the numbers taken out (see shape()).
struct LayoutCase {
  const char* name;
  std::vector<std::string> args;
  bool needs_tracepoints = false;
};

void PrintTo(const LayoutCase& c, std::ostream* os) {
  *os << "stat";
  for (const std::string& a : c.args) *os << ' ' << a;
}

class StatPerfLayout : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(StatPerfLayout, SameLinesAsPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  if (GetParam().needs_tracepoints) VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  Pair p = run_both(GetParam().args);
  ASSERT_EQ(p.vperf.exit_code, p.perf.exit_code) << describe(p);
  std::vector<std::string> v = all_lines(p.vperf.err), f = all_lines(p.perf.err);
  std::vector<std::string> v_shapes, f_shapes;
  for (const auto& l : v) v_shapes.push_back(shape(l));
  for (const auto& l : f) f_shapes.push_back(shape(l));
  // How many -I intervals fit in the run is the scheduler's choice on a busy machine (a 150 ms
  // command gives one or two): the layout is compared with repeated lines taken as one.
  v_shapes.erase(std::unique(v_shapes.begin(), v_shapes.end()), v_shapes.end());
  f_shapes.erase(std::unique(f_shapes.begin(), f_shapes.end()), f_shapes.end());
  EXPECT_EQ(v_shapes, f_shapes) << describe(p);
}

INSTANTIATE_TEST_SUITE_P(
    StatPerfCrosscheck, StatPerfLayout,
    ::testing::Values(
        LayoutCase{"Default", {"--", VPERF_WORKLOAD, "getppid", "10"}},
        LayoutCase{"Detailed", {"-ddd", "--", VPERF_WORKLOAD, "getppid", "10"}},
        LayoutCase{"Tracepoint", {"-e", "syscalls:sys_enter_getppid", "--", VPERF_WORKLOAD, "getppid", "10"}, true},
        LayoutCase{"Repeat", {"-r", "3", "-e", "task-clock", "--", VPERF_WORKLOAD, "spin", "20"}},
        LayoutCase{"SystemWideCommand", {"-a", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"CpuListCommand", {"-C", "0", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"NoAggr", {"-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"IntervalCount", {"-I", "100", "--interval-count", "3", "-a", "-e", "cpu-clock"}},
        // No command and no target: every CPU, as perf stat counts then (perf's stat+csv_summary.sh).
        LayoutCase{"NoCommandIsSystemWide", {"-I", "100", "--interval-count", "2", "-e", "cpu-clock"}},
        LayoutCase{"NoCommandTimeout", {"--timeout", "150", "-e", "cpu-clock"}},
        LayoutCase{"CsvNoCommandSummary", {"-x,", "-I", "100", "--interval-count", "1", "--summary", "-e", "cpu-clock"}},
        LayoutCase{"CsvNoCsvSummary", {"-x,", "-I", "100", "--interval-count", "1", "--summary", "--no-csv-summary", "-e", "cpu-clock"}},
        LayoutCase{"NoBigNum", {"--no-big-num", "-e", "syscalls:sys_enter_getppid", "--", VPERF_WORKLOAD, "getppid", "12345"}, true},
        LayoutCase{"IntervalCommand", {"-I", "100", "-e", "task-clock", "--", VPERF_WORKLOAD, "sleep", "150"}},
        LayoutCase{"CsvDefault", {"-x,", "--", VPERF_WORKLOAD, "getppid", "10"}},
        LayoutCase{"CsvRepeat", {"-x,", "-r", "3", "-e", "task-clock", "--", VPERF_WORKLOAD, "spin", "20"}},
        LayoutCase{"CsvNoAggr", {"-x,", "-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"CsvNoAggrNoMerge", {"-x,", "-a", "-A", "--no-merge", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"CsvIntervalNoAggr", {"-x,", "-I", "100", "-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.25"}},
        LayoutCase{"CsvPerCore", {"-x,", "--per-core", "-a", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"CsvPerSocket", {"-x,", "--per-socket", "-a", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"PerNode", {"--per-node", "-a", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"CsvPerNode", {"-x,", "--per-node", "-a", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"JsonPerNode", {"--json", "--per-node", "-a", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        LayoutCase{"IntervalPerNode", {"-I", "100", "--interval-count", "1", "--per-node", "-a", "-e", "cpu-clock"}},
        LayoutCase{"CsvIntervalSummary", {"-x,", "-I", "100", "--summary", "-e", "task-clock", "--", VPERF_WORKLOAD, "sleep", "150"}},
        LayoutCase{"JsonShortName", {"-j", "-e", "task-clock", "--", VPERF_WORKLOAD, "spin", "20"}},
        LayoutCase{"JsonRepeat", {"--json", "-r", "2", "-e", "task-clock", "--", VPERF_WORKLOAD, "spin", "20"}},
        LayoutCase{"JsonInterval", {"--json", "-I", "100", "-e", "task-clock", "--", VPERF_WORKLOAD, "sleep", "150"}},
        LayoutCase{"JsonNoAggr", {"--json", "-a", "-A", "-e", "cpu-clock", "--", "sleep", "0.1"}},
        // A spinning command has user time in every run: no "<not counted>" on one side only.
        // The kernel splits a task's CPU time into user and system by where its ticks landed
        // (cputime_adjust): 50 ms is at most about 12 ticks, and a loaded run once saw none in user
        // mode, so perf printed user_time as <not counted> (0) where vperf's own run had 51.7
        // ms. 300 ms is about 75 ticks.
        LayoutCase{"ToolEvents", {"-e", "duration_time,user_time,task-clock", "--", VPERF_WORKLOAD, "spin", "300"}},
        LayoutCase{"CsvToolEvents", {"-x,", "-e", "duration_time,user_time", "--", VPERF_WORKLOAD, "spin", "300"}},
        LayoutCase{"JsonToolEvents", {"--json", "-e", "duration_time,user_time", "--", VPERF_WORKLOAD, "spin", "300"}},
        LayoutCase{"RepeatToolEvents", {"-r", "2", "-e", "duration_time,user_time", "--", VPERF_WORKLOAD, "spin", "300"}},
        LayoutCase{"IntervalDuration", {"-I", "100", "-e", "duration_time", "--", VPERF_WORKLOAD, "sleep", "150"}},
        LayoutCase{"Modifiers", {"-e", "task-clock:I,page-faults:e,task-clock:P,task-clock:b", "--", VPERF_WORKLOAD, "getppid", "10"}},
        LayoutCase{"WeakGroup", {"-e", "{task-clock,page-faults}:W", "--", VPERF_WORKLOAD, "getppid", "10"}},
        LayoutCase{"Null", {"-n", "--", "sleep", "0.1"}},
        LayoutCase{"NullRepeat", {"-n", "-r", "2", "--", "sleep", "0.05"}},
        LayoutCase{"NullSystemWide", {"-n", "-a", "--", "sleep", "0.1"}},
        LayoutCase{"NullCsv", {"-n", "-x,", "--", "sleep", "0.1"}},
        LayoutCase{"NullJson", {"-n", "--json", "--", "sleep", "0.1"}},
        LayoutCase{"NullWithAnEvent", {"-n", "-e", "task-clock", "--", "sleep", "0.1"}},
        LayoutCase{"NullInterval", {"-n", "-I", "100", "--", VPERF_WORKLOAD, "sleep", "150"}}),
    [](const ::testing::TestParamInfo<LayoutCase>& param_info) { return std::string(param_info.param.name); });

TEST(StatPerfCrosscheck, CsvPageFaultsFieldByField) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(!test::find_program("setarch").empty(), "setarch (util-linux)");
  Pair p = run_both({"-x,", "--", VPERF_WORKLOAD, "page-faults", "10000"}, true);
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  std::vector<test::CsvLine> v = test::parse_csv(p.vperf.err), f = test::parse_csv(p.perf.err);
  ASSERT_EQ(v.size(), f.size()) << describe(p);
  ASSERT_FALSE(f.empty());
  std::optional<double> v_faults, f_faults;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& vf = v[i].fields;
    const auto& ff = f[i].fields;
    SCOPED_TRACE("vperf: " + v[i].line + "\nperf:  " + f[i].line);
    ASSERT_EQ(vf.size(), ff.size());
    ASSERT_GE(ff.size(), 7u);
    EXPECT_EQ(vf[2], ff[2]) << "event name";
    EXPECT_EQ(vf[1], ff[1]) << "unit";
    if (ff[0] == "<not supported>" || ff[0] == "<not counted>") {
      EXPECT_EQ(v[i].line, f[i].line) << "rows without a count are identical";
      continue;
    }
    EXPECT_TRUE(test::parse_number(vf[0])) << "count";
    EXPECT_TRUE(test::parse_number(vf[3])) << "run time (ns)";
    EXPECT_EQ(vf[4], "100.00") << "software events are never multiplexed";
    EXPECT_EQ(vf[4], ff[4]);
    EXPECT_EQ(unscaled(vf[6]), unscaled(ff[6])) << "metric unit";
    if (vf[0] == ff[0]) {
      EXPECT_EQ(vf[6], ff[6]) << "the same count has the same metric unit";
    }
    EXPECT_EQ(vf[5].empty(), ff[5].empty()) << "metric value present in both or neither";
    if (vf[2] == "page-faults") {
      v_faults = test::parse_number(vf[0]);
      f_faults = test::parse_number(ff[0]);
    }
  }
  ASSERT_TRUE(v_faults && f_faults) << describe(p);
  EXPECT_GE(*v_faults, 10000) << "the workload touches 10000 fresh pages";
  // With the layout fixed the counts are equal in every run measured here, loaded or not (30
  // interleaved pairs beside a two-core build: 10105-10107 with randomisation, both tools). Once,
  // in a CI-like run beside the arm64 guest, one vperf run counted 9 more than perf's (10121 vs
  // 10112, with randomisation); its cause is not known, so the bound stays 5, not widened to it.
  EXPECT_NEAR(*v_faults, *f_faults, 5) << "the same command's faults with a fixed layout\n" << describe(p);
  std::printf("[ measured ] page-faults on 'page-faults 10000': vperf %.0f, perf %.0f\n", *v_faults, *f_faults);
}

// `spin 300` stops once its own CPU time (CLOCK_PROCESS_CPUTIME_ID) reaches 300 ms, so
// task-clock is 300 ms plus start-up and exit (~1 ms) whatever the load: time the task waits
// for a CPU is not task-clock. Both tools measure the same thing with the same kernel counter;
// what separates them is start-up (dynamic loading, ~0.3-1 ms) and where they stop waiting.
// 5% (15 ms) covers that and a descheduled spinner overshooting its last check, and would
// still catch a unit error (usec/msec), a missed inherit or a wall-clock count under load.
TEST(StatPerfCrosscheck, TaskClockOnSpinAgreesWithPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  Pair p = run_both({"-x,", "-e", "task-clock", "--", VPERF_WORKLOAD, "spin", "300"});
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  auto v = test::find_csv_event(test::parse_csv(p.vperf.err), "task-clock");
  auto f = test::find_csv_event(test::parse_csv(p.perf.err), "task-clock");
  ASSERT_TRUE(v && f) << describe(p);
  std::optional<double> vms = test::parse_number(v->fields[0]), fms = test::parse_number(f->fields[0]);
  ASSERT_TRUE(vms && fms) << describe(p);
  EXPECT_EQ(v->fields[1], "msec");
  EXPECT_GE(*vms, 300.0);
  EXPECT_LT(*vms, 400.0);
  EXPECT_NEAR(*vms, *fms, 0.05 * 300) << describe(p);
  // The run time column is task-clock in ns: the same figure as the count.
  std::optional<double> run_ns = test::parse_number(v->fields[3]);
  ASSERT_TRUE(run_ns);
  EXPECT_NEAR(*run_ns / 1e6, *vms, 0.01) << v->line;
  std::printf("[ measured ] task-clock on 'spin 300': vperf %.2f msec, perf %.2f msec\n", *vms, *fms);
}

TEST(StatPerfCrosscheck, JsonKeysMatchPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  Pair p = run_both({"--json", "--", VPERF_WORKLOAD, "getppid", "10"});
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  std::vector<boost::json::value> v = test::parse_json_lines(p.vperf.err), f = test::parse_json_lines(p.perf.err);
  ASSERT_EQ(v.size(), f.size()) << describe(p);
  auto keys = [](const boost::json::value& line) {
    std::vector<std::string> k;  // in order: perf's lines are hand-written, order is part of the format
    if (line.is_object())
      for (const auto& kv : line.as_object()) k.push_back(std::string(kv.key()));
    return k;
  };
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_TRUE(v[i].is_object()) << "vperf line " << i << " is not a JSON object\n" << describe(p);
    EXPECT_EQ(keys(v[i]), keys(f[i])) << boost::json::serialize(v[i]) << "\n" << boost::json::serialize(f[i]);
    EXPECT_EQ(v[i].at("event"), f[i].at("event"));
    EXPECT_EQ(v[i].at("unit"), f[i].at("unit"));
    ASSERT_TRUE(v[i].at("metric-unit").is_string() && f[i].at("metric-unit").is_string());
    const std::string v_unit(v[i].at("metric-unit").as_string()), f_unit(f[i].at("metric-unit").as_string());
    EXPECT_EQ(unscaled(v_unit), unscaled(f_unit)) << boost::json::serialize(v[i]);
    if (v[i].at("counter-value") == f[i].at("counter-value")) {
      EXPECT_EQ(v_unit, f_unit) << "the same count has the same metric unit";
    }
    if (f[i].at("counter-value") == boost::json::value("<not supported>")) {
      EXPECT_EQ(boost::json::serialize(v[i]), boost::json::serialize(f[i]));
    }
  }
}

TEST(StatPerfCrosscheck, GlobExpandsToPerfsNames) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  for (const char* glob : {"syscalls:sys_enter_getpp*", "syscalls:sys_enter_getp*"}) {
    Pair p = run_both({"-x,", "-e", glob, "--", VPERF_WORKLOAD, "getppid", "50"});
    ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
    ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
    std::multiset<std::string> v, f;  // perf's order is tracefs readdir order: compare the sets
    std::map<std::string, std::string> v_counts, f_counts;
    for (const auto& l : test::parse_csv(p.vperf.err)) v.insert(l.fields.at(2)), v_counts[l.fields.at(2)] = l.fields[0];
    for (const auto& l : test::parse_csv(p.perf.err)) f.insert(l.fields.at(2)), f_counts[l.fields.at(2)] = l.fields[0];
    EXPECT_EQ(v, f) << glob << "\n" << describe(p);
    EXPECT_EQ(v_counts["syscalls:sys_enter_getppid"], "50") << describe(p);
    EXPECT_EQ(f_counts["syscalls:sys_enter_getppid"], "50") << describe(p);
  }
}

TEST(StatPerfCrosscheck, DetailedEventNamesMatchPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  for (const char* level : {"-d", "-dd", "-ddd"}) {
    Pair p = run_both({"-x,", level, "--", VPERF_WORKLOAD, "getppid", "10"});
    ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
    ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
    std::vector<std::string> v, f;
    for (const auto& l : test::parse_csv(p.vperf.err)) v.push_back(l.fields.at(2));
    for (const auto& l : test::parse_csv(p.perf.err)) f.push_back(l.fields.at(2));
    EXPECT_EQ(v, f) << level << "\n" << describe(p);
  }
}

TEST(StatPerfCrosscheck, ExactCountsAgreeWithPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  Pair p = run_both({"-x,", "-e", "{syscalls:sys_enter_getppid,page-faults}", "--", VPERF_WORKLOAD, "getppid", "12345"});
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  auto v = test::find_csv_event(test::parse_csv(p.vperf.err), "syscalls:sys_enter_getppid");
  auto f = test::find_csv_event(test::parse_csv(p.perf.err), "syscalls:sys_enter_getppid");
  ASSERT_TRUE(v && f) << describe(p);
  EXPECT_EQ(v->fields[0], "12345");
  EXPECT_EQ(v->fields[0], f->fields[0]);
}

// --filter on the last event, a tracepoint: dd with bs=1 reads its input (fd 0) exactly `count`
// times, among other reads (the loader's, its locale's); both tools count those 1000 alone.
TEST(StatPerfCrosscheck, FilterCountsWhatPerfCounts) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  const std::vector<std::string> dd = {"dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=1000"};
  std::vector<std::string> args = {"-x,", "-e", "syscalls:sys_enter_read", "--filter", "fd == 0", "--"};
  args.insert(args.end(), dd.begin(), dd.end());
  Pair p = run_both(args);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  auto v = test::find_csv_event(test::parse_csv(p.vperf.err), "syscalls:sys_enter_read");
  auto f = test::find_csv_event(test::parse_csv(p.perf.err), "syscalls:sys_enter_read");
  ASSERT_TRUE(v && f) << describe(p);
  EXPECT_EQ(v->fields[0], "1000");
  EXPECT_EQ(f->fields[0], "1000");
  std::vector<std::string> unfiltered = {"stat", "-x,", "-e", "syscalls:sys_enter_read", "--"};
  unfiltered.insert(unfiltered.end(), dd.begin(), dd.end());
  test::ProgramResult all = test::run_vperf(unfiltered);
  auto every = test::find_csv_event(test::parse_csv(all.err), "syscalls:sys_enter_read");
  ASSERT_TRUE(every) << all.err;
  EXPECT_GT(test::parse_number(every->fields[0]).value(), 1000) << "without the filter dd's other reads count too";

  // Mistakes: one line each, exit 2.
  test::ProgramResult not_tracepoint = test::run_vperf({"stat", "-e", "task-clock", "--filter", "fd == 0", "--", "true"});
  EXPECT_EQ(not_tracepoint.exit_code, 2);
  EXPECT_EQ(std::count(not_tracepoint.err.begin(), not_tracepoint.err.end(), '\n'), 1) << not_tracepoint.err;
  EXPECT_NE(not_tracepoint.err.find("task-clock is not one"), std::string::npos) << not_tracepoint.err;
  test::ProgramResult refused = test::run_vperf({"stat", "-e", "syscalls:sys_enter_read", "--filter", "nosuch == 0", "--", "true"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_NE(refused.err.find("the kernel refused the filter 'nosuch == 0'"), std::string::npos) << refused.err;
}

// -v: before the table, a line per event with its value, enabled and running times, in perf's
// words and order; the value is the count the table shows.
TEST(StatPerfCrosscheck, VerboseCountLinesAsPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  Pair p = run_both({"-v", "-x,", "-e", "page-faults,task-clock", "--", VPERF_WORKLOAD, "page-faults", "1000"});
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  const std::regex raw(R"(^([a-z-]+): (\d+) (\d+) (\d+)$)");
  auto raw_lines = [&](const std::string& text) {
    std::vector<std::vector<uint64_t>> values;
    std::vector<std::string> names;
    std::istringstream in(text);
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_match(line, m, raw)) {
        names.push_back(m[1]);
        values.push_back({std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4])});
      }
    return std::make_pair(names, values);
  };
  auto [mine, my_values] = raw_lines(p.vperf.err);
  auto [theirs, their_values] = raw_lines(p.perf.err);
  EXPECT_EQ(mine, (std::vector<std::string>{"page-faults", "task-clock"})) << describe(p);
  EXPECT_EQ(mine, theirs) << describe(p);
  auto faults = test::find_csv_event(test::parse_csv(p.vperf.err), "page-faults");
  ASSERT_TRUE(faults && my_values.size() == 2) << describe(p);
  EXPECT_EQ(std::to_string(my_values[0][0]), faults->fields[0]);
  EXPECT_GE(my_values[0][0], 1000u);
  for (const auto& v : my_values) EXPECT_EQ(v[1], v[2]) << "a software counter runs whenever it is enabled";
}

// --all-user and --all-kernel: the workload's 10000 page faults happen in user space, so they
// count there and not in the kernel, as perf counts them (the same fixed layout: within the
// few faults CsvPageFaultsFieldByField allows); and stat record writes the attr perf's does.
TEST(StatPerfCrosscheck, AllUserAndAllKernelCountWherePerfCounts) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(!test::find_program("setarch").empty(), "setarch (util-linux)");
  for (const std::string mode : {"--all-user", "--all-kernel"}) {
    SCOPED_TRACE(mode);
    Pair p = run_both({"-x,", mode, "-e", "page-faults", "--", VPERF_WORKLOAD, "page-faults", "10000"}, true);
    ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
    ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
    auto v = test::find_csv_event(test::parse_csv(p.vperf.err), "page-faults");
    auto f = test::find_csv_event(test::parse_csv(p.perf.err), "page-faults");
    ASSERT_TRUE(v && f) << describe(p);
    const double mine = test::parse_number(v->fields[0]).value(), theirs = test::parse_number(f->fields[0]).value();
    if (mode == "--all-user") EXPECT_GE(mine, 10000) << describe(p);
    else EXPECT_LT(mine, 100) << "the kernel's own faults only\n" << describe(p);
    EXPECT_NEAR(mine, theirs, 5) << describe(p);
  }
  test::TempTree dir;
  const std::string mine = (dir.root() / "vperf.data").string(), theirs = (dir.root() / "perf.data").string();
  ASSERT_EQ(test::run_vperf({"stat", "record", "--all-user", "-e", "page-faults", "-o", mine, "--", "true"}).exit_code, 0);
  ASSERT_EQ(test::run_program({"perf", "stat", "record", "--all-user", "-e", "page-faults", "-o", theirs, "--", "true"}).exit_code, 0);
  test::ProgramResult a = test::run_program({"perf", "evlist", "-v", "-i", mine}), b = test::run_program({"perf", "evlist", "-v", "-i", theirs});
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("exclude_kernel: 1"), std::string::npos) << a.out;
}

// ---------------------------------------------------------------------------------------------
// Hardware paths: need a PMU.

TEST(StatPerfCrosscheck, HardwareModifierNamesMatchPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(test::has_hardware_pmu(), "a hardware PMU (cycles, instructions)");
  Pair p = run_both({"-x,", "-e", "cycles:u,instructions:u,{cycles,instructions}", "--", VPERF_WORKLOAD, "spin", "50"});
  ASSERT_EQ(p.perf.exit_code, 0) << describe(p);
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  std::vector<std::string> v, f;
  for (const auto& l : test::parse_csv(p.vperf.err)) v.push_back(l.fields.at(2));
  for (const auto& l : test::parse_csv(p.perf.err)) f.push_back(l.fields.at(2));
  EXPECT_EQ(v, f) << describe(p);
}

TEST(StatPerfCrosscheck, IpcLineMatchesPerf) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(test::has_hardware_pmu(), "a hardware PMU (cycles, instructions)");
  Pair p = run_both({"-e", "cycles,instructions", "--", VPERF_WORKLOAD, "spin", "100"});
  ASSERT_EQ(p.vperf.exit_code, 0) << describe(p);
  std::vector<std::string> v_shapes, f_shapes;
  for (const auto& l : all_lines(p.vperf.err)) v_shapes.push_back(shape(l));
  for (const auto& l : all_lines(p.perf.err)) f_shapes.push_back(shape(l));
  EXPECT_EQ(v_shapes, f_shapes) << describe(p);
  EXPECT_NE(p.vperf.err.find("insn per cycle"), std::string::npos) << describe(p);
}

// --per-thread: one row per thread with that thread's own count. Three threads of a Python
// process make exactly 1000, 2000 and 3000 getppid calls once told to (SIGUSR1, sent when the
// counters are open), its main thread none; each tool counts the process with -p. The rows are
// "python3-TID", highest count first, and the counts are exact; perf's rows are the same.
constexpr const char* kThreadsScript = R"(
import os, select, signal, threading
go = threading.Event()
def work(n):
    go.wait()
    for _ in range(n): os.getppid()
threads = [threading.Thread(target=work, args=(k * 1000,)) for k in (1, 2, 3)]
for t in threads: t.start()
r, w = os.pipe()
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
signal.signal(signal.SIGUSR1, lambda *_: None)
print(*(t.native_id for t in threads), flush=True)
select.select([r], [], [])
go.set()
for t in threads: t.join()
)";

TEST(StatPerThread, EachThreadCountsItsOwnCalls) {
  VPERF_REQUIRE(can_count_tracepoints(), "tracefs and root (tracepoint counters)");
  VPERF_REQUIRE(!test::find_program("python3").empty(), "python3");
  for (const std::string& tool : {std::string(VPERF_BINARY), std::string("perf")}) {
    if (tool == "perf" && !has_perf()) continue;
    SCOPED_TRACE(tool);
    test::Background python({"python3", "-c", kThreadsScript});
    ASSERT_GT(python.pid(), 0);
    ASSERT_TRUE(test::wait_until([&] { return test::blocked_in_wait(python.pid()); }, std::chrono::seconds(20)));
    test::Background stat({tool, "stat", "--per-thread", "-x,", "-e", "syscalls:sys_enter_getppid", "-p",
                           std::to_string(python.pid())});
    // Both tools wait in poll once the counters are open and enabled.
    ASSERT_TRUE(test::wait_until([&] { return test::counting_and_waiting(stat.pid()); }, std::chrono::seconds(20)));
    ::kill(python.pid(), SIGUSR1);
    const test::ProgramResult ran = python.wait();
    const test::ProgramResult counted = stat.wait();
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    ASSERT_EQ(counted.exit_code, 0) << counted.err;
    std::istringstream tids(ran.out);
    std::vector<std::string> expected;
    std::vector<std::string> workers{std::istream_iterator<std::string>(tids), std::istream_iterator<std::string>()};
    ASSERT_EQ(workers.size(), 3u) << ran.out;
    for (int k = 3; k >= 1; --k) expected.push_back("python3-" + workers[static_cast<size_t>(k - 1)] + "," + std::to_string(k * 1000));
    expected.push_back("python3-" + std::to_string(python.pid()) + ",0");
    std::vector<std::string> rows;
    for (const test::CsvLine& line : test::parse_csv(counted.err)) {
      ASSERT_GE(line.fields.size(), 4u) << line.line;
      EXPECT_EQ(line.fields[3], "syscalls:sys_enter_getppid") << line.line;
      rows.push_back(line.fields[0] + "," + line.fields[1]);
    }
    EXPECT_EQ(rows, expected) << counted.err;
  }
}

// stat record / stat report both ways: each tool's report of either tool's recording (a file
// and a pipe, per task and per CPU) is the same text, perf's; a recording without counts is
// one line.
TEST(StatRecordReport, EachToolReportsEithersRecordingAsPerfDoes) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  const std::string dir = ::testing::TempDir();
  auto sh = [](const std::string& cmd) { return test::run_program({"sh", "-c", cmd}, {{"LC_ALL", "C"}}); };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-e task-clock,page-faults", std::string(VPERF_WORKLOAD) + " getppid 10"},
      {"-a -A -e cpu-clock", std::string(VPERF_WORKLOAD) + " spin 50"}};
  for (const auto& [options, command] : cases) {
    for (const std::string& recorder : {std::string(VPERF_BINARY), std::string("perf")}) {
      for (bool pipe : {false, true}) {
        SCOPED_TRACE(recorder + " stat record " + options + (pipe ? " (pipe)" : " (file)"));
        const std::string file = dir + "/stat-record-" + std::to_string(::getpid()) + (pipe ? ".pipe" : ".data");
        const std::string record = recorder + " stat record -o " + (pipe ? "- " : file + " ") + options + " " + command;
        test::ProgramResult recorded = sh(pipe ? record + " > " + file + " 2>/dev/null" : record + " 2>/dev/null");
        ASSERT_EQ(recorded.exit_code, 0) << record << "\n" << recorded.err;
        const std::string input = pipe ? " -i - < " + file : " -i " + file;
        test::ProgramResult by_perf = sh("perf stat report" + input);
        test::ProgramResult by_vperf = sh(std::string(VPERF_BINARY) + " stat report" + input);
        EXPECT_EQ(by_vperf.exit_code, 0) << by_vperf.err;
        EXPECT_NE(by_perf.err.find(pipe ? "Performance counter stats for 'pipe':" : "Performance counter stats for '"), std::string::npos)
            << by_perf.err;
        EXPECT_NE(by_perf.err.find(options.find("-A") != std::string::npos ? "CPU0 " : "task-clock"), std::string::npos) << by_perf.err;
        EXPECT_EQ(by_vperf.err, by_perf.err);
        // Formats are stat's (before the word report), splits report's: a task recording has
        // no CPUs to split by, which perf warns about and prints as recorded. perf splits by
        // the file's CPU_TOPOLOGY and NUMA_TOPOLOGY (without them perf 6.1 crashes on
        // --per-core), vperf by this machine's.
        if (!pipe) {
          for (const char* form : {"-x, report", "--json report", "-x';' report --per-socket", "report -A", "report --per-core",
                                   "report --per-node"}) {
            test::ProgramResult perf_form = sh(std::string("perf stat ") + form + input);
            test::ProgramResult vperf_form = sh(std::string(VPERF_BINARY) + " stat " + std::string(form) + input);
            EXPECT_EQ(vperf_form.exit_code, 0) << form << "\n" << vperf_form.err;
            EXPECT_EQ(vperf_form.err, perf_form.err) << form;
          }
        }
        std::filesystem::remove(file);
      }
    }
  }
  // vperf's files carry this machine's CPU_TOPOLOGY and NUMA_TOPOLOGY as perf writes them: the
  // same lines in perf's header dump (free memory aside, which changes between the recordings).
  auto topology = [&](const std::string& recorder, const std::string& file) {
    EXPECT_EQ(sh(recorder + " stat record -a -o " + file + " -e cpu-clock -- true 2>/dev/null").exit_code, 0) << recorder;
    std::istringstream header(sh("perf report --header-only -I -i " + file).out);
    std::vector<std::string> lines;
    for (std::string line; std::getline(header, line);) {
      const bool cpu_place = line.starts_with("# CPU ") && line.find("Core ID") != std::string::npos;  // not the CACHE lines
      if (!line.starts_with("# sibling") && !cpu_place && !line.starts_with("# node")) continue;
      if (size_t free = line.find(", free = "); free != std::string::npos) line.erase(free);
      lines.push_back(line);
    }
    std::filesystem::remove(file);
    return lines;
  };
  const std::vector<std::string> mine = topology(VPERF_BINARY, dir + "/topology-vperf.data");
  const std::vector<std::string> theirs = topology("perf", dir + "/topology-perf.data");
  EXPECT_FALSE(theirs.empty());
  EXPECT_EQ(mine, theirs);

  test::ProgramResult not_stat = sh(std::string(VPERF_BINARY) + " stat report -i /dev/null");
  EXPECT_EQ(not_stat.exit_code, 1) << not_stat.err;
  EXPECT_EQ(std::count(not_stat.err.begin(), not_stat.err.end(), '\n'), 1) << not_stat.err;
}

// stat record -I: the file holds every interval (the counts since the start, an INTERVAL round
// each, no FINAL round, as perf's); stat report prints them, by either tool, as perf stat report
// prints them (without "CPUs utilized", rates over the mean clock so far); and the counts of
// vperf's report are the ones printed while counting.
TEST(StatRecordReport, IntervalRecordingsReportTheirIntervals) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  const std::string dir = ::testing::TempDir();
  auto sh = [](const std::string& cmd) { return test::run_program({"sh", "-c", cmd}, {{"LC_ALL", "C"}}); };
  // "     0.100369820              99.01 msec task-clock ..." -> "0.100369820 99.01 msec task-clock"
  auto counts = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line.starts_with("#")) continue;
      std::istringstream words(line.substr(0, line.find('#')));
      std::string word, joined;
      while (words >> word) joined += (joined.empty() ? "" : " ") + word;
      out.push_back(joined);
    }
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-I 100 -e task-clock,page-faults", std::string(VPERF_WORKLOAD) + " spin 350"},
      {"-I 100 -a -A -e cpu-clock,context-switches", std::string(VPERF_WORKLOAD) + " spin 250"}};
  for (const auto& [options, command] : cases) {
    for (const std::string& recorder : {std::string(VPERF_BINARY), std::string("perf")}) {
      for (bool pipe : {false, true}) {
        SCOPED_TRACE(recorder + " stat record " + options + (pipe ? " (pipe)" : " (file)"));
        const std::string file = dir + "/stat-interval-" + std::to_string(::getpid()) + (pipe ? ".pipe" : ".data");
        const std::string log = file + ".log";
        const std::string record = recorder + " stat record -o " + (pipe ? "- " : file + " ") + options + " " + command;
        test::ProgramResult recorded = sh(pipe ? record + " > " + file + " 2>" + log : record + " 2>" + log);
        ASSERT_EQ(recorded.exit_code, 0) << record;
        const std::string input = pipe ? " -i - < " + file : " -i " + file;
        test::ProgramResult by_perf = sh("perf stat report" + input);
        test::ProgramResult by_vperf = sh(std::string(VPERF_BINARY) + " stat report" + input);
        EXPECT_EQ(by_vperf.exit_code, 0) << by_vperf.err;
        const std::vector<std::string> reported = counts(by_perf.err);
        ASSERT_GE(reported.size(), 4u) << by_perf.err;  // two intervals at least
        EXPECT_EQ(by_perf.err.find("Performance counter stats"), std::string::npos) << "no summary: " << by_perf.err;
        EXPECT_EQ(by_vperf.err, by_perf.err);
        if (recorder == VPERF_BINARY) {
          test::ProgramResult live = sh("cat " + log);
          EXPECT_EQ(counts(live.out), reported) << "the counts printed while counting";
        }
        std::filesystem::remove(file);
        std::filesystem::remove(log);
      }
    }
  }
}

}  // namespace
}  // namespace vperf
