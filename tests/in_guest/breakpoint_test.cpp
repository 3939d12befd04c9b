// Hardware breakpoints (perf's mem:ADDR[/LEN][:ACCESS]) counted for real: this machine's vCPUs
// accept a breakpoint and never fire it (perf stat counts 0 too), the test guest's emulated CPU
// fires it on every access. vperf-workload watched-writes N stores to one word at a fixed
// address (0x3e00000000) exactly N times, so a write watchpoint on it counts exactly N; perf 6.1
// in the guest is the second oracle.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "in_guest/shared_guest.h"
#include "support/capability.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

constexpr const char* kWatched = "mem:0x3e00000000:w";

class Breakpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(!find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the test guest (its vCPU fires breakpoints)");
    ASSERT_TRUE(SharedGuest::ready()) << SharedGuest::boot_error();
  }

  // `stat -x ,` of `event` over `writes` stores to the watched word: the count's field.
  std::string count(const std::string& stat, const std::string& event, int writes) {
    GuestCommandResult r = SharedGuest::run(stat + " stat -x , -e " + event + " -- /bin/vperf-workload watched-writes " + std::to_string(writes));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err.substr(0, r.err.find(','));
  }
};

TEST_F(Breakpoint, WriteWatchpointCountsEveryStoreAsPerfDoes) {
  // Under KVM the guest's breakpoints are the host's vCPU's, which may not fire them either;
  // perf says which.
  if (SharedGuest::has_perf() && count("/lib/vperf-test/perf", kWatched, 100) == "0")
    GTEST_SKIP() << "this guest's vCPUs do not fire hardware breakpoints: perf 6.1 counts 0 of 100 stores too";
  for (int writes : {100, 1000}) {
    EXPECT_EQ(count("/bin/vperf", kWatched, writes), std::to_string(writes));
    if (SharedGuest::has_perf()) {
      EXPECT_EQ(count("/lib/vperf-test/perf", kWatched, writes), std::to_string(writes));
    }
  }
  // Read and write by default; an 8-byte length written out covers the same word.
  EXPECT_EQ(count("/bin/vperf", "mem:0x3e00000000/8", 300), "300");
  // A watchpoint on the next word sees none of the stores.
  EXPECT_EQ(count("/bin/vperf", "mem:0x3e00000008:w", 300), "0");
}

// Every hit is a sample (period 1), all at one address (the instruction after the store; the
// guest's workload is stripped, so an address, not a name) in the workload.
TEST_F(Breakpoint, RecordSamplesEveryStoreAtOneInstruction) {
  if (SharedGuest::has_perf() && count("/lib/vperf-test/perf", kWatched, 100) == "0")
    GTEST_SKIP() << "this guest's vCPUs do not fire hardware breakpoints: perf 6.1 counts 0 of 100 stores too";
  GuestCommandResult r = SharedGuest::run(std::string("/bin/vperf record -q -e ") + kWatched +
                                          " -o /tmp/bp.data -- /bin/vperf-workload watched-writes 500 && "
                                          "/bin/vperf script -i /tmp/bp.data -F ip,dso | sort | uniq -c; rm -f /tmp/bp.data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex(R"( +500 +[0-9a-f]+ \(/bin/vperf-workload\)\n)"))) << r.out << r.err;
}

}  // namespace
}  // namespace vperf::test
