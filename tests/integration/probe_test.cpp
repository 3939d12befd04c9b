// vperf probe on the real kernel's uprobes, with perf probe 6.1 as the oracle for the
// uprobe_events lines and exact counts from vperf-workload for what the probes see.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

#include "core/strings.h"
#include "probes/probe_plan.h"
#include "tracing/dynamic_events.h"
#include "tracing/tracefs.h"
#include "support/background.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/local_network.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

constexpr const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";

std::string uprobe_events() {
  std::ifstream in("/sys/kernel/tracing/uprobe_events");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// How many times `needle` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// Every test leaves uprobe_events as it found it, byte for byte.
class Probe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_uprobes()) GTEST_SKIP() << "needs uprobes (tracefs with uprobe_events)";
    before_ = uprobe_events();
  }
  void TearDown() override {
    if (!has_uprobes()) return;
    EXPECT_EQ(uprobe_events(), before_) << "uprobe_events changed";
    // A test that stopped half way leaves its probes: they must not fail the next one too.
    if (uprobe_events().find("vperftest/") != std::string::npos) run_vperf({"probe", "-q", "-d", "vperftest:*"});
  }
  std::string before_;
};

// vperf probe -x FILE OPTION VALUE prints what perf probe prints for it (-V, -L).
void expect_perf_output(const std::string& file, const std::string& option, const std::string& value,
                        const std::vector<std::string>& flags = {}) {
  std::vector<std::string> perf_argv = {"perf", "probe", "-x", file, option, value}, argv = {"probe", "-x", file, option, value};
  perf_argv.insert(perf_argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), flags.begin(), flags.end());
  ProgramResult perf = run_program(perf_argv);
  ASSERT_EQ(perf.exit_code, 0) << option << " " << value << ": " << perf.err;
  ProgramResult mine = run_vperf(argv);
  ASSERT_EQ(mine.exit_code, 0) << option << " " << value << ": " << mine.err;
  EXPECT_EQ(mine.out, perf.out) << file << " " << option << " " << value << " " << testing::PrintToString(flags);
}

// What perf probe writes for a definition: its "Writing event: LINE"s under -n -v, one line
// each (without -x for a USDT marker, which perf finds in its build-id cache under `env`'s HOME).
std::string perf_definition(const std::string& file, const std::string& definition,
                            const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv = {"perf", "probe", "-n", "-v", definition};
  if (!file.empty()) argv.insert(argv.begin() + 2, {"-x", file});
  ProgramResult r = run_program(argv, env);
  const std::string marker = "Writing event: ";
  std::vector<std::string> lines;
  std::istringstream in(r.err + r.out);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(marker)) lines.push_back(line.substr(marker.size()));
  if (lines.empty()) return "perf wrote no event: " + r.err;
  std::string out = lines.front();
  for (size_t i = 1; i < lines.size(); ++i) out += "\n" + lines[i];
  return out;
}

TEST_F(Probe, DefinitionsAreTheLinesPerfProbeWrites) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {VPERF_WORKLOAD, "spin_leaf_hash"},
      {VPERF_WORKLOAD, "spin_leaf_hash%return $retval"},
      {VPERF_WORKLOAD, "spin_leaf_hash+4"},
      {VPERF_WORKLOAD, "vperf_spin=spin_leaf_math"},
      {kLibc, "malloc"},
      {kLibc, "malloc size=%di:u64"},
      {kLibc, "malloc%return r=$retval:x64"},
      {kLibc, "malloc +0(%di):string"},
      {kLibc, "free $comm"},
      {kLibc, "mygroup:myevent=syscall %di:s32 %si"},
  };
  for (const auto& [file, definition] : cases) {
    ProgramResult mine = run_vperf({"probe", "-x", file, "-D", definition});
    ASSERT_EQ(mine.exit_code, 0) << definition << ": " << mine.err;
    EXPECT_EQ(mine.out, perf_definition(file, definition) + "\n") << definition;
  }
}

// The USDT markers of Debian's python3.11, as `readelf -n` names them.
std::vector<std::string> python_markers() {
  ProgramResult r = run_program({"readelf", "-n", "/usr/bin/python3.11"});
  std::vector<std::string> names;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (size_t at = line.find("Name: "); at != std::string::npos) names.push_back(line.substr(at + 6));
  return names;
}

// perf 6.1 probes a USDT marker only after `perf buildid-cache --add FILE` (done here under a
// private HOME); vperf reads the notes of the -x file itself. The lines must be the same:
// offsets, the semaphore as the reference counter, and perf's argument conversion.
TEST_F(Probe, UsdtDefinitionsAreTheLinesPerfProbeWrites) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  VPERF_REQUIRE(std::filesystem::exists("/usr/bin/python3.11"), "Debian's python3.11 (USDT markers)");
  TempTree home;
  const std::map<std::string, std::string> env = {{"HOME", home.root().string()}};
  ASSERT_EQ(run_program({"perf", "buildid-cache", "--add", "/usr/bin/python3.11"}, env).exit_code, 0);
  const std::vector<std::string> markers = python_markers();
  ASSERT_GE(markers.size(), 8u);  // audit, function__entry/return, gc__start/done, import__find__load__start/done, line
  for (const std::string& name : markers) {
    ProgramResult mine = run_vperf({"probe", "-x", "/usr/bin/python3.11", "-D", "sdt_python:" + name});
    ASSERT_EQ(mine.exit_code, 0) << name << ": " << mine.err;
    EXPECT_EQ(mine.out, perf_definition("", "sdt_python:" + name, env) + "\n") << name;
  }
}

