// vperf-workload against the ground truth, Linux perf: each subcommand's count is exact (or,
// for page faults, exact plus the program's fixed start-up cost). vperf's own tests can then
// use these numbers without running perf.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

// event name -> count, from `perf stat -x,` (stderr: "value,unit,event,run time,percent,...").
// "<not counted>"/"<not supported>" lines are left out.
struct PerfCounts {
  test::ProgramResult run;
  std::map<std::string, uint64_t> counts;
};

PerfCounts perf_stat(const std::string& events, const std::vector<std::string>& workload_args) {
  std::vector<std::string> argv{"perf", "stat", "-x,", "-e", events, "--", VPERF_WORKLOAD};
  argv.insert(argv.end(), workload_args.begin(), workload_args.end());
  PerfCounts out;
  out.run = test::run_program(argv);
  std::istringstream lines(out.run.err);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::stringstream fs(line);
    std::string f;
    while (std::getline(fs, f, ',')) fields.push_back(f);
    if (fields.size() < 3 || fields[0].empty() || fields[0][0] < '0' || fields[0][0] > '9') continue;
    out.counts[fields[2]] = std::stoull(fields[0]);
  }
  return out;
}

bool has_perf() { return !test::find_program("perf").empty(); }
bool has_kvm() { return ::access("/dev/kvm", R_OK | W_OK) == 0; }
bool has_kvm_tracepoints() {
  return test::has_tracefs() && std::filesystem::exists("/sys/kernel/tracing/events/kvm/kvm_pio") &&
         std::filesystem::exists("/sys/kernel/tracing/events/kvm/kvm_userspace_exit");
}

#define EXPECT_COUNT(result, event, expected)                                                     \
  do {                                                                                            \
    ASSERT_TRUE((result).counts.count(event)) << "no count for " << (event) << " in:\n" << (result).run.err; \
    EXPECT_EQ((result).counts.at(event), static_cast<uint64_t>(expected)) << (result).run.err;     \
  } while (0)

TEST(Workloads, ExitStatusAndUsage) {
  EXPECT_EQ(test::run_program({VPERF_WORKLOAD, "exit", "7"}).exit_code, 7);
  test::ProgramResult quiet = test::run_program({VPERF_WORKLOAD, "getppid", "10"});
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out + quiet.err, "") << "silent on success";
  test::ProgramResult verbose = test::run_program({VPERF_WORKLOAD, "--verbose", "getppid", "10"});
  EXPECT_EQ(verbose.out, "getppid: 10 system calls\n");
  test::ProgramResult bad = test::run_program({VPERF_WORKLOAD, "getppid", "ten"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "vperf-workload: getppid: 'ten' is not a non-negative integer\n");
  EXPECT_EQ(test::run_program({VPERF_WORKLOAD, "fly", "1"}).exit_code, 2);
  EXPECT_EQ(test::run_program({VPERF_WORKLOAD}).exit_code, 2);
}

TEST(Workloads, SpinAndSleepTakeTheirTime) {
  for (const char* what : {"spin", "spin-deep", "sleep"}) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(test::run_program({VPERF_WORKLOAD, what, "100"}).exit_code, 0) << what;
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(elapsed, std::chrono::milliseconds(100)) << what;
    EXPECT_LT(elapsed, std::chrono::seconds(5)) << what;
  }
}

TEST(Workloads, SpinBurnsCpu) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  for (const char* what : {"spin", "spin-deep"}) {
    PerfCounts r = perf_stat("task-clock", {what, "200"});
    ASSERT_EQ(r.run.exit_code, 0) << what << ": " << r.run.err;
    ASSERT_TRUE(r.counts.count("task-clock")) << what << ": " << r.run.err;
    // perf -x, prints task-clock in msec with decimals; the integer part is enough here.
    EXPECT_GE(r.counts.at("task-clock"), 200u) << what << " counts CPU time, not wall time";
    EXPECT_LT(r.counts.at("task-clock"), 400u) << what;
  }
}

