// vperf on a real hardware PMU: QEMU's emulated PMUv3 in the arm64 guest (shared_arm64_guest.h),
// booted with -icount shift=0, where every retired instruction is one cycle of virtual time. The
// ground truth is exact where the emulator is: cycles and instructions of one run are equal; the
// counted loop of vperf-workload retires exactly 2N instructions; perf 6.1 for arm64 counts the
// same run beside vperf. Where the emulator is not exact, the tolerance is the spread measured
// across runs (docs/arm64.md): a run's user instructions vary by up to 0.4% (QEMU counts the
// instructions of translated blocks an interrupt cuts short), and its kernel instructions by
// tens of percent (a few thousand instructions of syscalls around a timer tick).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "arm64_guest/shared_arm64_guest.h"
#include "support/stat_output.h"

namespace vperf::test {
namespace {

constexpr const char* kPerf = "/lib/vperf-test/perf";
constexpr const char* kLoop = "/bin/vperf-workload loop";

class Arm64Pmu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedArm64Guest::ready()) GTEST_FAIL() << "no arm64 guest";
  }
};

// `tool stat -x, -e EVENTS -- COMMAND` in the guest: event -> count (nullopt: not counted or not
// supported), failing the test when the tool fails.
std::map<std::string, std::optional<double>> csv_counts(const std::string& tool, const std::string& events, const std::string& command) {
  const GuestCommandResult r = SharedArm64Guest::run(tool + " stat -x, -e '" + events + "' " + command + " 2>&1 >/dev/null");
  EXPECT_EQ(r.exit_code, 0) << tool << " stat failed:\n" << r.out << r.err;
  std::map<std::string, std::optional<double>> counts;
  for (const CsvLine& line : parse_csv(r.out))
    if (line.fields.size() > 2) counts[line.fields[2]] = parse_number(line.fields[0]);
  return counts;
}

double count_of(const std::map<std::string, std::optional<double>>& counts, const std::string& event) {
  auto it = counts.find(event);
  if (it == counts.end() || !it->second) {
    ADD_FAILURE() << event << " was not counted";
    return 0;
  }
  return *it->second;
}

