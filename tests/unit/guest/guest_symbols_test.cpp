#include "guest/guest_symbols.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf::guest {
namespace {

constexpr uint8_t kGuestKernel = PERF_RECORD_MISC_GUEST_KERNEL;

// A guest kernel's kallsyms and modules: _text at 0xffffffffa1000000, two functions, _etext,
// and module "vnet" with one function at 0xffffffffc0010000.
const char* kKallsyms =
    "ffffffffa1000000 T _text\n"
    "ffffffffa1000100 T guest_schedule\n"
    "ffffffffa1000200 T guest_do_syscall\n"
    "ffffffffa1000300 T _etext\n"
    "ffffffffc0010000 t vnet_poll\t[vnet]\n"
    "ffffffffc0010080 t vnet_xmit\t[vnet]\n";
const char* kModules = "vnet 16384 0 - Live 0xffffffffc0010000\n";

TEST(GuestSymbols, DefaultGuestServesEveryVmmWithoutItsOwnMachine) {
  test::TempTree tree;
  tree.write("kallsyms", kKallsyms);
  tree.write("modules", kModules);
  symbols::Machines machines{symbols::SymbolConfig{}};
  GuestSymbolSources sources{tree.root() / "kallsyms", tree.root() / "modules", {}, {}};
  Result<void> added = add_guest_machines(machines, sources);
  ASSERT_TRUE(added.ok()) << added.error().describe();
  // Without any MMAP record: the kernel and module maps come from the files.
  for (pid_t vmm : {0, 1234, 999}) {
    symbols::ResolvedAddress k = machines.resolve(vmm, vmm + 1, kGuestKernel, 0xffffffffa1000208);
    EXPECT_EQ(k.symbol_name(), "guest_do_syscall");
    EXPECT_EQ(k.dso_name(), "[guest.kernel.kallsyms]");
    EXPECT_EQ(k.level, 'g');
    symbols::ResolvedAddress m = machines.resolve(vmm, vmm + 1, kGuestKernel, 0xffffffffc0010084);
    EXPECT_EQ(m.symbol_name(), "vnet_xmit");
    EXPECT_EQ(m.dso_name(), "[vnet]");
  }
  // A guest user-space address has no maps: unresolved, level 'u'.
  symbols::ResolvedAddress u = machines.resolve(1234, 1235, PERF_RECORD_MISC_GUEST_USER, 0x401000);
  EXPECT_EQ(u.symbol, nullptr);
  EXPECT_EQ(u.level, 'u');
  // The host is not affected.
  EXPECT_NE(machines.resolve(1234, 1235, PERF_RECORD_MISC_KERNEL, 0xffffffffa1000208).symbol_name(), "guest_do_syscall");
}

TEST(GuestSymbols, GuestMountGivesEachVmmItsOwnGuest) {
  test::TempTree tree;
  tree.write("guests/100/proc/kallsyms", kKallsyms);
  tree.write("guests/100/proc/modules", kModules);
  // The second guest: another KASLR offset, and other functions at the first one's addresses.
  tree.write("guests/200/proc/kallsyms",
             "ffffffffa2000000 T _text\n"
             "ffffffffa1000200 T elsewhere_before\n"
             "ffffffffa2000100 T other_schedule\n"
             "ffffffffa2000300 T _etext\n");
  tree.write("guests/notes/readme", "not a guest: ignored\n");
  symbols::Machines machines{symbols::SymbolConfig{}};
  Result<void> added = add_guest_machines(machines, GuestSymbolSources{{}, {}, {}, tree.root() / "guests"});
  ASSERT_TRUE(added.ok()) << added.error().describe();
  EXPECT_EQ(machines.guests().size(), 2u);
  EXPECT_EQ(machines.resolve(100, 101, kGuestKernel, 0xffffffffa1000104).symbol_name(), "guest_schedule");
  EXPECT_EQ(machines.resolve(200, 201, kGuestKernel, 0xffffffffa2000104).symbol_name(), "other_schedule");
  // No default guest: a third VMM's samples resolve to nothing rather than to another guest.
  EXPECT_EQ(machines.resolve(300, 301, kGuestKernel, 0xffffffffa1000104).symbol, nullptr);
  const symbols::Machine* second = machines.find_guest(200);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->config().symfs, tree.root() / "guests/200");
  EXPECT_EQ(second->config().vdso, symbols::VdsoSource::Skip);
}

