// --domain NAME where vperf kvm means a guest (cli/kvm_domain.h): the guest symbols written as
// a temporary --guestmount, and the errors, against a fake guest agent and libvirt's
// in-process test driver (test:///default: one running domain "test" without QEMU monitor or
// guest agent). The real domain is tests/integration/kvm_libvirt_test.cpp.
#include "cli/kvm_domain.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/cmd_kvm_stat.h"
#include "core/error.h"
#include "core/files.h"
#include "guest/guest_symbols.h"
#include "support/fake_event_fs.h"
#include "support/fake_guest_agent.h"
#include "support/marker_script.h"

#include "unit/cli/run_cli.h"

namespace vperf::cli {
namespace {

namespace fs = std::filesystem;

using test::FakeAgent;

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

// The vperf-guest-symbols-* directories under `dir`.
int private_directories(const fs::path& dir) {
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    n += e.path().filename().string().starts_with("vperf-guest-symbols-");
  return n;
}

// TMPDIR pointed at a scratch directory while alive, so what the code under test leaves there is seen.
class ScratchTmpdir {
 public:
  ScratchTmpdir() {
    if (const char* old = std::getenv("TMPDIR")) saved_ = old;
    ::setenv("TMPDIR", tree_.root().c_str(), 1);
  }
  ~ScratchTmpdir() {
    if (saved_) ::setenv("TMPDIR", saved_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  const fs::path& dir() const { return tree_.root(); }

 private:
  test::TempTree tree_;
  std::optional<std::string> saved_;
};

// The cache of domain vm1 under `root`.
guest::GuestSymbolCache vm1_cache(const fs::path& root) {
  return {guest::GuestSymbolCacheLocation{root, "guest-symbols"}, guest::libvirt_guest_identity("5b2b1c3e-0000-4000-8000-00000000a001")};
}

TEST(KvmDomain, GuestSymbolsAreAGuestmountOfTheVmmPidRemovedAfterwards) {
  ScratchTmpdir tmp;
  test::TempTree cache;
  FakeAgent agent(guest_files(kKallsyms));
  // The guest's kernel as the monitor reads it: what lets the cached kallsyms be used.
  guest::DumpMemory kernel = test::guest_memory_holding(
      {{0xffffffff81000000, std::string("\x48\x8d\x25\x51\x3f\x60\x01\x48\x8d\x3d\xf2\xff\xff\xff\xb9\x01", 16)},
       {0xffffffff81e00000, "Linux version 6.1.0-test-amd64 (builder@host)"}});
  fs::path directory;
  {
    DomainGuestMount mount = DomainGuestMount::from_agent(agent, 4242, "vm1", vm1_cache(cache.root()), &kernel);
    directory = mount.directory();
    EXPECT_EQ(directory.parent_path(), tmp.dir());
    EXPECT_EQ(mount.vmm_pid(), 4242);
    EXPECT_FALSE(mount.from_cache());
    EXPECT_EQ(read_file(directory / "4242/proc/kallsyms").value(), kKallsyms);
    EXPECT_EQ(read_file(directory / "4242/proc/modules").value(), kModules);
    // The layout --guestmount reads: one guest, keyed by the VMM pid.
    Result<std::map<pid_t, fs::path>> guests = guest::guests_under_mount(directory);
    ASSERT_TRUE(guests.ok()) << guests.error().describe();
    ASSERT_EQ(guests->size(), 1u);
    EXPECT_EQ(guests->begin()->first, 4242);
  }
  EXPECT_FALSE(fs::exists(directory));
  EXPECT_EQ(private_directories(tmp.dir()), 0);

  // The same boot with the same modules: kallsyms comes from the cache, not the agent.
  DomainGuestMount again = DomainGuestMount::from_agent(agent, 4242, "vm1", vm1_cache(cache.root()), &kernel);
  EXPECT_TRUE(again.from_cache());
  EXPECT_EQ(agent.opened("/proc/kallsyms"), 1);
  EXPECT_EQ(read_file(again.directory() / "4242/proc/kallsyms").value(), kKallsyms);
}

TEST(KvmDomain, ZeroedKallsymsIsRefusedWithTheFixAndLeavesNothing) {
  ScratchTmpdir tmp;
  test::TempTree cache;
  FakeAgent agent(guest_files("0000000000000000 T _text\n0000000000000000 T native_safe_halt\n"));
  try {
    DomainGuestMount::from_agent(agent, 4242, "vm1", vm1_cache(cache.root()), nullptr);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "the guest's symbols: domain vm1's /proc/kallsyms: every kernel symbol address is 0 (the guest's "
                 "kernel.kptr_restrict hid them)");
    EXPECT_EQ(e.hint(), guest::guest_kallsyms_hint());
    EXPECT_EQ(e.exit_code(), 1);
  }
  EXPECT_EQ(private_directories(tmp.dir()), 0);
  EXPECT_TRUE(fs::is_empty(cache.root())) << "a hidden kallsyms is never cached";
}

TEST(KvmDomain, RemoteUrisAreTheOnesWithAHost) {
  EXPECT_FALSE(guest::libvirt_uri_is_remote("qemu:///system"));
  EXPECT_FALSE(guest::libvirt_uri_is_remote("qemu:///session"));
  EXPECT_FALSE(guest::libvirt_uri_is_remote("test:///default"));
  EXPECT_FALSE(guest::libvirt_uri_is_remote("qemu+unix:///system?socket=/run/libvirt/libvirt-sock"));
  EXPECT_TRUE(guest::libvirt_uri_is_remote("qemu+ssh://host2/system"));
  EXPECT_TRUE(guest::libvirt_uri_is_remote("qemu+ssh://root@host2:2222/system"));
  EXPECT_TRUE(guest::libvirt_uri_is_remote("qemu+tcp://10.0.0.2/system"));
}

TEST(KvmDomain, UnknownDomainSaysWhereTheDomainsAre) {
  try {
    DomainGuestMount::fetch("nosuch", "test:///default", false, std::nullopt);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no domain 'nosuch' at test:///default"), std::string::npos) << e.what();
    EXPECT_EQ(e.hint(), "vperf kvm list --connect test:///default shows the domains");
  }
}

TEST(KvmDomain, DomainWithoutAgentSaysHowToAddOne) {
  try {
    DomainGuestMount::fetch("test", "test:///default", false, std::nullopt);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("domain 'test' has no guest agent that answers"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("org.qemu.guest_agent.0"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("vperf kvm list"), std::string::npos) << e.hint();
  }
}

TEST(KvmDomain, VmmPidNeedsTheDomainsMonitor) {
  guest::LibvirtConnection connection = connect_to_libvirt("test:///default", guest::LibvirtAccess::read_write, false);
  // The test driver has no QEMU: no vCPU threads, so no pid rather than an invented one.
  EXPECT_FALSE(connection.vmm_pid("test").ok());
  Result<pid_t> unknown = connection.vmm_pid("nosuch");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("no domain 'nosuch'"), std::string::npos) << unknown.error().message;
  try {
    domain_vmm_pid(connection, "nosuch");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.hint(), "vperf kvm list --connect test:///default shows the domains");
  }
}

TEST(KvmDomain, KvmStatTakesPidOrDomainNotBoth) {
  std::ostringstream out, err;
  KvmStatRecordOptions record;
  record.pids = "1";
  record.domain = "test";
  record.uri = "test:///default";
  try {
    run_kvm_stat_record(record, err);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "-p and --domain both name the VM");
    EXPECT_EQ(e.exit_code(), 2);
  }
  KvmStatReportOptions report;
  report.input = "/nonexistent";
  report.pids = "1";
  report.domain = "test";
  report.uri = "test:///default";
  try {
    run_kvm_stat_report(report, out, err);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
  }
  // Only --domain: the domain is looked up before anything is recorded or read.
  report.pids.clear();
  report.domain = "nosuch";
  try {
    run_kvm_stat_report(report, out, err);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no domain 'nosuch'"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), 1);
  }
}

using in_process::Outcome;
using in_process::run_cli;

TEST(KvmDomain, CommandLineMisuseIsAUsageError) {
  Outcome both = run_cli({"kvm", "--domain", "vm1", "--guestkallsyms", "/k", "report", "-i", "/nonexistent"});
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err,
            "vperf: error: --domain and --guestkallsyms/--guestmodules/--guestvmlinux/--guestmount both give the guest's "
            "symbols (hint: give one: --domain reads them through the domain's guest agent)\n");
  EXPECT_EQ(run_cli({"kvm", "--domain", "vm1", "--guestmount", "/m", "script", "-i", "/nonexistent"}).status, 2);