// A marker guarded by a semaphore fires without anyone writing it: the uprobe's reference
// counter makes the kernel raise it. gc__start fires once per collection; with automatic
// collection off, 300 gc.collect() calls give exactly 200 more hits than 100 (whatever the
// interpreter's start-up does is the same in both). (function__entry would not do: Python
// 3.11 runs Python-to-Python calls inline, past the marker.)
TEST_F(Probe, UsdtProbesFireThroughTheirSemaphore) {
  VPERF_REQUIRE(std::filesystem::exists("/usr/bin/python3.11"), "Debian's python3.11 (USDT markers)");
  ProgramResult added = run_vperf({"probe", "-q", "-x", "/usr/bin/python3.11", "sdt_python:gc__start"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  auto hits = [](int collections) -> long {
    const std::string script = "import gc\ngc.disable()\nfor i in range(" + std::to_string(collections) + "):\n    gc.collect()\n";
    ProgramResult r = run_vperf({"stat", "-x", ",", "-e", "sdt_python:gc__start", "--", "/usr/bin/python3.11", "-S", "-c", script});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::stol(r.err.substr(0, r.err.find(',')));
  };
  const long few = hits(100), many = hits(300);
  EXPECT_GE(few, 100);
  EXPECT_EQ(many - few, 200);
  EXPECT_EQ(run_vperf({"probe", "-q", "-d", "sdt_python:gc__start"}).exit_code, 0);
}

// libstdc++'s throw and catch markers fire once per exception: vperf-workload throws N throws
// and catches exactly N, so each counts N, added with vperf probe and named inside -e alike.
TEST_F(Probe, LibstdcxxThrowMarkersCountEveryException) {
  const std::string libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
  VPERF_REQUIRE(std::filesystem::exists(libstdcxx), "Debian's libstdc++ (USDT markers)");
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", libstdcxx, "-a", "sdt_libstdcxx:throw", "-a", "sdt_libstdcxx:catch"}).exit_code, 0);
  ProgramResult counted = run_vperf({"stat", "-x", ",", "-e", "sdt_libstdcxx:throw", "-e", "sdt_libstdcxx:catch", "--", VPERF_WORKLOAD, "throws", "250"});
  EXPECT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_NE(counted.err.find("250,,sdt_libstdcxx:throw,"), std::string::npos) << counted.err;
  EXPECT_NE(counted.err.find("250,,sdt_libstdcxx:catch,"), std::string::npos) << counted.err;
  EXPECT_EQ(run_vperf({"probe", "-q", "-d", "sdt_libstdcxx:*"}).exit_code, 0);
  ProgramResult inline_counted = run_vperf({"stat", "-x", ",", "-e", "usdt:" + libstdcxx + ":libstdcxx:throw", "--", VPERF_WORKLOAD, "throws", "77"});
  EXPECT_EQ(inline_counted.exit_code, 0) << inline_counted.err;
  EXPECT_NE(inline_counted.err.find("77,,vperf_"), std::string::npos) << inline_counted.err;
}

// libc's syscall() is called exactly once per getppid of `vperf-workload getppid N`: the probe
// counts N, and each hit's argument is getppid's number (110 on x86_64).
TEST_F(Probe, AddedProbesCountExactlyShowTheirArgumentsAndAreDeleted) {
  ProgramResult added = run_vperf({"probe", "-x", kLibc, "vperftest:syscall_nr=syscall nr=%di:s64"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.out.find("vperftest:syscall_nr (on syscall in /usr/lib/x86_64-linux-gnu/libc.so.6 with nr=%di:s64)"),
            std::string::npos)
      << added.out;
  ProgramResult listed = run_vperf({"probe", "-l", "vperftest:*"});
  EXPECT_NE(listed.out.find("vperftest:syscall_nr (on syscall"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find(" in /usr/lib/x86_64-linux-gnu/libc.so.6 with nr)"), std::string::npos) << listed.out;

  ProgramResult counted = run_vperf({"stat", "-x", ",", "-e", "vperftest:syscall_nr", "--", VPERF_WORKLOAD, "getppid", "1000"});
  EXPECT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_NE(counted.err.find("1000,,vperftest:syscall_nr"), std::string::npos) << counted.err;

  const std::string data = ::testing::TempDir() + "/probe-syscall.data";
  ProgramResult recorded = run_vperf({"record", "-q", "-e", "vperftest:syscall_nr", "-o", data, "--", VPERF_WORKLOAD, "getppid", "5"});
  EXPECT_EQ(recorded.exit_code, 0) << recorded.err;
  ProgramResult script = run_vperf({"script", "-i", data});
  size_t hits = 0;
  for (size_t at = script.out.find("vperftest:syscall_nr:"); at != std::string::npos; at = script.out.find("vperftest:syscall_nr:", at + 1)) {
    ++hits;
    const std::string line = script.out.substr(at, script.out.find('\n', at) - at);
    EXPECT_NE(line.find("nr=110"), std::string::npos) << line;
  }
  EXPECT_EQ(hits, 5u) << script.out;
  std::remove(data.c_str());

  ProgramResult deleted = run_vperf({"probe", "-d", "vperftest:*"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "Removed event: vperftest:syscall_nr\n");
}

TEST_F(Probe, ATakenNameIsRefusedUnlessForcedThenNumbered) {
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", VPERF_WORKLOAD, "vperftest:leaf=spin_leaf_hash"}).exit_code, 0);
  ProgramResult again = run_vperf({"probe", "-x", VPERF_WORKLOAD, "vperftest:leaf=spin_leaf_hash"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("event vperftest:leaf already exists"), std::string::npos) << again.err;
  ProgramResult forced = run_vperf({"probe", "-f", "-x", VPERF_WORKLOAD, "vperftest:leaf=spin_leaf_hash"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("vperftest:leaf_1 "), std::string::npos) << forced.out;
  ProgramResult deleted = run_vperf({"probe", "-d", "vperftest:leaf*"});
  EXPECT_EQ(deleted.out, "Removed event: vperftest:leaf\nRemoved event: vperftest:leaf_1\n");
}

// The -O0 (vperf-workload) and -O2 (vperf-workload-dwarf) builds of probe_target: variables
// in the frame through the CFA after the prologue, and in registers through location lists.
const std::vector<std::string> kDwarfDefinitions = {
    "probe_target index scale label:string record->weight record->flags.flag record->label:string record->values[2] record->flags",
    "probe_target record->flags.small record->label record->values",
    "probe_target $params",
    "probe_target $vars",
    "probe_target%return $retval",
    "probe_target+4 index",
    "vperftest:named=probe_target i=index:x32 s=record->flags.small:u8",
    "deep_recurse depth seed",
    "inline_inner",
    "spin_leaf_hash seed",
};

TEST_F(Probe, DwarfDefinitionsAreTheLinesPerfProbeWrites) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  for (const char* file : {VPERF_WORKLOAD, VPERF_WORKLOAD_DWARF}) {
    for (std::string definition : kDwarfDefinitions) {
      // +4 is inside the -O2 build's second instruction (imul at +3): vperf refuses it, perf
      // writes it. There the offset is that instruction's start.
      if (definition == "probe_target+4 index" && std::string(file) == VPERF_WORKLOAD_DWARF) definition = "probe_target+3 index";
      const std::string perf = perf_definition(file, definition);
      ProgramResult mine = run_vperf({"probe", "-x", file, "-D", definition});
      ASSERT_EQ(mine.exit_code, 0) << file << ": " << definition << ": " << mine.err;
      EXPECT_EQ(mine.out, perf + "\n") << file << ": " << definition;
    }
  }
}

// With Debian's libc6-dbg, libc's functions have DWARF in /usr/lib/debug/.build-id. An alias
// (malloc is __libc_malloc in DWARF, free __libc_free) is found through the function at its
// address: perf 6.1 does that for -V but fails to add such a probe with arguments, so the
// alias's line is checked against perf's line for the DWARF name.
TEST_F(Probe, SeparateDebuginfoDefinitionsAreTheLinesPerfProbeWrites) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  VPERF_REQUIRE(run_program({"perf", "probe", "-x", kLibc, "-V", "getenv"}).exit_code == 0, "libc6-dbg (libc's separate debuginfo)");
  for (const std::string definition : {"getenv name:string", "qsort $params", "__libc_malloc bytes", "__libc_free $params"}) {
    ProgramResult mine = run_vperf({"probe", "-x", kLibc, "-D", definition});
    ASSERT_EQ(mine.exit_code, 0) << definition << ": " << mine.err;
    EXPECT_EQ(mine.out, perf_definition(kLibc, definition) + "\n") << definition;
  }
  for (const auto& [alias, name] : {std::pair<std::string, std::string>{"malloc", "__libc_malloc"}, {"free", "__libc_free"}}) {
    ProgramResult mine = run_vperf({"probe", "-x", kLibc, "-D", alias + " $params"});
    ASSERT_EQ(mine.exit_code, 0) << alias << ": " << mine.err;
    std::string expected = perf_definition(kLibc, name + " $params");
    expected.replace(expected.find("/" + name + " "), name.size() + 2, "/" + alias + " ");
    EXPECT_EQ(mine.out, expected + "\n") << alias;
  }
}

// -V prints what perf probe -V prints, on the workload's builds and on libc's debuginfo.
TEST_F(Probe, VariablesAtAPointAreWhatPerfProbeShows) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  std::vector<std::pair<std::string, std::string>> cases = {
      {VPERF_WORKLOAD, "probe_target"},         {VPERF_WORKLOAD_DWARF, "probe_target"},
      {VPERF_WORKLOAD_DWARF, "probe_target+18"}, {VPERF_WORKLOAD_DWARF, "inline_inner"},
      {VPERF_WORKLOAD_DWARF, "run_spin"},        {VPERF_WORKLOAD, "deep_recurse"},
  };
  if (run_program({"perf", "probe", "-x", kLibc, "-V", "getenv"}).exit_code == 0)
    for (const char* function : {"malloc", "free", "getenv", "fopen", "qsort"}) cases.emplace_back(kLibc, function);
  for (const auto& [file, point] : cases) expect_perf_output(file, "-V", point);
  // --externs adds the unit's globals and statics (probe_calls_made, probe_last_record are
  // namespace members, which perf lists only at the unit's top level, as vperf does); --range
  // tags each line and gives where a variable's location is valid.
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{{"--externs"}, {"--range"}, {"--externs", "--range"}})
    for (const auto& [file, point] : cases)
      if (file != kLibc || flags.size() == 1) expect_perf_output(file, "-V", point, flags);
}

// A global (probe_calls_made) and a file's static (probe_last_record) are fetched where they are,
// by DWARF name and by symbol (@probe_calls_made), as uprobes take it: "@+OFFSET" from where the
// probed segment maps the file. perf 6.1 writes "@NAME" there, which uprobes refuse ("Symbol is
// not available with uprobe"), so the workload's own values are the ground truth: before call i
// the counter is i + 1 and the static holds call i's record.
TEST_F(Probe, GlobalsAndStaticsAreFetchedAtTheirAddresses) {
  constexpr int kCalls = 30;
  for (const char* file : {VPERF_WORKLOAD, VPERF_WORKLOAD_DWARF}) {
    ProgramResult added = run_vperf({"probe", "-q", "-x", file,
                                     "vperftest:fixed=probe_target index probe_calls_made probe_last_record.weight "
                                     "probe_last_record.label:string made=@probe_calls_made:s64"});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    const std::string data = ::testing::TempDir() + "/probe-fixed.data";
    ProgramResult recorded = run_vperf({"record", "-q", "-e", "vperftest:fixed", "-o", data, "--", file, "probe-calls", std::to_string(kCalls)});
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    ProgramResult script = run_vperf({"script", "-i", data});
    std::vector<std::string> hits;
    std::istringstream lines(script.out);
    for (std::string line; std::getline(lines, line);)
      if (line.find("vperftest:fixed:") != std::string::npos) hits.push_back(line.substr(line.find(") ") + 2));
    ASSERT_EQ(hits.size(), static_cast<size_t>(kCalls)) << script.out;
    for (int i = 0; i < kCalls; ++i)
      EXPECT_EQ(hits[i], "index=" + std::to_string(i) + " probe_calls_made=" + std::to_string(i + 1) + " weight=" + std::to_string(7 * i) +
                             " label=\"" + (i % 2 ? "odd" : "even") + "\" made=" + std::to_string(i + 1))
          << file;
    std::remove(data.c_str());
    ASSERT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:*"}).exit_code, 0);
  }
  ProgramResult unknown = run_vperf({"probe", "-x", VPERF_WORKLOAD, "-D", "probe_target @no_such_variable_here"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1) << unknown.err;
  EXPECT_NE(unknown.err.find("no data symbol no_such_variable_here"), std::string::npos) << unknown.err;
}

// --max-probes: a definition giving more probe points than allowed adds none, in one line.
TEST_F(Probe, MoreProbePointsThanMaxProbesAddNothing) {
  ProgramResult all = run_vperf({"probe", "-x", VPERF_WORKLOAD_DWARF, "-D", "probe_calls.cpp;*result*"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const size_t points = occurrences(all.out, "\n");
  ASSERT_GT(points, 1u) << "the lines that mention result: " << all.out;
  ProgramResult allowed = run_vperf({"probe", "-x", VPERF_WORKLOAD_DWARF, "--max-probes", std::to_string(points), "-D", "probe_calls.cpp;*result*"});
  EXPECT_EQ(allowed.out, all.out);
  ProgramResult refused = run_vperf({"probe", "-x", VPERF_WORKLOAD_DWARF, "--max-probes", std::to_string(points - 1), "probe_calls.cpp;*result*"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "vperf: error: 'probe_calls.cpp;*result*' gives " + std::to_string(points) + " probe points, more than --max-probes (" +
                             std::to_string(points - 1) + ") (hint: raise --max-probes, or narrow the point (FUNC@SRC, --no-inlines))\n");
}

// vperf-workload probe-calls N calls probe_target(index, 3 * index, label, &record) for index
// 0..N-1 (workloads.h): every hit shows that call's arguments, members and string, every
// return its computed value, in both builds; a filter on an argument keeps exactly its calls.
TEST_F(Probe, DwarfArgumentsShowEveryCallsValues) {
  constexpr int kCalls = 40;
  for (const char* file : {VPERF_WORKLOAD, VPERF_WORKLOAD_DWARF}) {
    ASSERT_EQ(run_vperf({"probe", "-q", "-x", file,
                         "vperftest:call=probe_target index scale label:string record->weight record->flags.flag "
                         "record->label:string record->values[2]"})
                  .exit_code, 0);
    ASSERT_EQ(run_vperf({"probe", "-q", "-x", file, "vperftest:ret=probe_target%return $retval"}).exit_code, 0);
    ProgramResult counted = run_vperf({"stat", "-x", ",", "-e", "vperftest:call", "-e", "vperftest:ret", "--", file, "probe-calls",
                                       std::to_string(kCalls)});
    EXPECT_NE(counted.err.find(std::to_string(kCalls) + ",,vperftest:call"), std::string::npos) << counted.err;
    EXPECT_NE(counted.err.find(std::to_string(kCalls) + ",,vperftest:ret"), std::string::npos) << counted.err;

    const std::string data = ::testing::TempDir() + "/probe-dwarf.data";
    ProgramResult recorded = run_vperf({"record", "-q", "-e", "vperftest:call", "-e", "vperftest:ret", "-o", data, "--", file,
                                        "probe-calls", std::to_string(kCalls)});
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    ProgramResult script = run_vperf({"script", "-i", data});
    std::vector<std::string> calls, returns;
    std::istringstream lines(script.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("vperftest:call:") != std::string::npos) calls.push_back(line.substr(line.find(") ") + 2));
      if (line.find("vperftest:ret:") != std::string::npos) returns.push_back(line.substr(line.find(") ") + 2));
    }
    ASSERT_EQ(calls.size(), static_cast<size_t>(kCalls)) << script.out;
    ASSERT_EQ(returns.size(), static_cast<size_t>(kCalls)) << script.out;
    for (int i = 0; i < kCalls; ++i) {
      const std::string label = i % 2 ? "odd" : "even";
      const int flag = i % 3;
      EXPECT_EQ(calls[i], "index=" + std::to_string(i) + " scale=" + std::to_string(3 * i) + " label_string=\"" + label +
                              "\" weight=" + std::to_string(7 * i) + " flag=" + std::to_string(flag) + " label=\"" + label +
                              "\" values=" + std::to_string(i))
          << file;
      const long result = 3L * i * i + (flag != 0 ? 7L * i : 0) + label[0] + i;
      std::ostringstream expected;
      expected << "arg1=0x" << std::hex << result;
      EXPECT_EQ(returns[i], expected.str()) << file << " call " << i;
    }
    // The kernel's filter on probe arguments: of the calls with index > 29, those with flag 0
    // (index % 3 == 0) are 30, 33, 36 and 39.
    ProgramResult recorded_filtered = run_vperf({"record", "-q", "-e", "vperftest:call", "--filter", "index > 29 && flag == 0", "-o", data,
                                                 "--", file, "probe-calls", std::to_string(kCalls)});
    ASSERT_EQ(recorded_filtered.exit_code, 0) << recorded_filtered.err;
    ProgramResult kept = run_vperf({"script", "-i", data});
    const size_t hits = occurrences(kept.out, "vperftest:call:");
    EXPECT_EQ(hits, 4u) << kept.out;
    std::remove(data.c_str());
    ASSERT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:*"}).exit_code, 0);
  }
}

// Without debuginfo a variable cannot be placed: the error names the build-id path a debug
// package would install; register arguments still work on the same file.
TEST_F(Probe, AVariableWithoutDebuginfoNamesWhereItWouldBe) {
  TempTree dir;
  const std::filesystem::path stripped = dir.root() / "vperf-workload-stripped";
  ASSERT_EQ(run_program({"objcopy", "--strip-debug", VPERF_WORKLOAD, stripped.string()}).exit_code, 0);
  ProgramResult r = run_vperf({"probe", "-x", stripped.string(), "-D", "probe_target index"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("/usr/lib/debug/.build-id/"), std::string::npos) << r.err;
  ProgramResult raw = run_vperf({"probe", "-x", stripped.string(), "-D", "probe_target index=%di:s32"});
  EXPECT_EQ(raw.exit_code, 0) << raw.err;

  // --symfs DIR: the separate debuginfo under DIR/usr/lib/debug/.build-id, where perf looks too.
  // The optimised build: perf cannot find the frame base of the -O0 one's variables in a
  // separate debuginfo file (no .eh_frame there), where vperf reads the binary's.
  const std::filesystem::path optimised = dir.root() / "vperf-workload-dwarf-stripped";
  ASSERT_EQ(run_program({"objcopy", "--strip-debug", VPERF_WORKLOAD_DWARF, optimised.string()}).exit_code, 0);
  ProgramResult missing = run_vperf({"probe", "-x", optimised.string(), "-D", "probe_target index"});
  const std::string hint = "/usr/lib/debug/.build-id/";
  ASSERT_NE(missing.err.find(hint), std::string::npos) << missing.err;
  const size_t at = missing.err.find(hint);
  const std::filesystem::path debug = dir.root() / ("symfs" + missing.err.substr(at, missing.err.find(".debug", at) + 6 - at));
  std::filesystem::create_directories(debug.parent_path());
  ASSERT_EQ(run_program({"objcopy", "--only-keep-debug", VPERF_WORKLOAD_DWARF, debug.string()}).exit_code, 0);
  const std::string symfs = (dir.root() / "symfs").string();
  const std::string stripped_path = optimised.string();
  ProgramResult found = run_vperf({"probe", "-x", stripped_path, "--symfs", symfs, "-D", "probe_target index label:string"});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  if (!find_program("perf").empty()) {
    ProgramResult perf = run_program({"perf", "probe", "-x", stripped_path, "--symfs", symfs, "-n", "-v", "probe_target index label:string"});
    EXPECT_NE((perf.err + perf.out).find("Writing event: " + found.out), std::string::npos) << found.out << perf.err;
  }
}

// Without -x, -F lists the running kernel's functions (kallsyms' text symbols outside modules,
// one line per symbol) as perf probe -F does, with its default filter and with one given.
TEST_F(Probe, KernelFunctionsAreListedAsPerfListsThem) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  for (const std::vector<std::string>& filter : std::vector<std::vector<std::string>>{{}, {"vfs_*|*_getppid"}}) {
    std::vector<std::string> perf_argv = {"perf", "probe", "-F"}, argv = {"probe", "-F"};
    perf_argv.insert(perf_argv.end(), filter.begin(), filter.end());
    argv.insert(argv.end(), filter.begin(), filter.end());
    ProgramResult perf = run_program(perf_argv), mine = run_vperf(argv);
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    EXPECT_GT(occurrences(mine.out, "\n"), filter.empty() ? 10000u : 10u);
    EXPECT_TRUE(mine.out == perf.out) << testing::PrintToString(filter) << ": " << mine.out.size() << " bytes against perf's " << perf.out.size();
  }
}

// A kernel probe that needs the running kernel's DWARF (a source listing, a variable, a line)
// finds its vmlinux where perf looks; where there is none, vperf says so in perf's words at the
// start of the line, as perf does: perf's own probe_vfs_getname.sh skips on them
// ("^Failed to find the path for the kernel"). "FUNC:" with no line is line 0, as perf reads it.
TEST_F(Probe, MissingKernelDebuginfoIsSaidInPerfsWords) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  const std::string prefix = "Failed to find the path for the kernel";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-L", "getname_flags"},
           {"-V", "getname_flags"},
           {"-D", "vfs_getname=getname_flags: pathname=filename:ustring"},
           {"-D", "getname_flags:3"}}) {
    SCOPED_TRACE(testing::PrintToString(args));
    std::vector<std::string> perf_argv = {"perf", "probe"}, argv = {"probe"};
    perf_argv.insert(perf_argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), args.begin(), args.end());
    ProgramResult perf = run_program(perf_argv);
    VPERF_REQUIRE(perf.err.starts_with(prefix), "no vmlinux with DWARF for the running kernel (perf found one: " + perf.err + ")");
    ProgramResult mine = run_vperf(argv);
    EXPECT_NE(mine.exit_code, 0);
    EXPECT_TRUE(mine.err.starts_with(prefix + ": no vmlinux with DWARF for kernel ")) << mine.err;
    EXPECT_EQ(occurrences(mine.err, "\n"), 1u) << mine.err;
    EXPECT_NE(mine.err.find("-k VMLINUX"), std::string::npos) << mine.err;
  }
}

// With DEBUGINFOD_URLS set, debuginfo missing on disk comes from the servers: a local
// debuginfod (elfutils' server) serving the optimised workload gives the stripped copy's
// variables the lines the unstripped file gives; a server that does not answer is named in the
// one error line, beside the build-id path a debug package would install.
TEST_F(Probe, DebuginfoComesFromTheDebuginfodServersConfigured) {
  VPERF_REQUIRE(!find_program("debuginfod").empty(), "elfutils' debuginfod server (Debian's debuginfod)");
  TempTree dir;
  std::filesystem::create_directory(dir.root() / "served");
  const std::filesystem::path served = dir.root() / "served/vperf-workload-dwarf", stripped = dir.root() / "stripped";
  std::filesystem::copy_file(VPERF_WORKLOAD_DWARF, served);
  ASSERT_EQ(run_program({"objcopy", "--strip-debug", served.string(), stripped.string()}).exit_code, 0);
  const std::string definition = "probe_target index label:string record->weight";
  ProgramResult expected = run_vperf({"probe", "-x", served.string(), "-D", definition});
  ASSERT_EQ(expected.exit_code, 0) << expected.err;

  const int port = spare_port();
  ASSERT_GT(port, 0);
  Background server({"debuginfod", "-F", (dir.root() / "served").string(), "-p", std::to_string(port), "-d", (dir.root() / "index.sqlite").string()});
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/metrics").find("found_debuginfo_total{source=\"files\"} 1") != std::string::npos; },
                         std::chrono::seconds(30)))
      << "debuginfod did not index " << served << ": " << http_get(port, "/metrics");
  const std::map<std::string, std::string> env = {{"DEBUGINFOD_URLS", "http://127.0.0.1:" + std::to_string(port)},
                                                  {"DEBUGINFOD_CACHE_PATH", (dir.root() / "cache").string()}};
  ProgramResult fetched = run_vperf({"probe", "-x", stripped.string(), "-D", definition}, env);
  ASSERT_EQ(fetched.exit_code, 0) << fetched.err;
  std::string expected_line = expected.out;
  expected_line.replace(expected_line.find(served.string()), served.string().size(), stripped.string());
  expected_line.replace(expected_line.find("probe_vperf/"), 12, "probe_stripped/");
  EXPECT_EQ(fetched.out, expected_line);

  const std::map<std::string, std::string> nobody = {{"DEBUGINFOD_URLS", "http://127.0.0.1:" + std::to_string(spare_port())},
                                                     {"DEBUGINFOD_CACHE_PATH", (dir.root() / "cache-none").string()}};
  ProgramResult refused = run_vperf({"probe", "-x", stripped.string(), "-D", definition}, nobody);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_NE(refused.err.find("the debuginfod servers (" + nobody.at("DEBUGINFOD_URLS") + ") have no debuginfo"), std::string::npos) << refused.err;
}

