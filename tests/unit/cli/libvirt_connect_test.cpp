// --domain NAME and --connect URI on vperf kvm's command lines: misuse, unsafe URIs and unknown
// domains are one error line each and leave nothing behind (libvirt's in-process test driver,
// test:///default; the lookups themselves are tests/unit/guest/domain_guest_mount_test.cpp).
#include "cli/libvirt_connect.h"

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
#include "support/scratch_tmpdir.h"

#include "unit/cli/run_cli.h"

namespace vperf::cli {
namespace {

namespace fs = std::filesystem;

using test::private_directories;
using test::ScratchTmpdir;

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