  Outcome record = run_cli({"kvm", "--domain", "vm1", "record", "-a"});
  EXPECT_EQ(record.status, 2);
  EXPECT_NE(record.err.find("hint: give it after the command: vperf kvm record --domain vm1"), std::string::npos) << record.err;
  Outcome stat = run_cli({"kvm", "--domain", "vm1", "stat", "report"});
  EXPECT_EQ(stat.status, 2);
  EXPECT_NE(stat.err.find("vperf kvm stat record --domain vm1"), std::string::npos) << stat.err;

  EXPECT_EQ(run_cli({"kvm", "--connect", "test:///default", "report", "-i", "/nonexistent"}).status, 2);
  Outcome connect = run_cli({"kvm", "stat", "report", "--connect", "test:///default"});
  EXPECT_EQ(connect.status, 2);
  EXPECT_EQ(connect.err, "vperf: error: --connect goes with --domain (hint: vperf kvm stat report --domain NAME --connect URI)\n");
  Outcome pid_and_domain = run_cli({"kvm", "stat", "record", "-p", "1", "--domain", "vm1", "--", "sleep", "1"});
  EXPECT_EQ(pid_and_domain.status, 2);
  EXPECT_EQ(pid_and_domain.err, "vperf: error: -p and --domain both name the VM (hint: give one of them)\n");
}