// The names of the functions in `file`'s symbol table (`symbols`: the file or its separate
// debuginfo), as readelf lists them and c++filt -p demangles them (perf's form: no parameters).
std::set<std::string> function_names(const std::string& symbols) {
  ProgramResult table = run_program({"readelf", "-sW", symbols});
  const bool has_symtab = table.out.find("'.symtab'") != std::string::npos;
  std::string section, mangled;
  std::istringstream lines(table.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("Symbol table '")) {
      section = line.substr(14, line.find('\'', 14) - 14);
      continue;
    }
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name) || num.back() != ':') continue;
    if ((has_symtab && section != ".symtab") || (type != "FUNC" && type != "IFUNC") || ndx == "UND") continue;
    mangled += name + "\n";
  }
  std::set<std::string> out;
  std::istringstream demangled(run_program({"sh", "-c", "printf '%s' \"$0\" | c++filt -p", mangled}).out);
  for (std::string name; std::getline(demangled, name);) out.insert(name);
  return out;
}

// -F lists what perf probe -F lists, less its data objects and repeats: each function name
// once, aliases included (perf's own list, kept to the names readelf calls functions).
TEST_F(Probe, FunctionListIsPerfProbesFunctions) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  VPERF_REQUIRE(!find_program("c++filt").empty(), "binutils' c++filt");
  std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {VPERF_WORKLOAD, VPERF_WORKLOAD, ""}, {VPERF_WORKLOAD_DWARF, VPERF_WORKLOAD_DWARF, "*"}};
  // libc's symbols come from libc6-dbg's .symtab, as perf reads them.
  ProgramResult note = run_program({"sh", "-c", std::string("readelf -n ") + kLibc + " | sed -n 's/.*Build ID: //p'"});
  const std::string id = std::string(trim(note.out));
  const std::string debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  if (id.size() > 2 && std::filesystem::exists(debug)) cases.emplace_back(kLibc, debug, "");
  for (const auto& [file, symbols, filter] : cases) {
    std::vector<std::string> perf_args = {"perf", "probe", "-x", file, "-F"}, mine_args = {"probe", "-x", file, "-F"};
    if (!filter.empty()) {
      perf_args.insert(perf_args.end(), {"--filter", filter});
      mine_args.insert(mine_args.end(), {"--filter", filter});
    }
    ProgramResult perf = run_program(perf_args);
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    const std::set<std::string> functions = function_names(symbols);
    std::set<std::string> expected;
    std::istringstream names(perf.out);
    for (std::string name; std::getline(names, name);)
      if (functions.count(name) || name.ends_with("@plt")) expected.insert(name);
    ProgramResult mine = run_vperf(mine_args);
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    std::string expected_text;
    for (const std::string& name : expected) expected_text += name + "\n";
    EXPECT_EQ(mine.out, expected_text) << file;
    EXPECT_GT(expected.size(), 10u) << file;
  }
}