::testing::AssertionResult within(double value, double expected, double relative) {
  if (std::fabs(value - expected) <= relative * std::fabs(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << value << " is not within " << relative * 100 << "% of " << expected << " (off by "
                                       << (value - expected) / expected * 100 << "%)";
}

// Under -icount shift=0 a cycle is an instruction: the two counts of one run are equal, and
// perf's IPC line says 1.00. vperf's table has perf's rows, units and comment for the same run.
TEST_F(Arm64Pmu, CyclesEqualInstructionsAndTheTableIsPerfs) {
  const std::string command = std::string(kLoop) + " 10000000";
  const GuestCommandResult vperf = SharedArm64Guest::run("vperf stat -e cycles,instructions " + command + " 2>&1 >/dev/null");
  const GuestCommandResult perf = SharedArm64Guest::run(std::string(kPerf) + " stat -e cycles,instructions " + command + " 2>&1 >/dev/null");
  ASSERT_EQ(vperf.exit_code, 0) << vperf.out;
  ASSERT_EQ(perf.exit_code, 0) << perf.out;
  const std::vector<TextRow> v = parse_text_rows(vperf.out), p = parse_text_rows(perf.out);
  ASSERT_EQ(v.size(), 2u) << vperf.out;
  ASSERT_EQ(p.size(), 2u) << perf.out;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(v[i].event, p[i].event);
    EXPECT_EQ(v[i].unit, p[i].unit);
    // Below 2^31 the loop's counts sit well inside the run-to-run spread of the two tools.
    EXPECT_TRUE(within(std::stod(v[i].value), std::stod(p[i].value), 0.03)) << v[i].event;
  }
  EXPECT_EQ(v[0].value, v[1].value) << "cycles and instructions of one run differ under -icount shift=0:\n" << vperf.out;
  EXPECT_NE(v[1].line.find("#    1.00  insn per cycle"), std::string::npos) << v[1].line;
  EXPECT_NE(p[1].line.find("#    1.00  insn per cycle"), std::string::npos) << p[1].line;
  // The same columns: the comment starts where perf's does.
  EXPECT_EQ(v[1].line.find('#'), p[1].line.find('#')) << "vperf: " << v[1].line << "\nperf:  " << p[1].line;
}

// The counted loop retires exactly two instructions per iteration: two runs that differ by N
// iterations differ by 2N user instructions, within the emulator's spread.
TEST_F(Arm64Pmu, TheCountedLoopRetiresTwoUserInstructionsPerIteration) {
  constexpr double kIterations = 50'000'000;
  const double none = count_of(csv_counts("vperf", "instructions:u,cycles:u", std::string(kLoop) + " 0"), "instructions:u");
  const auto loop = csv_counts("vperf", "instructions:u,cycles:u", std::string(kLoop) + " 50000000");
  const double with_loop = count_of(loop, "instructions:u");
  EXPECT_TRUE(within(with_loop - none, 2 * kIterations, 0.01)) << "start-up alone " << none << ", with the loop " << with_loop;
  EXPECT_EQ(count_of(loop, "cycles:u"), with_loop) << "user cycles are user instructions under -icount shift=0";
}

// Twelve events on seven counters: the kernel rotates them, and each is printed scaled with
// the share of the run it was counted, as perf prints it. A scaled count of the loop's events is
// within 3% of the same event counted alone (it runs through many rotations); a kernel-only
// count, a few thousand instructions around two syscalls, is only checked to be there.
TEST_F(Arm64Pmu, MultiplexedCountsAreScaledToWhatEachCountsAlone) {
  const std::string events = "cycles,instructions,cycles:u,instructions:u,cycles:k,instructions:k,r11,r8,r11:u,r8:u,r11:k,r8:k";
  const std::string command = std::string(kLoop) + " 50000000";
  const GuestCommandResult text = SharedArm64Guest::run("vperf stat -e " + events + " " + command + " 2>&1 >/dev/null");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  const std::regex share(R"(\((\d+\.\d\d)%\)$)");
  int multiplexed = 0;
  for (const TextRow& row : parse_text_rows(text.out)) {
    std::smatch m;
    if (std::regex_search(row.line, m, share) && std::stod(m[1]) < 100) ++multiplexed;
  }
  EXPECT_GE(multiplexed, 6) << "twelve events on seven counters, and no share below 100%:\n" << text.out;

  const auto together = csv_counts("vperf", events, command);
  for (const std::string event : {"cycles", "instructions", "cycles:u", "instructions:u", "r11", "r8", "r11:u", "r8:u"}) {
    const double alone = count_of(csv_counts("vperf", event, command), event);
    EXPECT_TRUE(within(count_of(together, event), alone, 0.03)) << event << " multiplexed against alone";
  }
  for (const std::string event : {"cycles:k", "instructions:k", "r11:k", "r8:k"}) EXPECT_GT(count_of(together, event), 0) << event;
}

// A group of more events than the PMU can count at once: the kernel refuses the member that
// does not fit, which perf shows as "<not supported>" while the others stay a group the PMU
// cannot schedule ("<not counted>"), and says why below the table. vperf prints the same.
TEST_F(Arm64Pmu, AGroupLargerThanTheCountersIsNotCountedAsPerfSaysIt) {
  const std::string group = "'{cycles,instructions,r11,r8,r11,r8,r11,r8}'";
  const std::string command = std::string(kLoop) + " 1000";
  const GuestCommandResult vperf = SharedArm64Guest::run("vperf stat -e " + group + " " + command + " 2>&1 >/dev/null");
  const GuestCommandResult perf = SharedArm64Guest::run(std::string(kPerf) + " stat -e " + group + " " + command + " 2>&1 >/dev/null");
  EXPECT_EQ(vperf.exit_code, perf.exit_code) << vperf.out;
  std::vector<std::string> v_values, p_values;
  for (const TextRow& row : parse_text_rows(vperf.out)) v_values.push_back(row.value + " " + row.event);
  for (const TextRow& row : parse_text_rows(perf.out)) p_values.push_back(row.value + " " + row.event);
  EXPECT_EQ(v_values, p_values) << "vperf:\n" << vperf.out << "perf:\n" << perf.out;
  const std::string why = "The events in group usually have to be from the same PMU. Try reorganizing the group.";
  EXPECT_NE(perf.out.find(why), std::string::npos) << perf.out;
  EXPECT_NE(vperf.out.find(why), std::string::npos) << vperf.out;
}

// Sampling on cycles follows the period under -icount: one sample per period of the run's user
// cycles, within 2% (each sampling interrupt cuts a translated block short, which QEMU counts
// whole: 2000 interrupts added 1.0% to 1.6% in the runs measured, in vperf's and perf's files
// alike). perf reads vperf's file and vperf reads perf's, each report line for line the other's.
TEST_F(Arm64Pmu, CycleSamplingTakesOneSamplePerPeriodAndPerfReadsTheFile) {
  constexpr double kPeriod = 100000;
  const std::string command = std::string(kLoop) + " 100000000";
  const double user_cycles = count_of(csv_counts("vperf", "cycles:u", command), "cycles:u");
  GuestCommandResult recorded = SharedArm64Guest::run("cd /tmp && vperf record -q -e cycles:u -c 100000 -o v.data " + command +
                                                      " >/dev/null && " + kPerf + " record -q -e cycles:u -c 100000 -o p.data " +
                                                      command + " >/dev/null");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.out << recorded.err;
  for (const char* file : {"v.data", "p.data"}) {
    // The exact count: perf report --stats (its table rounds above 1000 samples to "2K").
    const GuestCommandResult stats = SharedArm64Guest::run(std::string(kPerf) + " report -i /tmp/" + file + " --stats 2>&1");
    std::smatch n;
    const std::regex count(R"(SAMPLE events:\s+(\d+))");
    ASSERT_TRUE(std::regex_search(stats.out, n, count)) << stats.out;
    EXPECT_TRUE(within(std::stod(n[1]), user_cycles / kPeriod, 0.02)) << file << ": " << n[1] << " samples";
  }
  for (const char* file : {"v.data", "p.data"}) {
    const std::string report = " report -i /tmp/" + std::string(file) + " --stdio --sort comm,dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$'";
    const GuestCommandResult by_vperf = SharedArm64Guest::run("vperf" + report);
    const GuestCommandResult by_perf = SharedArm64Guest::run(std::string(kPerf) + report);
    EXPECT_FALSE(by_perf.out.empty()) << file;
    EXPECT_EQ(by_vperf.out, by_perf.out) << file;
  }
}

// Call graphs of cycle samples (-g: the kernel walks the frame pointers; the workload keeps
// them). perf records the link register with each sample and, reading, puts a leaf function's
// caller (which the walk skips: a leaf saves no frame record) into the chain when the leaf's CFI
// says the return address is still in that register (get_leaf_frame_caller_aarch64). perf's
// report of either tool's file and vperf's, callers and callees, line for line.
TEST_F(Arm64Pmu, CycleCallGraphsReportAsPerfReportsThem) {
  const std::string command = std::string(kLoop) + " 20000000";
  GuestCommandResult recorded = SharedArm64Guest::run("cd /tmp && vperf record -q -g -e cycles:u -c 20000 -o vg.data " + command +
                                                      " >/dev/null && " + kPerf + " record -q -g -e cycles:u -c 20000 -o pg.data " +
                                                      command + " >/dev/null");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.out << recorded.err;
  for (const char* file : {"vg.data", "pg.data"})
    for (const char* mode : {"--children", "--no-children"}) {
      const std::string report =
          " report -i /tmp/" + std::string(file) + " --stdio " + mode + " 2>/dev/null | grep -v '^#' | grep -v '^$'";
      const GuestCommandResult by_vperf = SharedArm64Guest::run("vperf" + report);
      const GuestCommandResult by_perf = SharedArm64Guest::run(std::string(kPerf) + report);
      EXPECT_NE(by_perf.out.find("---"), std::string::npos) << file << " " << mode << ": no call graph in perf's report:\n" << by_perf.out;
      EXPECT_EQ(by_vperf.out, by_perf.out) << file << " " << mode;
    }
  // The leaf's caller is there: perf's header shows the link register recorded in vperf's file.
  const GuestCommandResult header = SharedArm64Guest::run(std::string(kPerf) + " report -i /tmp/vg.data --header-only 2>&1");
  EXPECT_NE(header.out.find("REGS_USER"), std::string::npos) << header.out;
}

// -F: the kernel adjusts the period to reach a rate of samples per second (of the guest's
// virtual time under -icount: a nanosecond per instruction, so loop 100M lasts 0.2 s). Both
// tools record in frequency mode (the header's sample_freq) and get the same number of samples
// within the spread of the kernel's period adjustment; each reads the other's file alike.
TEST_F(Arm64Pmu, FrequencySamplingRecordsTheRateAsPerfDoes) {
  const std::string command = std::string(kLoop) + " 100000000";
  GuestCommandResult recorded = SharedArm64Guest::run("cd /tmp && vperf record -q -F 2000 -e cycles:u -o vf.data " + command +
                                                      " >/dev/null && " + kPerf + " record -q -F 2000 -e cycles:u -o pf.data " +
                                                      command + " >/dev/null");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.out << recorded.err;
  std::map<std::string, double> samples;
  for (const char* file : {"vf.data", "pf.data"}) {
    const GuestCommandResult header = SharedArm64Guest::run(std::string(kPerf) + " report -i /tmp/" + file + " --header-only 2>&1");
    EXPECT_NE(header.out.find("sample_freq } = 2000"), std::string::npos) << file << ":\n" << header.out;
    EXPECT_NE(header.out.find("freq = 1"), std::string::npos) << file;
    const GuestCommandResult stats = SharedArm64Guest::run(std::string(kPerf) + " report -i /tmp/" + file + " --stats 2>&1");
    std::smatch n;
    ASSERT_TRUE(std::regex_search(stats.out, n, std::regex(R"(SAMPLE events:\s+(\d+))"))) << stats.out;
    samples[file] = std::stod(n[1]);
    const std::string report = " report -i /tmp/" + std::string(file) + " --stdio --sort comm,dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$'";
    EXPECT_EQ(SharedArm64Guest::run("vperf" + report).out, SharedArm64Guest::run(std::string(kPerf) + report).out) << file;
  }
  // 0.2 s at 2000 Hz: about 400 samples; the first periods ramp up from 1 as the kernel adjusts.
  EXPECT_GT(samples["pf.data"], 200) << "perf";
  EXPECT_TRUE(within(samples["vf.data"], samples["pf.data"], 0.15)) << samples["vf.data"] << " vs " << samples["pf.data"];
}

// :u and :k select where counting happens: a user loop of 20 M iterations (40 M user cycles)
// sampled on cycles:u every 100003 cycles has the loop's 399 samples and the start-up's, all in
// user space; on cycles:k the loop is not counted, so the same run has a small fraction of that,
// mostly in the kernel (its exec, page faults and exit) and some at user addresses where QEMU took
// the overflow interrupt after the return to user space. That skid share depends on where
// translated blocks end and went from 6% to 21% with the host's load, so the check is that the
// kernel holds the majority, not a figure. The period: under icount shift 0 a cycle is a
// nanosecond, so 10007 asked for 100k samples a second, the kernel's default
// perf_event_max_sample_rate, and the guest kernel throttled under CI's load (3070 samples
// where the loop alone has 3997). Each tool's report of either file is perf's, and the kernel's
// samples are named [kernel.kallsyms] in both (vperf's file once lacked arm64's kernel map: no
// _text there, perf takes _stext).
TEST_F(Arm64Pmu, UserAndKernelModifiersSampleWhereTheyCount) {
  constexpr double kLoopCycles = 40'000'000, kPeriod = 100003;
  const std::string command = std::string(kLoop) + " 20000000";
  for (const std::string mode : {"u", "k"}) {
    for (const std::string tool : {"vperf", kPerf}) {
      SCOPED_TRACE(tool + " cycles:" + mode);
      const std::string file = "/tmp/m" + mode + (tool == "vperf" ? "v" : "p") + ".data";
      GuestCommandResult recorded = SharedArm64Guest::run(tool + " record -q -e cycles:" + mode + " -c " +
                                                          std::to_string(static_cast<int>(kPeriod)) + " -o " + file + " " +
                                                          command + " >/dev/null");
      ASSERT_EQ(recorded.exit_code, 0) << recorded.out << recorded.err;
      const std::string report = " report -i " + file + " --stdio -n --sort dso 2>/dev/null | grep -v '^#' | grep -v '^$'";
      const GuestCommandResult by_perf = SharedArm64Guest::run(std::string(kPerf) + report);
      EXPECT_EQ(SharedArm64Guest::run("vperf" + report).out, by_perf.out);
      double samples = 0, kernel_samples = 0;
      const std::regex row(R"(([0-9.]+)%\s+(\d+)\s+(\S+))");
      for (auto it = std::sregex_iterator(by_perf.out.begin(), by_perf.out.end(), row); it != std::sregex_iterator(); ++it) {
        samples += std::stod((*it)[2]);
        if ((*it)[3] == "[kernel.kallsyms]") kernel_samples += std::stod((*it)[2]);
      }
      if (mode == "u") {
        EXPECT_EQ(kernel_samples, 0) << by_perf.out;
        // The loop's periods, and the start-up's (the dynamic loader, about 1.4 M cycles here).
        EXPECT_GE(samples, std::floor(kLoopCycles / kPeriod)) << by_perf.out;
        EXPECT_LT(samples, 1.1 * kLoopCycles / kPeriod) << by_perf.out;
      } else {
        EXPECT_GT(kernel_samples, samples / 2) << by_perf.out;
        EXPECT_LT(samples, kLoopCycles / kPeriod / 4) << "the user loop was counted:\n" << by_perf.out;
      }
    }
  }
}

// A report's entries (an entry's line and its call graph's lines) with those of equal
// overhead columns in one order (their text's): the order of ties is issue 34's open item
// (perf's order among equal entries, which vperf does not follow in every case), not what the
// DWARF comparison checks. `reordered` counts the runs of ties whose order this changed.
// The entries of the dynamic loader's unnamed addresses (the guest's ld.so has no symbols;
// they are its start-up, before the program runs) are left out, into `loader`: vperf's unwinder
// sometimes continues one or two frames past where perf's libunwind stops there (issue 31's
// open item), which is not the program's DWARF call graph this test is about.
std::string ties_in_one_order(const std::string& report, int& reordered, std::string& loader) {
  const std::regex entry_line(R"(^\s+([0-9.]+%)\s+([0-9.]+%)\s)");
  std::vector<std::pair<std::string, std::string>> entries;  // {overhead columns, text}
  std::istringstream in(report);
  bool in_loader = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    const bool entry = std::regex_search(line, m, entry_line);
    if (entry) in_loader = line.find("ld-linux-aarch64.so.1  [.] 0x") != std::string::npos;
    if (in_loader) {
      loader += line + "\n";
      continue;
    }
    if (entry || entries.empty()) entries.emplace_back(m.size() > 2 ? m[1].str() + " " + m[2].str() : "", "");
    entries.back().second += line + "\n";
  }
  std::string out;
  for (size_t i = 0; i < entries.size();) {
    size_t j = i + 1;
    while (j < entries.size() && !entries[i].first.empty() && entries[j].first == entries[i].first) ++j;
    std::vector<std::string> run;
    for (size_t k = i; k < j; ++k) run.push_back(entries[k].second);
    if (!std::is_sorted(run.begin(), run.end())) {
      ++reordered;
      std::sort(run.begin(), run.end());
    }
    for (const std::string& text : run) out += text;
    i = j;
  }
  return out;
}