TEST(GuestSymbols, ZeroedKallsymsIsRefusedWithTheGuestsFix) {
  test::TempTree tree;
  tree.write("kallsyms",
             "0000000000000000 T _text\n"
             "0000000000000000 T guest_schedule\n"
             "0000000000000000 T _etext\n");
  symbols::Machines machines{symbols::SymbolConfig{}};
  Result<void> added = add_guest_machines(machines, GuestSymbolSources{tree.root() / "kallsyms", {}, {}, {}});
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().errno_value, EACCES);
  EXPECT_NE(added.error().message.find("kptr_restrict"), std::string::npos) << added.error().message;
  EXPECT_NE(guest_kallsyms_hint().find("in the guest"), std::string::npos);
}

TEST(GuestSymbols, BadSourcesAreErrors) {
  test::TempTree tree;
  symbols::Machines machines{symbols::SymbolConfig{}};
  EXPECT_FALSE(add_guest_machines(machines, GuestSymbolSources{{}, tree.root() / "modules", {}, {}}).ok())
      << "--guestmodules alone has no symbols";
  EXPECT_FALSE(add_guest_machines(machines, GuestSymbolSources{tree.root() / "missing", {}, {}, {}}).ok());
  tree.write("empty/.keep", "");
  Result<void> empty = add_guest_machines(machines, GuestSymbolSources{{}, {}, {}, tree.root() / "empty"});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("<VMM pid>"), std::string::npos) << empty.error().message;
}

// --guestvmlinux: a kernel image's ELF symbols at their link addresses (an image linked at
// 0xffffffff81000000 by the test, as a vmlinux is).
TEST(GuestSymbols, VmlinuxGivesTheGuestKernelItsSymbols) {
  VPERF_REQUIRE(!test::find_program("gcc").empty(), "gcc to link a kernel-like image");
  test::TempTree tree;
  tree.write("k.c",
             "void _text(void) {}\n"
             "int guest_func_a(int x) { return x * 3 + 1; }\n"
             "int guest_func_b(int x) { return guest_func_a(x) - 7; }\n"
             "void _etext(void) {}\n");
  const std::string image = (tree.root() / "vmlinux").string();
  test::ProgramResult cc = test::run_program({"gcc", "-O1", "-fno-pic", "-mcmodel=kernel", "-nostdlib", "-static",
                                              "-Wl,-Ttext=0xffffffff81000000", "-Wl,-e,_text", "-o", image,
                                              (tree.root() / "k.c").string()});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  test::ProgramResult nm = test::run_program({"sh", "-c", "nm " + image + " | awk '$3 == \"guest_func_b\" {print $1}'"});
  ASSERT_FALSE(nm.out.empty()) << nm.err;
  const uint64_t b = std::stoull(nm.out, nullptr, 16);
  symbols::Machines machines{symbols::SymbolConfig{}};
  Result<void> added = add_guest_machines(machines, GuestSymbolSources{{}, {}, image, {}});
  ASSERT_TRUE(added.ok()) << added.error().describe();
  symbols::ResolvedAddress r = machines.resolve(4242, 4243, kGuestKernel, b + 1);
  EXPECT_EQ(r.symbol_name(), "guest_func_b");
  EXPECT_EQ(r.dso_name(), "[guest.kernel.kallsyms]");
  // A vmlinuz (no symbols) is refused.
  tree.write("vmlinuz", "not an ELF");
  EXPECT_FALSE(add_guest_machines(machines, GuestSymbolSources{{}, {}, tree.root() / "vmlinuz", {}}).ok());
}

}  // namespace
}  // namespace vperf::guest