// -l names each probe's point as perf probe -l does: from DWARF (FUNC, FUNC:RLN, FUNC%return,
// with @SOURCE), from the symbol table without it (FUNC+OFF), with the argument names. perf
// shortens the source path; vperf prints it whole, so perf's must be its tail. -l -v adds the
// hits uprobe_profile counted while the event was enabled.
TEST_F(Probe, ListNamesPointsAsPerfProbeDoes) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  TempTree dir;
  const std::filesystem::path stripped = dir.root() / "vperf-workload-stripped";
  ASSERT_EQ(run_program({"objcopy", "--strip-debug", VPERF_WORKLOAD, stripped.string()}).exit_code, 0);
  for (const std::vector<std::string>& add : std::vector<std::vector<std::string>>{
           {"-x", VPERF_WORKLOAD, "-a", "vperftest:entry=probe_target", "-a", "vperftest:line=probe_target:2", "-a",
            "vperftest:ret=probe_target%return $retval"},
           {"-x", stripped.string(), "-a", "vperftest:plain=probe_target", "-a", "vperftest:plus4=probe_target+4 %di"},
           {"-x", kLibc, "-a", "vperftest:sys=syscall nr=%di"}}) {
    std::vector<std::string> args = {"probe", "-q"};
    args.insert(args.end(), add.begin(), add.end());
    ASSERT_EQ(run_vperf(args).exit_code, 0);
  }
  auto sorted_lines = [](const std::string& text, const std::string& group) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find(group) != std::string::npos) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  // The probes on the workload's DWARF, against perf's lines: the file as the line table names
  // it, cut to its last 30 bytes from a '/' as perf cuts it ("main/src/workloads/probe_calls.cpp"
  // below a long build path).
  for (const std::string name : {"vperftest:entry ", "vperftest:line ", "vperftest:ret "}) {
    const std::vector<std::string> perf = sorted_lines(run_program({"perf", "probe", "-l"}).out, name);
    const std::vector<std::string> mine = sorted_lines(run_vperf({"probe", "-l"}).out, name);
    ASSERT_EQ(mine.size(), perf.size()) << name;
    for (size_t i = 0; i < mine.size(); ++i) {
      EXPECT_NE(perf[i].find('@'), std::string::npos) << perf[i];
      EXPECT_EQ(mine[i], perf[i]);
    }
  }
  // glibc's malloc, with its DWARF (libc6-dbg): perf names the function by its symbol where
  // the DWARF has one that is no C++ mangling (an asm label: __GI___libc_malloc) and the file as
  // the line table spells it (relative); and it lists the probes sorted by their definitions.
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", kLibc, "-a", "vperftest:malloc=malloc", "-a", "vperftest:malloc_ret=malloc%return"}).exit_code, 0);
  auto malloc_lines = [](const std::string& text) {  // in the listed order
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find("vperftest:malloc") != std::string::npos) lines.push_back(line);
    return lines;
  };
  const std::vector<std::string> perf_malloc = malloc_lines(run_program({"perf", "probe", "-l"}).out);
  const std::vector<std::string> mine_malloc = malloc_lines(run_vperf({"probe", "-l"}).out);
  EXPECT_EQ(mine_malloc, perf_malloc);
  if (!perf_malloc.empty() && perf_malloc.front().find("@./malloc/malloc.c") != std::string::npos)
    EXPECT_EQ(mine_malloc.front(), "  vperftest:malloc     (on __GI___libc_malloc@./malloc/malloc.c in /usr/lib/x86_64-linux-gnu/libc.so.6)");
  else
    std::cout << "note: glibc's DWARF (libc6-dbg) is not installed: malloc's probes compared without it\n";
  // Without DWARF for the point, the symbol and offset. (perf 6.1 reads the unstripped copy its
  // build-id cache may hold, and syscall.S's line table, and says probe_target:2, syscall:2.)
  const std::string listed = run_vperf({"probe", "-l"}).out;
  EXPECT_NE(listed.find("  vperftest:plain      (on probe_target in " + stripped.string() + ")\n"), std::string::npos) << listed;
  EXPECT_NE(listed.find("  vperftest:plus4      (on probe_target+4 in " + stripped.string() + " with arg1)\n"), std::string::npos) << listed;
  EXPECT_NE(listed.find("  vperftest:sys        (on syscall in /usr/lib/x86_64-linux-gnu/libc.so.6 with nr)\n"), std::string::npos) << listed;
  ASSERT_EQ(run_vperf({"stat", "-e", "vperftest:entry", "--", VPERF_WORKLOAD, "probe-calls", "7"}).exit_code, 0);
  ProgramResult verbose = run_vperf({"probe", "-l", "-v"});
  EXPECT_NE(verbose.out.find("  vperftest:entry      (on probe_target@"), std::string::npos) << verbose.out;
  const std::string entry = verbose.out.substr(verbose.out.find("vperftest:entry "));
  EXPECT_NE(entry.substr(0, entry.find('\n')).find("  hits: 7"), std::string::npos) << verbose.out;
  EXPECT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:*"}).exit_code, 0);
}

