// --domain NAME where vperf kvm means a guest (guest/domain_guest_mount.h): the guest symbols
// written as a temporary --guestmount, and the errors with their hints, against a fake guest
// agent and libvirt's in-process test driver (test:///default: one running domain "test"
// without QEMU monitor or guest agent). The real domain is tests/integration/kvm_libvirt_test.cpp.
#include "guest/domain_guest_mount.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/files.h"
#include "guest/guest_symbols.h"
#include "support/fake_event_fs.h"
#include "support/fake_guest_agent.h"
#include "support/scratch_tmpdir.h"

namespace vperf::guest {
namespace {

namespace fs = std::filesystem;

using test::FakeAgent;
using test::private_directories;
using test::ScratchTmpdir;

const std::string kKallsyms =
    "ffffffff81000000 T _text\n"
    "ffffffff81e00000 D linux_banner\n"
    "ffffffff81001000 T native_safe_halt\n"
    "ffffffff81002000 T clear_user_rep_good\n"
    "ffffffffc0000000 t vring_interrupt\t[virtio_ring]\n";
const std::string kModules = "virtio_ring 45056 1 virtio_console, Live 0xffffffffc0000000\n";

std::map<std::string, std::string> guest_files(const std::string& kallsyms) {
  return {{"/proc/kallsyms", kallsyms},
          {"/proc/modules", kModules},
          {"/proc/sys/kernel/random/boot_id", "0f6e1c7a-3b52-4c8e-9d1a-5e2f8b7c6d40\n"},
          {"/proc/sys/kernel/osrelease", "6.1.0-test-amd64\n"}};
}

// The cache of domain vm1 under `root`.
GuestSymbolCache vm1_cache(const fs::path& root) {
  return {GuestSymbolCacheLocation{root, "guest-symbols"}, libvirt_guest_identity("5b2b1c3e-0000-4000-8000-00000000a001")};
}

TEST(DomainGuestMount, GuestSymbolsAreAGuestmountOfTheVmmPidRemovedAfterwards) {
  ScratchTmpdir tmp;
  test::TempTree cache;
  FakeAgent agent(guest_files(kKallsyms));
  // The guest's kernel as the monitor reads it: what lets the cached kallsyms be used.
  DumpMemory kernel = test::guest_memory_holding(
      {{0xffffffff81000000, std::string("\x48\x8d\x25\x51\x3f\x60\x01\x48\x8d\x3d\xf2\xff\xff\xff\xb9\x01", 16)},
       {0xffffffff81e00000, "Linux version 6.1.0-test-amd64 (builder@host)"}});
  fs::path directory;
  {
    Result<DomainGuestMount> fetched = DomainGuestMount::from_agent(agent, 4242, "vm1", vm1_cache(cache.root()), &kernel);
    ASSERT_TRUE(fetched.ok()) << fetched.error().describe();
    const DomainGuestMount& mount = *fetched;
    directory = mount.directory();
    EXPECT_EQ(directory.parent_path(), tmp.dir());
    EXPECT_EQ(mount.vmm_pid(), 4242);
    EXPECT_FALSE(mount.from_cache());
    EXPECT_EQ(read_file(directory / "4242/proc/kallsyms").value(), kKallsyms);
    EXPECT_EQ(read_file(directory / "4242/proc/modules").value(), kModules);
    // The layout --guestmount reads: one guest, keyed by the VMM pid.
    Result<std::map<pid_t, fs::path>> guests = guests_under_mount(directory);
    ASSERT_TRUE(guests.ok()) << guests.error().describe();
    ASSERT_EQ(guests->size(), 1u);
    EXPECT_EQ(guests->begin()->first, 4242);
  }
  EXPECT_FALSE(fs::exists(directory));
  EXPECT_EQ(private_directories(tmp.dir()), 0);

  // The same boot with the same modules: kallsyms comes from the cache, not the agent.
  Result<DomainGuestMount> again = DomainGuestMount::from_agent(agent, 4242, "vm1", vm1_cache(cache.root()), &kernel);
  ASSERT_TRUE(again.ok()) << again.error().describe();
  EXPECT_TRUE(again->from_cache());
  EXPECT_EQ(agent.opened("/proc/kallsyms"), 1);
  EXPECT_EQ(read_file(again->directory() / "4242/proc/kallsyms").value(), kKallsyms);
}

TEST(DomainGuestMount, ZeroedKallsymsIsRefusedWithTheFixAndLeavesNothing) {
  ScratchTmpdir tmp;
  test::TempTree cache;
  FakeAgent agent(guest_files("0000000000000000 T _text\n0000000000000000 T native_safe_halt\n"));
  Result<DomainGuestMount> mount = DomainGuestMount::from_agent(agent, 4242, "vm1", vm1_cache(cache.root()), nullptr);
  ASSERT_FALSE(mount.ok());
  EXPECT_EQ(mount.error().describe(),
            "the guest's symbols: domain vm1's /proc/kallsyms: every kernel symbol address is 0 (the guest's "
            "kernel.kptr_restrict hid them)");
  EXPECT_EQ(mount.error().hint, guest_kallsyms_hint());
  EXPECT_EQ(private_directories(tmp.dir()), 0);
  EXPECT_TRUE(fs::is_empty(cache.root())) << "a hidden kallsyms is never cached";
}

TEST(DomainGuestMount, RemoteUrisAreTheOnesWithAHost) {
  EXPECT_FALSE(libvirt_uri_is_remote("qemu:///system"));
  EXPECT_FALSE(libvirt_uri_is_remote("qemu:///session"));
  EXPECT_FALSE(libvirt_uri_is_remote("test:///default"));
  EXPECT_FALSE(libvirt_uri_is_remote("qemu+unix:///system?socket=/run/libvirt/libvirt-sock"));
  EXPECT_TRUE(libvirt_uri_is_remote("qemu+ssh://host2/system"));
  EXPECT_TRUE(libvirt_uri_is_remote("qemu+ssh://root@host2:2222/system"));
  EXPECT_TRUE(libvirt_uri_is_remote("qemu+tcp://10.0.0.2/system"));
}

// libvirt's in-process test driver, as vperf kvm connects to it for --domain.
LibvirtConnection test_driver() {
  return LibvirtConnection::open("test:///default", LibvirtAccess::read_write, LibvirtUriTrust::checked).value();
}

TEST(DomainGuestMount, UnknownDomainSaysWhereTheDomainsAre) {
  Result<DomainGuestMount> mount = DomainGuestMount::fetch(test_driver(), "nosuch", std::nullopt);
  ASSERT_FALSE(mount.ok());
  EXPECT_NE(mount.error().message.find("no domain 'nosuch' at test:///default"), std::string::npos) << mount.error().message;
  EXPECT_EQ(mount.error().hint, "vperf kvm list --connect test:///default shows the domains");
}

TEST(DomainGuestMount, DomainWithoutAgentSaysHowToAddOne) {
  Result<DomainGuestMount> mount = DomainGuestMount::fetch(test_driver(), "test", std::nullopt);
  ASSERT_FALSE(mount.ok());
  EXPECT_NE(mount.error().message.find("domain 'test' has no guest agent that answers"), std::string::npos)
      << mount.error().message;
  EXPECT_NE(mount.error().hint.find("org.qemu.guest_agent.0"), std::string::npos) << mount.error().hint;
  EXPECT_NE(mount.error().hint.find("vperf kvm list"), std::string::npos) << mount.error().hint;
}

TEST(DomainGuestMount, VmmPidNeedsTheDomainsMonitor) {
  LibvirtConnection connection = test_driver();
  // The test driver has no QEMU: no vCPU threads, so no pid rather than an invented one.
  EXPECT_FALSE(connection.vmm_pid("test").ok());
  Result<pid_t> unknown = connection.vmm_pid("nosuch");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("no domain 'nosuch'"), std::string::npos) << unknown.error().message;
  Result<pid_t> pid = domain_vmm_pid(connection, "nosuch");
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().hint, "vperf kvm list --connect test:///default shows the domains");
}

}  // namespace
}  // namespace vperf::guest
