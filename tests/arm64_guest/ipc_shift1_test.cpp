// The arm64 guest booted with -icount shift=1 (shared_arm64_guest.h): every instruction takes two
// nanoseconds of virtual time and two CPU cycles, so a run's cycles are exactly twice its
// instructions and perf's IPC line says 0.50, for vperf as for perf 6.1 for arm64.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arm64_guest/shared_arm64_guest.h"
#include "support/stat_output.h"

namespace vperf::test {
namespace {

static_assert(SharedArm64Guest::kIcountShift == 1, "this program's guest runs two cycles per instruction");

TEST(Arm64IcountShift1, CyclesAreTwiceTheInstructionsAndIpcIsOneHalf) {
  if (!SharedArm64Guest::ready()) GTEST_FAIL() << "no arm64 guest";
  const std::string command = "/bin/vperf-workload loop 10000000";
  for (const std::string tool : {"vperf", "/lib/vperf-test/perf"}) {
    const GuestCommandResult r =
        SharedArm64Guest::run(tool + " stat -e cycles,instructions,cycles:u,instructions:u " + command + " 2>&1 >/dev/null");
    ASSERT_EQ(r.exit_code, 0) << tool << ":\n" << r.out;
    const std::vector<TextRow> rows = parse_text_rows(r.out);
    ASSERT_EQ(rows.size(), 4u) << r.out;
    for (size_t i = 0; i < rows.size(); i += 2) {
      EXPECT_EQ(std::stoull(rows[i].value), 2 * std::stoull(rows[i + 1].value)) << tool << ": " << rows[i].event << " against "
                                                                                 << rows[i + 1].event << "\n" << r.out;
      EXPECT_NE(rows[i + 1].line.find("#    0.50  insn per cycle"), std::string::npos) << tool << ": " << rows[i + 1].line;
    }
  }
}

}  // namespace
}  // namespace vperf::test