// A probe's file replaced after vperf probe added it (another inode: the probe stays on the old
// one) or removed is marked stale by -l, which says what to do.
TEST_F(Probe, ListMarksProbesWhoseFileWasReplacedOrRemoved) {
  TempTree dir;
  const std::filesystem::path copy = dir.root() / "vperf-workload-copy";
  std::filesystem::copy_file(VPERF_WORKLOAD, copy);
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", copy.string(), "vperftest:copy=probe_target"}).exit_code, 0);
  EXPECT_EQ(run_vperf({"probe", "-l", "vperftest:*"}).out.find("stale"), std::string::npos);
  const std::filesystem::path rebuilt = dir.root() / "rebuilt";
  std::filesystem::copy_file(VPERF_WORKLOAD, rebuilt);
  std::filesystem::rename(rebuilt, copy);
  EXPECT_NE(run_vperf({"probe", "-l", "vperftest:*"}).out.find("[stale: " + copy.string() + " was replaced"), std::string::npos);
  std::filesystem::remove(copy);
  EXPECT_NE(run_vperf({"probe", "-l", "vperftest:*"}).out.find("[stale: " + copy.string() + " is gone]"), std::string::npos);
  EXPECT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:*"}).exit_code, 0);
}

// --list-sdt reads the notes of the file itself and prints what perf list sdt prints once
// `perf buildid-cache --add FILE` has put the file in perf's cache (a private HOME here).
TEST_F(Probe, SdtListIsPerfListSdt) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  for (const char* file : {"/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    if (!std::filesystem::exists(file)) continue;
    TempTree home;
    const std::map<std::string, std::string> env = {{"HOME", home.root().string()}};
    ASSERT_EQ(run_program({"perf", "buildid-cache", "--add", file}, env).exit_code, 0);
    ProgramResult perf = run_program({"perf", "list", "sdt"}, env);
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    ProgramResult mine = run_vperf({"probe", "-x", file, "--list-sdt"});
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    EXPECT_EQ(mine.out, perf.out) << file;
    EXPECT_GE(std::count(mine.out.begin(), mine.out.end(), '\n'), 3) << file;  // libstdc++: catch, rethrow, throw
  }
}

// Source lines and lazy patterns: every statement address of the line, named as perf names
// them, with variables fetched there; and -L's listing, line numbers where a probe can go.
// Both workload builds (vperf-workload's probe_calls.cpp is unoptimised, -dwarf's -O2) and
// the inlined functions of inline.cpp.
TEST_F(Probe, SourceLineDefinitionsAndListingsArePerfProbes) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  const std::vector<std::string> definitions = {
      "probe_calls.cpp:37",          "probe_target;return*",       "probe_target;if*",      "run_probe_calls;*probe_target*",
      "probe_calls.cpp;*result*",    "inline.cpp:20",              "inline.cpp:19 h",       "inline_inner;h*",
      "inline_middle;*inline_inner*", "probe_calls.cpp:37 record->values[2]",
  };
  for (const char* file : {VPERF_WORKLOAD, VPERF_WORKLOAD_DWARF}) {
    for (const std::string& definition : definitions) {
      const std::string perf = perf_definition(file, definition);
      ASSERT_FALSE(perf.starts_with("perf wrote no event")) << file << ": " << definition << ": " << perf;
      ProgramResult mine = run_vperf({"probe", "-x", file, "-D", definition});
      ASSERT_EQ(mine.exit_code, 0) << file << ": " << definition << ": " << mine.err;
      EXPECT_EQ(mine.out, perf + "\n") << file << ": " << definition;
    }
    for (const std::string range : {"probe_target", "probe_target:1-2", "probe_target:1+2", "run_probe_calls", "probe_calls.cpp:30",
                                    "inline_outer", "inline_middle", "inline_inner", "inline.cpp:15", "run_spin", "spin.cpp:1", "main"})
      expect_perf_output(file, "-L", range);
  }
}

// A line probe counts exactly: line 37 of probe_calls.cpp (the return statement) runs once per
// call, at each of its statement addresses (one probe each, under one event), and every hit
// fetches that call's values[2] (= its index).
TEST_F(Probe, ALineProbeCountsEveryCallAndFetchesItsVariables) {
  for (const char* file : {VPERF_WORKLOAD, VPERF_WORKLOAD_DWARF}) {
    ASSERT_EQ(run_vperf({"probe", "-q", "-x", file, "vperftest:line=probe_calls.cpp:37 v=record->values[2]"}).exit_code, 0);
    const std::string data = ::testing::TempDir() + "/probe-line.data";
    ProgramResult recorded = run_vperf({"record", "-q", "-e", "vperftest:line", "-o", data, "--", file, "probe-calls", "30"});
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    ProgramResult script = run_vperf({"script", "-i", data});
    std::vector<std::string> values;
    std::istringstream lines(script.out);
    for (std::string line; std::getline(lines, line);)
      if (size_t at = line.find(" v="); at != std::string::npos) values.push_back(line.substr(at + 3));
    const size_t addresses = occurrences(uprobe_events(), "vperftest/line ");
    ASSERT_GE(addresses, 1u);
    ASSERT_EQ(values.size(), 30 * addresses) << file << "\n" << script.out;
    for (size_t hit = 0; hit < values.size(); ++hit) EXPECT_EQ(values[hit], std::to_string(hit / addresses)) << file << " hit " << hit;
    std::remove(data.c_str());
    ASSERT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:*"}).exit_code, 0);
  }
}

