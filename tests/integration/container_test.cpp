// Processes in containers (perf's nsinfo): a workload that runs from a file only its own mount
// namespace has (a tmpfs mounted over an empty host directory by `unshare -m`) is recorded
// from the host; vperf record lists that file's real build-id (readelf's), and vperf report
// names its symbols as perf report does, reading the file through /proc/PID/root while the
// process runs. Recorded with -N and a fresh HOME: no build-id cache can supply the file.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>

#include "support/background.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(Containers, AContainersBinaryIsReadThroughItsRootAsPerfReadsIt) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "needs Linux perf (apt-get install linux-perf) as the reference reader");
  VPERF_REQUIRE(!test::find_program("unshare").empty(), "needs unshare (util-linux) to make a mount namespace");
  VPERF_REQUIRE(::geteuid() == 0, "needs root to make a mount namespace and mount a tmpfs in it");
  test::TempTree scratch;
  const fs::path inside = scratch.root() / "container";  // empty on the host
  fs::create_directories(inside);
  const std::string binary = (inside / "w").string();
  test::Background container({"unshare", "-m", "--propagation", "private", "sh", "-c",
                              "mount -t tmpfs vperf-ct " + inside.string() + " && cp " + VPERF_WORKLOAD + " " + binary +
                                  " && exec " + binary + " spin 600000"});
  ASSERT_GT(container.pid(), 0);
  std::error_code ec;
  ASSERT_TRUE(test::wait_until([&] { return fs::read_symlink("/proc/" + std::to_string(container.pid()) + "/exe", ec) == binary; }, 10s))
      << "the workload never ran from the container's tmpfs";
  ASSERT_FALSE(fs::exists(binary)) << "the host must not see the container's file";
  const std::string pid = std::to_string(container.pid());
  const std::string data = (scratch.root() / "ct.data").string();
  const std::map<std::string, std::string> env{{"LC_ALL", "C"}, {"HOME", scratch.root().string()}};

  test::ProgramResult rec = test::run_vperf({"record", "-q", "-N", "-e", "cpu-clock", "-F", "2000", "-g", "-p", pid, "-o", data, "--", "sleep", "1"}, env);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  test::ProgramResult readelf = test::run_program({"readelf", "-n", VPERF_WORKLOAD});
  const size_t at = readelf.out.find("Build ID: ");
  ASSERT_NE(at, std::string::npos) << readelf.out;
  const std::string build_id = readelf.out.substr(at + 10, 40);
  test::ProgramResult listed = test::run_program({"perf", "buildid-list", "-i", data}, env);
  EXPECT_NE(listed.out.find(build_id + " " + binary + "\n"), std::string::npos) << listed.out;

  const std::vector<std::string> args{"report", "--stdio", "-i", data, "--no-children", "--sort", "dso,sym", "-q", "-g", "none"};
  std::vector<std::string> perf_args{"perf"};
  perf_args.insert(perf_args.end(), args.begin(), args.end());
  test::ProgramResult theirs = test::run_program(perf_args, env);
  test::ProgramResult ours = test::run_vperf(args, env);
  ::kill(container.pid(), SIGKILL);
  (void)container.wait();
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  EXPECT_TRUE(std::regex_search(ours.out, std::regex(R"(\sw\s+\[\.\] spin_leaf_hash\n)"))) << ours.out;
  EXPECT_EQ(ours.out, theirs.out);
}

}  // namespace
}  // namespace vperf