// DWARF call graphs (--call-graph dwarf: 8 KB of user stack and all 33 registers per sample) of
// a program built without frame pointers, unwound from its CFI by each tool when reading: perf's
// report of either tool's file and vperf's, line for line, callers and callees. --no-inline:
// perf finds inline frames with binutils' addr2line, which the guest does not have.
TEST_F(Arm64Pmu, DwarfCallGraphsReportAsPerfReportsThem) {
  const std::string command = "/lib/vperf-test/vperf-workload-dwarf spin-deep 50";
  GuestCommandResult recorded = SharedArm64Guest::run(
      "cd /tmp && vperf record -q --call-graph dwarf -e cycles:u -c 200003 -o vd.data " + command + " >/dev/null && " +
      kPerf + " record -q --call-graph dwarf -e cycles:u -c 200003 -o pd.data " + command + " >/dev/null");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.out << recorded.err;
  for (const char* file : {"vd.data", "pd.data"})
    for (const char* mode : {"--children", "--no-children"}) {
      const std::string report = " report -i /tmp/" + std::string(file) + " --stdio --no-inline " + mode +
                                 " 2>/dev/null | grep -v '^#' | grep -v '^$'";
      const GuestCommandResult by_vperf = SharedArm64Guest::run("vperf" + report);
      const GuestCommandResult by_perf = SharedArm64Guest::run(std::string(kPerf) + report);
      // The unwind reaches main through 20 frames of recursion, from the leaf's registers alone.
      EXPECT_NE(by_perf.out.find("vperf::workloads::run_spin_deep"), std::string::npos)
          << file << " " << mode << ": perf unwound no deep chain:\n" << by_perf.out;
      int mine_reordered = 0, theirs_reordered = 0;
      std::string mine_loader, theirs_loader;
      EXPECT_EQ(ties_in_one_order(by_vperf.out, mine_reordered, mine_loader), ties_in_one_order(by_perf.out, theirs_reordered, theirs_loader))
          << file << " " << mode;
      if (mine_loader != theirs_loader)
        std::cout << "note: " << file << " " << mode << ": the dynamic loader's start-up entries differ from perf's (not compared):\n"
                  << "vperf:\n" << mine_loader << "perf:\n" << theirs_loader;
      else if (by_vperf.out != by_perf.out)
        std::cout << "note: " << file << " " << mode << ": equal entries in another order than perf's (" << mine_reordered
                  << " runs of ties in vperf's report, " << theirs_reordered << " in perf's, sorted alike for the comparison)\n";
    }
  const GuestCommandResult header = SharedArm64Guest::run(std::string(kPerf) + " report -i /tmp/vd.data --header-only 2>&1");
  EXPECT_NE(header.out.find("sample_regs_user = 0x1ffffffff"), std::string::npos) << header.out;
}

}  // namespace
}  // namespace vperf::test