// -e uprobe:PATH:FUNC, uretprobe:PATH:FUNC and usdt:PATH:PROVIDER:NAME in stat and record:
// created for the run in the group vperf_PID, counted exactly, gone afterwards (the fixture
// compares uprobe_events byte for byte).
TEST_F(Probe, InlineProbesCountExactlyAndLeaveNothing) {
  const std::string target = std::string("uprobe:") + VPERF_WORKLOAD + ":probe_target";
  const std::string returns = std::string("uretprobe:") + VPERF_WORKLOAD + ":probe_target";
  ProgramResult counted = run_vperf({"stat", "-x", ",", "-e", target + "," + returns, "--", VPERF_WORKLOAD, "probe-calls", "25"});
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_NE(counted.err.find(":probe_target,"), std::string::npos) << counted.err;
  EXPECT_NE(counted.err.find(":probe_target__return,"), std::string::npos) << counted.err;
  const size_t lines = occurrences(counted.err, "25,,vperf_");
  EXPECT_EQ(lines, 2u) << counted.err;

  const std::string data = ::testing::TempDir() + "/probe-inline.data";
  ProgramResult recorded = run_vperf({"record", "-q", "-e", target, "-o", data, "--", VPERF_WORKLOAD, "probe-calls", "25"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  ProgramResult script = run_vperf({"script", "-i", data});
  const size_t hits = occurrences(script.out, ":probe_target: ");
  EXPECT_EQ(hits, 25u) << script.out;
  std::remove(data.c_str());
  if (std::filesystem::exists("/usr/bin/python3.11")) {
    const std::string script_text = "import gc\ngc.disable()\nfor i in range(100):\n    gc.collect()\n";
    ProgramResult usdt = run_vperf({"stat", "-x", ",", "-e", "usdt:/usr/bin/python3.11:python:gc__start", "--", "/usr/bin/python3.11", "-S",
                                    "-c", script_text});
    ASSERT_EQ(usdt.exit_code, 0) << usdt.err;
    EXPECT_GE(std::stol(usdt.err.substr(0, usdt.err.find(','))), 100) << usdt.err;
  }
}

// An error after the probes are made (an unknown event next to them, a command that cannot
// run) removes them too; a bad inline probe is one line and makes nothing.
TEST_F(Probe, InlineProbesAreRemovedWhenTheCommandFails) {
  const std::string target = std::string("uprobe:") + VPERF_WORKLOAD + ":probe_target";
  const std::vector<std::vector<std::string>> failing = {
      {"stat", "-e", target, "-e", "no_such_event_anywhere", "--", "true"},
      {"stat", "-e", target, "--", "/nonexistent/program"},
      {"record", "-q", "-e", target, "-o", ::testing::TempDir() + "/never.data", "--", "/nonexistent/program"},
      {"stat", "-e", std::string("uprobe:") + VPERF_WORKLOAD + ":no_such_function_here", "--", "true"},
      {"stat", "-e", "uprobe:/nonexistent/file:main", "--", "true"},
      {"stat", "-e", "uprobe:missing_the_function", "--", "true"},
      {"stat", "-e", "kprobe:do_sys_openat2", "--", "true"},
  };
  for (const std::vector<std::string>& args : failing) {
    ProgramResult r = run_vperf(args);
    EXPECT_NE(r.exit_code, 0) << args[2] << " " << args[4];
    EXPECT_EQ(uprobe_events(), before_) << "left behind by: vperf " << args[0] << " " << args[2] << " " << args[4];
  }
  for (size_t i = 3; i < failing.size(); ++i) {
    ProgramResult r = run_vperf(failing[i]);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("(hint: "), std::string::npos) << r.err;
  }
}

// SIGINT and SIGTERM end the run normally, probes removed; a SIGKILLed run leaves its group,
// and the next vperf command that touches uprobes removes it.
TEST_F(Probe, InlineProbesGoOnSignalsAndAfterAKill) {
  for (int signal : {SIGINT, SIGTERM, SIGKILL}) {
    SCOPED_TRACE(strsignal(signal));
    Background vperf({VPERF_BINARY, "stat", "-e", std::string("uprobe:") + VPERF_WORKLOAD + ":probe_target", "--", VPERF_WORKLOAD, "sleep",
                      "600000"});
    ASSERT_GT(vperf.pid(), 0);
    ASSERT_TRUE(wait_until([&] { return counting_and_waiting(vperf.pid()); }, std::chrono::seconds(20))) << "vperf stat never started counting";
    const std::string group = "vperf_" + std::to_string(vperf.pid());
    EXPECT_NE(uprobe_events().find(group + "/probe_target"), std::string::npos) << uprobe_events();
    const std::vector<pid_t> workload = children_named(vperf.pid(), "vperf-workload");
    ::kill(vperf.pid(), signal);
    ProgramResult ended = vperf.wait();
    for (pid_t child : workload) ::kill(child, SIGKILL);  // a SIGKILLed vperf leaves its command running
    if (signal != SIGKILL) {
      EXPECT_EQ(uprobe_events(), before_) << ended.err;
      continue;
    }
    EXPECT_NE(uprobe_events().find(group + "/probe_target"), std::string::npos) << "a killed vperf cannot clean up";
    ASSERT_TRUE(wait_until([&] { return workload.empty() || ::kill(workload.front(), 0) != 0; }, std::chrono::seconds(10)));
    ProgramResult next = run_vperf({"probe", "-l"});
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(next.out.find(group), std::string::npos) << next.out;
  }
}

// A kernel without kprobes (this machine's) refuses every kernel probe in one line that names
// what is missing; the test guest's kernel has kprobes, and probe_kernel_test.cpp runs them there.
TEST_F(Probe, KernelProbesWithoutKprobesAreOneLine) {
  if (std::filesystem::exists("/sys/kernel/tracing/kprobe_events")) GTEST_SKIP() << "this kernel has kprobes (KernelProbe tests run them in the guest)";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"probe", "do_sys_openat2 dfd=%di"}, {"stat", "-e", "kprobe:do_sys_openat2", "--", "true"}, {"stat", "-e", "kretprobe:do_sys_openat2", "--", "true"}}) {
    ProgramResult r = run_vperf(args);
    EXPECT_EQ(r.exit_code, 1) << args[1];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("CONFIG_KPROBE_EVENTS"), std::string::npos) << r.err;
  }
  // Planning needs no tracefs: -D prints the kprobe_events line.
  ProgramResult planned = run_vperf({"probe", "-D", "do_sys_openat2 dfd=%di filename=+0(%si)@user:string"});
  EXPECT_EQ(planned.out, "p:probe/do_sys_openat2 do_sys_openat2+0 dfd=%di filename=+u0(%si):string\n") << planned.err;
}

// --calibrate measures what one uprobe hit costs here and keeps it for the boot; vperf stat
// then warns when a probe's hits cost more than --max-overhead of one CPU: probe_target, called
// 200000 times in a tight loop, costs far more than 1%; run_probe_calls, hit once, never does.
// Without a calibration the warning says it used the typical figure.
TEST_F(Probe, StatWarnsWhenAProbesHitsCostMoreThanTheBudget) {
  TempTree cache, empty_cache;
  const std::map<std::string, std::string> env = {{"XDG_CACHE_HOME", cache.root().string()}};
  ProgramResult calibrated = run_vperf({"probe", "--calibrate"}, env);
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  const size_t at = calibrated.out.find("costs the probed task ");
  ASSERT_NE(at, std::string::npos) << calibrated.out;
  const double ns = std::stod(calibrated.out.substr(at + 22));
  EXPECT_GT(ns, 50) << calibrated.out;  // a trap and a handler: never free
  EXPECT_LT(ns, 100000) << calibrated.out;
  const std::string hot_probe = std::string("uprobe:") + VPERF_WORKLOAD + ":probe_target";
  ProgramResult hot = run_vperf({"stat", "--max-overhead", "1", "-e", hot_probe, "--", VPERF_WORKLOAD, "probe-calls", "200000"}, env);
  EXPECT_EQ(hot.exit_code, 0) << hot.err;
  EXPECT_NE(hot.err.find("vperf: warning: vperf_"), std::string::npos) << hot.err;
  EXPECT_NE(hot.err.find("(measured on this machine)"), std::string::npos) << hot.err;
  ProgramResult cold = run_vperf({"stat", "-e", std::string("uprobe:") + VPERF_WORKLOAD + ":run_probe_calls", "--", VPERF_WORKLOAD,
                                  "probe-calls", "200000"}, env);
  EXPECT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(cold.err.find("warning"), std::string::npos) << cold.err;
  ProgramResult typical = run_vperf({"stat", "--max-overhead", "1", "-e", hot_probe, "--", VPERF_WORKLOAD, "probe-calls", "200000"},
                                    {{"XDG_CACHE_HOME", empty_cache.root().string()}});
  EXPECT_NE(typical.err.find("a typical figure; vperf probe --calibrate measures this machine"), std::string::npos) << typical.err;
}

