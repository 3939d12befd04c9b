// Planning kernel probes (kprobes) needs no tracefs: FUNC+OFF is bounded by FUNC's size, which
// is where the next symbol of kallsyms starts (a synthetic copy here).
#include "probes/probe_plan.h"

#include <gtest/gtest.h>

#include "support/fake_event_fs.h"

namespace vperf::probes {
namespace {

Result<std::vector<PlannedProbe>> plan_kernel(const std::filesystem::path& kallsyms, const std::string& definition) {
  ProbeRequest request;
  request.kallsyms = kallsyms;
  request.definitions = {definition};
  return plan_probes(request, {});
}

// vfs_read is 0x1d0 = 464 bytes: it ends where vfs_write starts. Offsets inside are planned (the
// kernel proves the boundary itself), offsets at or past the end are refused, 2^64 - 1 too
// (it wrapped to the byte before the function); a module's function is found in its table.
TEST(ProbeSession, KernelOffsetsStayInsideTheFunction) {
  test::TempTree dir;
  dir.write("kallsyms",
            "ffffffff81000000 T _text\n"
            "ffffffff816b8230 T vfs_read\n"
            "ffffffff816b8400 T vfs_write\n"
            "ffffffff816b8500 t vfs_tail\n"
            "ffffffffc0001000 t probe_module_target\t[vperf_probe_module]\n"
            "ffffffffc0001040 t probe_module_next\t[vperf_probe_module]\n");
  const std::filesystem::path kallsyms = dir.root() / "kallsyms";
  Result<std::vector<PlannedProbe>> inside = plan_kernel(kallsyms, "vfs_read+16");
  ASSERT_TRUE(inside.ok()) << inside.error().describe();
  EXPECT_EQ(inside->front().definition, "p:probe/vfs_read vfs_read+16");
  EXPECT_TRUE(plan_kernel(kallsyms, "vfs_read+463").ok());
  for (const char* past : {"vfs_read+464", "vfs_read+18446744073709551615"}) {
    Result<std::vector<PlannedProbe>> refused = plan_kernel(kallsyms, past);
    ASSERT_FALSE(refused.ok()) << past;
    EXPECT_EQ(refused.error().message, std::string(past) + " is past the end of vfs_read, which is 464 bytes long");
  }
  EXPECT_TRUE(plan_kernel(kallsyms, "probe_module_target+63").ok());
  EXPECT_FALSE(plan_kernel(kallsyms, "probe_module_target+64").ok());
  EXPECT_EQ(plan_kernel(kallsyms, "no_such_function+4").error().message, "no kernel function no_such_function in " + kallsyms.string());
  // The entry needs no size: nothing is read.
  EXPECT_TRUE(plan_kernel(dir.root() / "missing", "vfs_read").ok());
  // Hidden addresses (kptr_restrict) cannot size a function: an offset is refused with kallsyms' hint.
  dir.write("hidden", "0000000000000000 T _text\n0000000000000000 T vfs_read\n0000000000000000 T vfs_write\n");
  Result<std::vector<PlannedProbe>> hidden = plan_kernel(dir.root() / "hidden", "vfs_read+16");
  ASSERT_FALSE(hidden.ok());
  EXPECT_TRUE(hidden.error().message.starts_with("vfs_read+16 cannot be checked against vfs_read's size: ")) << hidden.error().message;
  EXPECT_FALSE(hidden.error().hint.empty());
}

}  // namespace
}  // namespace vperf::probes