TEST(Workloads, GetppidIsExact) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(test::has_tracefs(), "tracefs");
  VPERF_REQUIRE(test::running_as_root(), "root (tracepoint counters)");
  PerfCounts r = perf_stat("syscalls:sys_enter_getppid", {"getppid", "10000"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_COUNT(r, "syscalls:sys_enter_getppid", 10000);
}

// Measured (Debian 12, gcc 12, dynamically linked libstdc++): start-up takes about 110 page
// faults (ld.so mapping and relocating libc, libm, libgcc_s and libstdc++, libstdc++'s static
// initialisation, the first stack and heap pages), and `page-faults N` exactly N more (a write
// to each fresh 4 KiB page, THP off for the region). Start-up's share is not fixed: address-space
// randomisation moves the stack and data within their pages (30 pairs of runs differed by -2 to
// +4), and even without it the kernel now and then faults a page twice (a page migrated or
// reclaimed while the program runs: +1 in about one run of 300 here, and in CI under load). So
// the loop's share is counted by address: every fault sampled with the address that faulted
// (-c 1 -d), those inside the region the workload reports (--verbose) counted. The loop writes
// each page of a fresh mapping once, so nothing can fault there twice: that count is exact.
constexpr uint64_t kStartupFaultsBound = 200;

TEST(Workloads, PageFaultsAreNPlusAFixedStartupCost) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  constexpr uint64_t kPages = 10000;
  test::TempTree scratch;
  const std::string data = (scratch.root() / "faults.data").string();
  test::ProgramResult r = test::run_program({"perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", data, "--",
                                             VPERF_WORKLOAD, "--verbose", "page-faults", std::to_string(kPages)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t first = 0, last = 0;
  const size_t at = r.out.find(" fresh pages at 0x");
  ASSERT_NE(at, std::string::npos) << r.out;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, " fresh pages at 0x%" SCNx64 "-0x%" SCNx64, &first, &last), 2) << r.out;
  ASSERT_EQ(last - first, kPages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))) << r.out;

  test::ProgramResult addresses = test::run_program({"perf", "script", "-i", data, "-F", "addr"});
  ASSERT_EQ(addresses.exit_code, 0) << addresses.err;
  std::istringstream lines(addresses.out);
  std::string line;
  uint64_t faults = 0, in_region = 0;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const uint64_t address = std::stoull(line, nullptr, 16);
    ++faults;
    in_region += address >= first && address < last;
  }
  EXPECT_EQ(in_region, kPages) << "the loop's faults, by address";
  EXPECT_GE(faults, kPages);
  EXPECT_LT(faults, kPages + kStartupFaultsBound);
}

TEST(Workloads, KvmPioIsExact) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(has_kvm(), "/dev/kvm (read-write)");
  VPERF_REQUIRE(has_kvm_tracepoints(), "the kvm tracepoints in tracefs");
  for (uint64_t n : {1000u, 70000u}) {  // 70000 > 65535: the guest's counter is 32-bit
    PerfCounts r = perf_stat("kvm:kvm_pio,kvm:kvm_userspace_exit", {"kvm-pio", std::to_string(n)});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    EXPECT_COUNT(r, "kvm:kvm_pio", n);
    EXPECT_COUNT(r, "kvm:kvm_userspace_exit", n);
  }
}

TEST(Workloads, KvmPioRunToHltAddsOneUserspaceExit) {
  VPERF_REQUIRE(has_perf(), "perf on PATH");
  VPERF_REQUIRE(has_kvm(), "/dev/kvm (read-write)");
  VPERF_REQUIRE(has_kvm_tracepoints(), "the kvm tracepoints in tracefs");
  for (uint64_t n : {0u, 1000u}) {
    PerfCounts r = perf_stat("kvm:kvm_pio,kvm:kvm_userspace_exit", {"--run-to-hlt", "kvm-pio", std::to_string(n)});
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    EXPECT_COUNT(r, "kvm:kvm_pio", n);
    EXPECT_COUNT(r, "kvm:kvm_userspace_exit", n + 1);  // + the KVM_EXIT_HLT
  }
}

TEST(Workloads, KvmPioWithoutKvmSaysSo) {
  VPERF_REQUIRE(test::running_as_root(), "root (a private mount namespace hides /dev/kvm)");
  VPERF_REQUIRE(!test::find_program("unshare").empty(), "unshare(1)");
  // A private mount namespace with an empty /dev: no /dev/kvm.
  test::ProgramResult r = test::run_program(
      {"unshare", "--mount", "--propagation", "private", "sh", "-c",
       std::string("mount -t tmpfs none /dev && exec ") + VPERF_WORKLOAD + " kvm-pio 10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "vperf-workload: kvm-pio: cannot open /dev/kvm: No such file or directory\n");
}

}  // namespace
}  // namespace vperf