// Bad input: one error line that says what to do, exit 1 or 2, nothing added.
TEST_F(Probe, BadDefinitionsAreOneLineAndAddNothing) {
  const std::vector<std::vector<std::string>> bad = {
      {"probe", "-x", VPERF_WORKLOAD, "no_such_function_here"},
      {"probe", "-x", "/nonexistent/file", "main"},
      {"probe", "-x", VPERF_WORKLOAD, "spin_leaf_hash:3+4"},
      {"probe", "-x", VPERF_WORKLOAD, "probe_target no_such_variable"},
      {"probe", "-x", VPERF_WORKLOAD, "probe_target index->x"},      // not a pointer
      {"probe", "-x", VPERF_WORKLOAD, "probe_target record.weight"},  // a pointer: needs ->
      {"probe", "-x", VPERF_WORKLOAD, "probe_target record->nothing"},
      {"probe", "-x", VPERF_WORKLOAD, "probe_target index:string"},
      {"probe", "-x", VPERF_WORKLOAD, "probe_target%return index"},   // variables are gone at the return
      {"probe", "-x", VPERF_WORKLOAD_DWARF, "probe_target result"},  // optimised out at the entry
      {"probe", "-x", VPERF_WORKLOAD, "-V", "no_such_function_here"},
      {"probe", "-x", VPERF_WORKLOAD, "spin_leaf_hash+100000"},
      {"probe", "-x", VPERF_WORKLOAD, "2bad=spin_leaf_hash"},
      {"probe", "-d", "vperftest:nothing_by_that_name"},
      {"probe"},
  };
  for (const std::vector<std::string>& args : bad) {
    ProgramResult r = run_vperf(args);
    EXPECT_NE(r.exit_code, 0) << args.back();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args.back() << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("vperf: error: ")) << r.err;
    EXPECT_NE(r.err.find("(hint: "), std::string::npos) << r.err;
  }
}

// Issue 30: a -x path holding newlines made vperf's one uprobe_events write several commands.
// Crafted as "DIR/w:0x1139\n-:vperftest/victim\n#": the kernel read it as a probe on DIR/w (a
// file other than the one named), the removal of someone else's probe, and a comment. Through
// `vperf probe -x` and through stat/record's `-e uprobe:PATH:FUNC`, the command is now refused in
// one line before anything is written: the victim stays, nothing is added.
TEST_F(Probe, APathWithNewlinesNeverBecomesSeveralUprobeCommands) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("vperf-probe-newline-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::filesystem::path crafted_dir = dir / "w:0x1139\n-:vperftest";
  std::filesystem::create_directories(crafted_dir);
  const std::filesystem::path other = dir / "w";
  const std::filesystem::path crafted = crafted_dir / "victim\n#";
  std::filesystem::copy_file(VPERF_WORKLOAD, other);
  std::filesystem::copy_file(VPERF_WORKLOAD, crafted);
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", VPERF_WORKLOAD, "vperftest:victim=spin_leaf_hash"}).exit_code, 0);
  const std::string with_victim = uprobe_events();
  ASSERT_NE(with_victim.find("vperftest/victim "), std::string::npos) << with_victim;

  const std::vector<std::vector<std::string>> attacks = {
      {"probe", "-x", crafted.string(), "probe_target"},
      {"stat", "-e", "uprobe:" + crafted.string() + ":probe_target", "--", "true"},
      {"record", "-q", "-e", "uprobe:" + crafted.string() + ":probe_target", "-o", (dir / "never.data").string(), "--", "true"},
  };
  for (const std::vector<std::string>& args : attacks) {
    ProgramResult r = run_vperf(args);
    EXPECT_NE(r.exit_code, 0) << args[0] << ": " << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("holds a newline"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("(hint: "), std::string::npos) << r.err;
    EXPECT_EQ(uprobe_events(), with_victim) << "vperf " << args[0] << " changed uprobe_events";
  }
  ASSERT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:victim"}).exit_code, 0);
  std::filesystem::remove_all(dir);
}

// Issue 30, item 7: a refused write quoted error_log's last entry whatever wrote it. Removing a
// probe that a running vperf stat has enabled is refused (EBUSY) with no entry of its own; the
// error quoted the unrelated filter refusal planted just before. Now only an entry that write
// added is quoted, and the machine's error_log is not cleared.
TEST_F(Probe, ARefusalQuotesNoOlderErrorLogEntry) {
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", VPERF_WORKLOAD, "vperftest:busy=probe_target"}).exit_code, 0);
  {
    // Someone else's refused write: a filter on a field that does not exist.
    std::ofstream filter("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/filter");
    filter << "vperf_test_unrelated_field == 1" << std::flush;
  }
  // The refused filter leaves its parse error as the file's text: cleared at once (the error_log
  // entry stays), so that no later test saves and restores it (the top-level ftrace test did).
  std::ofstream("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/filter") << "0" << std::flush;
  std::ifstream log_in("/sys/kernel/tracing/error_log");
  std::stringstream log;
  log << log_in.rdbuf();
  ASSERT_NE(log.str().find("vperf_test_unrelated_field"), std::string::npos) << "the kernel logged no entry for the planted refusal";

  Background stat({VPERF_BINARY, "stat", "-e", "vperftest:busy", "--", VPERF_WORKLOAD, "sleep", "600000"});
  ASSERT_GT(stat.pid(), 0);
  ASSERT_TRUE(wait_until([&] { return counting_and_waiting(stat.pid()); }, std::chrono::seconds(20))) << "vperf stat never started counting";
  ProgramResult busy = run_vperf({"probe", "-d", "vperftest:busy"});
  const std::vector<pid_t> workload = children_named(stat.pid(), "vperf-workload");
  ::kill(stat.pid(), SIGINT);
  stat.wait();
  for (pid_t child : workload) ::kill(child, SIGKILL);
  EXPECT_NE(busy.exit_code, 0) << busy.out;
  EXPECT_NE(busy.err.find("Device or resource busy"), std::string::npos) << busy.err;
  EXPECT_EQ(busy.err.find("vperf_test_unrelated_field"), std::string::npos) << busy.err;
  std::ifstream after_in("/sys/kernel/tracing/error_log");
  std::stringstream after;
  after << after_in.rdbuf();
  EXPECT_NE(after.str().find("vperf_test_unrelated_field"), std::string::npos) << "the shared error_log was cleared";
  ASSERT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:busy"}).exit_code, 0);
}

// Where probe_target's instructions start in `file`, as offsets from its entry, and its size:
// objdump's disassembly (an independent decoder) and nm's size.
struct FunctionLayout {
  std::vector<uint64_t> starts;
  uint64_t size = 0;
};
FunctionLayout probe_target_layout(const std::string& file) {
  FunctionLayout layout;
  std::istringstream symbols(run_program({"nm", "-S", file}).out);
  uint64_t entry = 0;
  for (std::string line; std::getline(symbols, line);)
    if (line.ends_with(" T probe_target")) {
      entry = std::stoull(line.substr(0, 16), nullptr, 16);
      layout.size = std::stoull(line.substr(17, 16), nullptr, 16);
    }
  std::istringstream code(run_program({"objdump", "-d", "--disassemble=probe_target", file}).out);
  for (std::string line; std::getline(code, line);) {
    // "    2c49:\t55                   \tpush   %rbp" (a long instruction's bytes go on in a line of their own, without a mnemonic)
    const size_t colon = line.find(":\t");
    if (colon == std::string::npos || line.find('\t', colon + 2) == std::string::npos) continue;
    const uint64_t address = std::stoull(line.substr(0, colon), nullptr, 16);
    if (address >= entry && address < entry + layout.size) layout.starts.push_back(address - entry);
  }
  return layout;
}

