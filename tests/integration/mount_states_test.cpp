// vperf in each debugfs/tracefs mount state users' hosts have (tests/mount_states/in_mount_state.sh
// makes them in a private mount namespace): systemd's (debugfs, tracefs at both places),
// tracefs only below debugfs, tracefs only (CI as it comes), and neither. The PMC commands must
// print the same thing in every state (they once crashed where debugfs was mounted); commands that
// need tracefs must find it wherever it is, and say how to mount it where it is not.
#include <gtest/gtest.h>

#include <algorithm>

#include <boost/json.hpp>

#include "support/capability.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

const std::string kInMountState = std::string(VPERF_SOURCE_DIR) + "/tests/mount_states/in_mount_state.sh";
const std::vector<std::string> kStates = {"tracefs-only", "systemd", "debugfs-only", "none"};
constexpr int kSkip = 77;

ProgramResult vperf_in(const std::string& state, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kInMountState, state, VPERF_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

// Skips the test (counted, with the reason) where no private mount namespace can be made.
#define REQUIRE_MOUNT_NAMESPACES()                                                   \
  do {                                                                               \
    ProgramResult probe = run_program({kInMountState, "none", "true"});             \
    if (probe.exit_code == kSkip) GTEST_SKIP() << probe.err;                         \
    ASSERT_EQ(probe.exit_code, 0) << probe.err;                                      \
  } while (0)

TEST(MountStates, PmcCommandsPrintTheSameInEveryState) {
  REQUIRE_MOUNT_NAMESPACES();
  const std::vector<std::vector<std::string>> commands = {
      {"encode", "--model", "skx", "INST_RETIRED.ANY_P"},
      {"encode", "--model", "ivb", "L2_STORE_LOCK_RQSTS:HIT_M"},
      {"encode", "--model", "skx", "--json", "INST_RETIRED.ANY_P", "ivb::L2_STORE_LOCK_RQSTS:HIT_M:u"},
      {"decode", "--model", "ivb", "r13c"},
      {"list", "--pmc", "--model", "skx"},
  };
  for (const std::vector<std::string>& args : commands) {
    std::string reference;
    for (const std::string& state : kStates) {
      ProgramResult r = vperf_in(state, args);
      SCOPED_TRACE(state + ": vperf " + args[0] + " " + args.back());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ASSERT_FALSE(r.out.empty());
      if (reference.empty())
        reference = r.out;
      else
        EXPECT_EQ(r.out, reference) << "differs from the tracefs-only state";
    }
  }
}

// Where tracefs is (wherever it is mounted) is what vperf check reports and what list, stat,
// record and script use; with no tracefs, a tracepoint is one error line with the mount
// command, and list says in one line why it lists none.
TEST(MountStates, TracepointsWorkWhereverTracefsIsMounted) {
  REQUIRE_MOUNT_NAMESPACES();
  VPERF_REQUIRE(has_tracefs(), "tracefs (a mount state needs it for tracepoints)");
  const std::map<std::string, std::string> expected_root = {{"tracefs-only", "/sys/kernel/tracing"},
                                                            {"systemd", "/sys/kernel/tracing"},
                                                            {"debugfs-only", "/sys/kernel/debug/tracing"},
                                                            {"none", ""}};
  const std::string event = "syscalls:sys_enter_getppid";
  for (const std::string& state : kStates) {
    SCOPED_TRACE(state);
    ProgramResult check = vperf_in(state, {"check", "--json"});
    ASSERT_EQ(check.exit_code, 0) << check.err;
    const boost::json::value report = boost::json::parse(check.out);
    const boost::json::value& mount = report.at("live").at("kernel").at("tracefs").at("mount_point");
    EXPECT_EQ(mount.is_null() ? "" : std::string(mount.as_string()), expected_root.at(state));

    // list: the tracepoints wherever tracefs is; where it is not, one line saying why and how
    // to mount it (perf mounts it itself), the rest of the list as always.
    ProgramResult list = vperf_in(state, {"list", "tracepoint"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    if (expected_root.at(state).empty()) {
      EXPECT_EQ(list.err.find("vperf: note: no tracepoints listed: "), 0u) << list.err;
      EXPECT_NE(list.err.find("mount -t tracefs"), std::string::npos) << list.err;
      EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
    } else {
      EXPECT_NE(list.out.find(event), std::string::npos) << list.out.substr(0, 400);
      EXPECT_EQ(list.err, "");
    }

    ProgramResult stat = vperf_in(state, {"stat", "-x,", "-e", event, "--", VPERF_WORKLOAD, "getppid", "777"});
    std::string file = std::string(::testing::TempDir()) + "/mount-state-" + state + ".data";
    ProgramResult record = vperf_in(state, {"record", "-q", "-e", event, "-c", "1", "-o", file, "--",
                                            VPERF_WORKLOAD, "getppid", "333"});
    if (expected_root.at(state).empty()) {
      EXPECT_NE(stat.exit_code, 0);
      EXPECT_NE(stat.err.find("vperf: error: "), std::string::npos) << stat.err;
      EXPECT_NE(stat.err.find("mount -t tracefs"), std::string::npos) << "says how to mount it: " << stat.err;
      EXPECT_NE(record.exit_code, 0);
      continue;
    }
    ASSERT_EQ(stat.exit_code, 0) << stat.err;
    EXPECT_NE(stat.err.find("777,," + event), std::string::npos) << stat.err;
    ASSERT_EQ(record.exit_code, 0) << record.err;
    // script decodes the fields with the formats record saved from this state's tracefs.
    ProgramResult script = vperf_in(state, {"script", "-i", file});
    ASSERT_EQ(script.exit_code, 0) << script.err;
    size_t lines = 0;
    for (size_t at = script.out.find(event); at != std::string::npos; at = script.out.find(event, at + 1)) ++lines;
    EXPECT_EQ(lines, 333u) << script.out.substr(0, 400);
    std::remove(file.c_str());
  }
}

}  // namespace
}  // namespace vperf::test