// Every command that takes --connect refuses a URI whose ext transport would run a program
// (as root), in one line, before libvirt sees it; --allow-unsafe-uri hands it over as given.
TEST(KvmDomain, UnsafeConnectUriIsRefusedByEveryCommandAndRunsNothing) {
  test::TempTree tree;
  const fs::path marker = tree.root() / "ran";
  const std::string uri = "qemu+ext:///system?command=" + test::marker_script(tree, "connect.sh", marker).string();
  const std::string expected = "vperf: error: libvirt URI '" + uri +
                               "' is refused: the ext transport runs the program its command= parameter names (hint: connect "
                               "with a plain URI (qemu:///system, qemu+ssh://HOST/system), or add --allow-unsafe-uri if you "
                               "wrote this one and trust what it runs and reads as this user)\n";
  const std::vector<std::vector<std::string>> commands = {
      {"kvm", "list", "--connect", uri},
      {"kvm", "list", "-c", uri, "--json"},
      {"kvm", "record", "--domain", "vm1", "--connect", uri, "--duration", "1", "-o", (tree.root() / "out.data").string()},
      {"kvm", "stat", "record", "--domain", "vm1", "--connect", uri, "-o", (tree.root() / "stat.data").string()},
      {"kvm", "stat", "report", "--domain", "vm1", "--connect", uri, "-i", "/nonexistent"},
      {"kvm", "stat", "live", "--domain", "vm1", "--connect", uri},
      {"kvm", "--domain", "vm1", "--connect", uri, "report", "-i", "/nonexistent"},
      {"kvm", "--domain", "vm1", "--connect", uri, "script", "-i", "/nonexistent"},
  };
  for (const std::vector<std::string>& command : commands) {
    Outcome r = run_cli(command);
    EXPECT_EQ(r.status, 2) << command[1] << " " << command[2];
    EXPECT_EQ(r.err, expected);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(marker)) << command[1] << " " << command[2] << " ran the URI's command";
  }
  std::vector<std::string> leftovers;
  for (const fs::directory_entry& e : fs::directory_iterator(tree.root())) leftovers.push_back(e.path().filename());
  EXPECT_EQ(leftovers, std::vector<std::string>{"connect.sh"});
  // Vouched for, the URI goes to libvirt as given, which runs its command.
  Outcome vouched = run_cli({"kvm", "list", "--connect", uri, "--allow-unsafe-uri"});
  EXPECT_EQ(vouched.status, 1);
  EXPECT_TRUE(fs::exists(marker));
}

TEST(KvmDomain, ReportOfAnUnknownDomainIsOneErrorLineAndLeavesNothing) {
  ScratchTmpdir tmp;
  for (const char* command : {"report", "script", "flamegraph", "annotate"}) {
    Outcome r = run_cli({"kvm", "--domain", "nosuch", "--connect", "test:///default", command, "-i", "/nonexistent"});
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_TRUE(r.err.starts_with("vperf: error: no domain 'nosuch' at test:///default")) << r.err;
    EXPECT_TRUE(r.err.ends_with("(hint: vperf kvm list --connect test:///default shows the domains)\n")) << r.err;
  }
  Outcome no_agent = run_cli({"kvm", "--domain", "test", "--connect", "test:///default", "report", "-i", "/nonexistent"});
  EXPECT_EQ(no_agent.status, 1);
  EXPECT_NE(no_agent.err.find("org.qemu.guest_agent.0"), std::string::npos) << no_agent.err;
  EXPECT_EQ(private_directories(tmp.dir()), 0);
}

}  // namespace
}  // namespace vperf::cli