// FUNC+OFF goes only where an instruction of FUNC starts: every offset of probe_target is tried
// in its -O0 build (DWARF), its -O2 build, and a copy without DWARF (the symbol table's path),
// against objdump's instruction boundaries. 'probe_target+18446744073709551615' wrapped to the
// byte before the entry, inside the caller's last instruction, and the workload died of SIGSEGV
// once the event was enabled. perf 6.1 refuses past the end too ("Offset -1 is bigger than the
// size of probe_target"), but writes a line for probe_target+2 inside `mov %rsp,%rbp`.
TEST_F(Probe, OffsetsInsideAnInstructionOrPastTheFunctionAreRefused) {
  TempTree dir;
  const std::filesystem::path stripped = dir.root() / "vperf-workload-stripped";
  ASSERT_EQ(run_program({"objcopy", "--strip-debug", VPERF_WORKLOAD, stripped.string()}).exit_code, 0);
  for (const std::string& file : {std::string(VPERF_WORKLOAD), std::string(VPERF_WORKLOAD_DWARF), stripped.string()}) {
    const FunctionLayout layout = probe_target_layout(file);
    ASSERT_GT(layout.size, 16u) << file;
    ASSERT_GT(layout.starts.size(), 4u) << file;
    for (uint64_t offset = 0; offset <= layout.size + 1; ++offset) {
      const std::string point = "probe_target+" + std::to_string(offset);
      ProgramResult r = run_vperf({"probe", "-x", file, "-D", point});
      const auto next = std::lower_bound(layout.starts.begin(), layout.starts.end(), offset);
      if (next != layout.starts.end() && *next == offset) {
        EXPECT_EQ(r.exit_code, 0) << file << " " << point << ": " << r.err;
        continue;
      }
      EXPECT_EQ(r.exit_code, 1) << file << " " << point << ": " << r.out;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      if (offset >= layout.size) {
        EXPECT_NE(r.err.find(point + " is past the end of probe_target, which is " + std::to_string(layout.size) + " bytes long"), std::string::npos) << r.err;
        continue;
      }
      const std::string after = next == layout.starts.end() ? "the function's end, +" + std::to_string(layout.size) : "+" + std::to_string(*next);
      EXPECT_NE(r.err.find(point + " is inside an instruction of probe_target (" + std::to_string(layout.size) +
                           " bytes): the nearest instruction boundaries are +" + std::to_string(*(next - 1)) + " and " + after),
                std::string::npos)
          << r.err;
    }
    for (const std::string offset : {"18446744073709551615", "0xffffffffffffffff"}) {
      ProgramResult r = run_vperf({"probe", "-x", file, "vperftest:wrapped=probe_target+" + offset});
      EXPECT_EQ(r.exit_code, 1) << file << " " << offset;
      EXPECT_NE(r.err.find("is past the end of probe_target, which is " + std::to_string(layout.size) + " bytes long"), std::string::npos) << r.err;
    }
  }
  if (!find_program("perf").empty()) {  // perf agrees that these are out of the function
    for (const std::string& offset : {std::string("18446744073709551615"), std::to_string(probe_target_layout(VPERF_WORKLOAD).size + 1)}) {
      EXPECT_NE(run_program({"perf", "probe", "-x", VPERF_WORKLOAD, "-D", "probe_target+" + offset}).exit_code, 0) << offset;
    }
  }
}

// A probe at an instruction boundary inside the function, in the -O2 build (no prologue to
// skip: the second instruction runs on every call), counts every call and leaves the
// workload's results as they were.
TEST_F(Probe, AProbeInsideAFunctionCountsEveryCall) {
  const FunctionLayout layout = probe_target_layout(VPERF_WORKLOAD_DWARF);
  ASSERT_GT(layout.starts.size(), 2u);
  const std::string point = "vperftest:inside=probe_target+" + std::to_string(layout.starts[1]);
  ASSERT_EQ(run_vperf({"probe", "-q", "-x", VPERF_WORKLOAD_DWARF, point}).exit_code, 0);
  ProgramResult plain = run_program({VPERF_WORKLOAD_DWARF, "probe-calls", "3000"});
  ProgramResult counted = run_vperf({"stat", "-x", ",", "-e", "vperftest:inside", "--", VPERF_WORKLOAD_DWARF, "probe-calls", "3000"});
  EXPECT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_NE(counted.err.find("3000,,vperftest:inside"), std::string::npos) << counted.err;
  EXPECT_EQ(counted.out, plain.out);
  EXPECT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:inside"}).exit_code, 0);
}

// Two probes of one name added at once: the one that plans before the other adds, then adds
// second, gets the kernel's EEXIST. It said the kernel's "File exists" alone; now it says what
// happened and both ways out (another name with EVENT=..., or -d). The race is made here in one
// process: the plan sees no such event, then the winner's line goes in before add_probes.
TEST_F(Probe, ALostRaceForANameSaysHowToPickAnother) {
  probes::ProbeRequest request;
  request.executable = VPERF_WORKLOAD;
  request.definitions = {"vperftest:raced=probe_target"};
  Result<std::vector<probes::PlannedProbe>> planned = probes::plan_probes(request, {});
  ASSERT_TRUE(planned.ok()) << planned.error().describe();
  Result<tracing::Tracefs> tracefs = tracing::Tracefs::open_mounted();
  ASSERT_TRUE(tracefs.ok()) << tracefs.error().describe();
  ASSERT_TRUE(tracing::add_uprobe(*tracefs, planned->front().definition).ok());  // the other vperf's probe
  Result<void> lost = probes::add_probes(*tracefs, *planned, false);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().errno_value, EEXIST);
  EXPECT_NE(lost.error().message.find("event vperftest:raced already exists"), std::string::npos) << lost.error().message;
  EXPECT_NE(lost.error().hint.find("EVENT=probe_target"), std::string::npos) << lost.error().hint;
  EXPECT_NE(lost.error().hint.find("vperf probe -d vperftest:raced"), std::string::npos) << lost.error().hint;
  EXPECT_EQ(occurrences(uprobe_events(), "vperftest/raced "), 1u);  // the winner's, which stays
  EXPECT_EQ(run_vperf({"probe", "-q", "-d", "vperftest:raced"}).exit_code, 0);
}

// A -x that is no ELF file says what it is, in one line, for every mode that reads the file
// (it said "has no debuginfo (hint: rebuild it with -g)" for -V, -L and a truncated file's
// add and -D; -F listed nothing and exited 0 for a truncated one), and a FIFO is never opened.
TEST_F(Probe, ATargetThatIsNoElfFileIsNamedForWhatItIs) {
  TempTree dir;
  const std::filesystem::path fifo = dir.root() / "fifo", empty = dir.root() / "empty", truncated = dir.root() / "truncated";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(empty.string()).close();
  std::filesystem::copy_file(VPERF_WORKLOAD, truncated);
  std::filesystem::resize_file(truncated, 3000);
  const std::vector<std::pair<std::string, std::string>> targets = {
      {dir.root().string(), "is a directory, not a regular file"},
      {fifo.string(), "is a FIFO, not a regular file"},
      {"/dev/zero", "is a character device, not a regular file"},
      {empty.string(), "not an ELF file"},
      {truncated.string(), "is a truncated ELF file: its section headers end at byte"}};
  for (const auto& [target, what] : targets) {
    for (const std::vector<std::string>& mode : std::vector<std::vector<std::string>>{
             {"-V", "probe_target"}, {"-L", "probe_target"}, {"-D", "probe_target"}, {"vperftest:x=probe_target"}, {"-F"}, {"--list-sdt"}}) {
      std::vector<std::string> argv = {"timeout", "20", VPERF_BINARY, "probe", "-x", target};
      argv.insert(argv.end(), mode.begin(), mode.end());
      ProgramResult r = run_program(argv);
      EXPECT_EQ(r.exit_code, 1) << target << " " << mode.front() << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find(what), std::string::npos) << target << " " << mode.front() << ": " << r.err;
      EXPECT_EQ(r.err.find("debuginfo"), std::string::npos) << r.err;
    }
  }
}

// Numbers in probe options: --max-probes' range is readable (CLI::PositiveNumber's bound was
// DBL_MAX, 309 digits) and a number past 2^64 is refused, not wrapped or saturated.
TEST_F(Probe, NumbersOutOfRangeAreRefusedInOneReadableLine) {
  for (const std::string value : {"0", "99999999999999999999", "-1", "65537"}) {
    ProgramResult r = run_vperf({"probe", "-x", VPERF_WORKLOAD, "--max-probes", value, "-D", "probe_target"});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_LT(r.err.size(), 200u) << r.err;
    EXPECT_NE(r.err.find("not in range 1 to 65536"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_vperf({"probe", "-x", VPERF_WORKLOAD, "--max-probes", "65536", "-D", "probe_target"}).exit_code, 0);
  for (const std::string point : {"probe_target+18446744073709551616", "probe_target:99999999999999999999", "probe_target:2147483648"}) {
    ProgramResult r = run_vperf({"probe", "-x", VPERF_WORKLOAD, "-D", point});
    EXPECT_EQ(r.exit_code, 1) << point << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// -L with a range that ends past the function shows the lines there are, up to the end of the
// file, as perf does; one ending at 2^31 - 1 is perf's open range (the function and two lines
// more). Its end overflowed an int: vperf printed the header only and exited 0. One
// that starts past the end of the file is an error, as perf's "Specified source line is not
// found"; a file's line 0 is refused (it read before the first line).
TEST_F(Probe, LineRangesPastTheEndShowWhatThereIsOrFail) {
  VPERF_REQUIRE(!find_program("perf").empty(), "perf 6.1 as the reference");
  expect_perf_output(VPERF_WORKLOAD, "-L", "probe_target:1-1000");        // to the end of the file
  expect_perf_output(VPERF_WORKLOAD, "-L", "probe_target:1-2147483647");  // perf's open range: as "probe_target:1"
  expect_perf_output(VPERF_WORKLOAD, "-L", "probe_target:2+2147483646");
  for (const std::string range : {"probe_target:1000-1001", "probe_target:1000", "probe_calls.cpp:0-2", "probe_calls.cpp:100000"}) {
    EXPECT_NE(run_program({"perf", "probe", "-x", VPERF_WORKLOAD, "-L", range}).exit_code, 0) << range;
    ProgramResult r = run_vperf({"probe", "-x", VPERF_WORKLOAD, "-L", range});
    EXPECT_EQ(r.exit_code, 1) << range << ": " << r.out;
    EXPECT_EQ(r.out, "") << range;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace vperf::test
