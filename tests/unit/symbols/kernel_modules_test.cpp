#include "symbols/kernel_modules.h"

#include <gtest/gtest.h>

namespace vperf::symbols {
namespace {

TEST(KernelModules, ParsesNameBaseAndSize) {
  auto m = parse_kernel_modules(
      "kvm_intel 380928 0 - Live 0xffffffffc0a4f000\n"
      "kvm 1142784 1 kvm_intel, Live 0xffffffffc0930000 (E)\n",
      "modules");
  ASSERT_TRUE(m.ok()) << m.error().describe();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].name, "kvm_intel");
  EXPECT_EQ((*m)[0].base, 0xffffffffc0a4f000u);
  EXPECT_EQ((*m)[0].size, 380928u);
  EXPECT_EQ((*m)[1].name, "kvm");
}

TEST(KernelModules, HiddenAddressesAndBadLinesAreErrors) {
  auto hidden = parse_kernel_modules("kvm 1142784 0 - Live 0x0000000000000000\n", "m");
  ASSERT_FALSE(hidden.ok());
  EXPECT_NE(hidden.error().message.find("kptr_restrict"), std::string::npos);
  EXPECT_FALSE(parse_kernel_modules("kvm 1142784\n", "m").ok());
  EXPECT_TRUE(parse_kernel_modules("", "m").ok());
}

TEST(KernelModules, MissingFileIsEnoent) {
  auto m = load_kernel_modules("/nonexistent/modules");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().errno_value, ENOENT);
}

TEST(KernelModules, DsoNamesAreBracketedShortNames) {
  EXPECT_EQ(module_dso_name("/lib/modules/6.1.0-18-amd64/kernel/arch/x86/kvm/kvm-intel.ko"), "[kvm_intel]");
  EXPECT_EQ(module_dso_name("/lib/modules/6.1.0/kernel/fs/xfs/xfs.ko.xz"), "[xfs]");
  EXPECT_EQ(module_dso_name("kvm"), "[kvm]");
  EXPECT_EQ(module_dso_name("[kvm]"), "[kvm]");
}

}  // namespace
}  // namespace vperf::symbols
