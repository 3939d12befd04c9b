#include "symbols/kallsyms.h"

#include <gtest/gtest.h>

#include "support/capability.h"
#include "support/fake_event_fs.h"

namespace vperf::symbols {
namespace {

// A slice of a real x86_64 /proc/kallsyms: aliases at _text, data between text, a module.
constexpr const char* kFixture =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000040 T startup_64\n"
    "ffffffff81000100 t verify_cpu\n"
    "ffffffff81000200 W weak_helper\n"
    "ffffffff81000300 T do_syscall_64\n"
    "ffffffff81000400 r a_rodata_symbol\n"
    "ffffffff81000500 T _etext\n"
    "ffffffff82000000 D some_data\n"
    "ffffffff82001000 B some_bss\n"
    "ffffffffc0a00000 t kvm_init\t[kvm]\n"
    "ffffffffc0a00100 T kvm_vcpu_ioctl\t[kvm]\n"
    "ffffffffc0b00000 t vmx_vcpu_run\t[kvm_intel]\n";

TEST(Kallsyms, ParsesKernelAndModuleSymbols) {
  auto k = Kallsyms::parse(kFixture, "fixture");
  ASSERT_TRUE(k.ok()) << k.error().describe();
  const SymbolTable& kernel = k->kernel();
  // _stext/_text collapse to one (the last alias, as perf keeps); 'r' is not kept.
  EXPECT_EQ(kernel.find_by_name("a_rodata_symbol"), nullptr);
  EXPECT_EQ(kernel.find(0xffffffff81000000)->name, "_text");
  EXPECT_EQ(kernel.find(0xffffffff81000150)->name, "verify_cpu");
  const Symbol* sys = kernel.find(0xffffffff810003ff);
  ASSERT_NE(sys, nullptr);
  EXPECT_EQ(sys->name, "do_syscall_64");
  EXPECT_EQ(sys->start, 0xffffffff81000300u);
  EXPECT_EQ(sys->end, 0xffffffff81000500u);  // up to the next kept symbol (_etext)
  EXPECT_EQ(kernel.find(0xffffffff81000250)->binding, SymbolBinding::Weak);
  EXPECT_EQ(kernel.find(0xffffffff81000150)->binding, SymbolBinding::Local);
  EXPECT_EQ(kernel.find(0xffffffff82000010)->name, "some_data");

  ASSERT_EQ(k->modules().size(), 2u);
  const SymbolTable* kvm = k->module("kvm");
  ASSERT_NE(kvm, nullptr);
  EXPECT_EQ(kvm->find(0xffffffffc0a00080)->name, "kvm_init");
  EXPECT_EQ(kvm->find(0xffffffffc0a00180)->name, "kvm_vcpu_ioctl");
  EXPECT_EQ(kvm->find(0xffffffffc0a00100)->end, 0xffffffffc0a02000u);  // last of its module: next page + 1
  EXPECT_EQ(kernel.find(0xffffffffc0a00080), nullptr);
  ASSERT_NE(k->module("kvm_intel"), nullptr);
  EXPECT_EQ(k->module("nope"), nullptr);
}

TEST(Kallsyms, RelocationReferenceIsTextThenStext) {
  auto k = Kallsyms::parse(kFixture, "fixture");
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE(k->relocation_reference().has_value());
  EXPECT_EQ(k->relocation_reference()->name, "_text");
  EXPECT_EQ(k->relocation_reference()->address, 0xffffffff81000000u);
  EXPECT_EQ(k->address_of("_etext"), 0xffffffff81000500u);

  auto only_stext = Kallsyms::parse("ffffffff81000000 T _stext\nffffffff81000040 T f\n", "x");
  ASSERT_TRUE(only_stext.ok());
  EXPECT_EQ(only_stext->relocation_reference()->name, "_stext");
}

TEST(Kallsyms, AllZeroAddressesIsAnErrorWithTheFix) {
  auto k = Kallsyms::parse("0000000000000000 T _text\n0000000000000000 T startup_64\n0000000000000000 t f\t[kvm]\n",
                           "/proc/kallsyms");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("kptr_restrict"), std::string::npos) << k.error().message;
  EXPECT_NE(k.error().message.find("sysctl kernel.kptr_restrict=0"), std::string::npos);
  EXPECT_NE(k.error().message.find("perf_event_paranoid"), std::string::npos);
  EXPECT_NE(k.error().message.find("root"), std::string::npos);
  EXPECT_EQ(k.error().errno_value, EACCES);
}

TEST(Kallsyms, MalformedLinesAreErrorsWithTheLineNumber) {
  auto k = Kallsyms::parse("ffffffff81000000 T _text\nnot a line at all\n", "f");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("f:2"), std::string::npos) << k.error().message;
  EXPECT_FALSE(Kallsyms::parse("zzzz T x\n", "f").ok());
}

TEST(Kallsyms, LoadsFromAPathAndReportsAMissingFile) {
  test::TempTree tree;
  tree.write("kallsyms", kFixture);
  auto k = Kallsyms::load(tree.root() / "kallsyms");
  ASSERT_TRUE(k.ok()) << k.error().describe();
  EXPECT_NE(k->kernel().find_by_name("startup_64"), nullptr);
  auto missing = Kallsyms::load(tree.root() / "absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errno_value, ENOENT);
}

// Skipped only where /proc/kallsyms is absent or hides its addresses (checked without the
// parser); where it shows them, failing to load it is a failure.
TEST(Kallsyms, ThisMachinesKallsymsLoads) {
  VPERF_REQUIRE(test::kallsyms_shows_addresses(), "a /proc/kallsyms with addresses (root, kernel.kptr_restrict)");
  auto k = Kallsyms::load();
  ASSERT_TRUE(k.ok()) << k.error().describe();
  EXPECT_GT(k->kernel().size(), 1000u);
  EXPECT_TRUE(k->relocation_reference().has_value());
}

}  // namespace
}  // namespace vperf::symbols
