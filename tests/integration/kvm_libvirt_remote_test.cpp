// vperf kvm list and record --domain over a remote libvirt URI, for real: a test-owned sshd on
// 127.0.0.1 (its own host key, config and authorized key in a scratch directory; root by key
// only), and qemu+ssh://root@127.0.0.1:PORT/system, which runs virt-ssh-helper on the "remote"
// side to reach the same libvirtd. The ground truth is that daemon seen through its local URI:
// the same domain, state, id, vCPU threads and agent. A URI with a host part is remote even
// when the host is this one, so the VMM pid is unknown there ("-", JSON null), and recording is
// refused with one error line (the VMM's pid and threads are the remote host's).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/guest_rig.h"
#include "support/local_network.h"
#include "support/run_program.h"

extern char** environ;

namespace vperf {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool accepts_connections(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(s);
  return ok;
}

// The JSON entry of `name` in `vperf kvm list --json` output; null when absent.
boost::json::value domain_entry(const std::string& list_json, const std::string& name) {
  boost::system::error_code ec;
  boost::json::value all = boost::json::parse(list_json, ec);
  if (ec || !all.is_object() || !all.as_object().contains("domains")) return nullptr;
  for (const boost::json::value& d : all.as_object().at("domains").as_array())
    if (d.as_object().at("name").as_string() == name) return d;
  return nullptr;
}

// The whitespace-separated fields of `name`'s row in `vperf kvm list` (a running domain's
// state is one word): NAME STATE "VMM PID" "VCPU THREADS" AGENT.
std::vector<std::string> row_fields(const std::string& table, const std::string& name) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(name + " ")) continue;
    std::istringstream row(line);
    std::vector<std::string> fields;
    for (std::string field; row >> field;) fields.push_back(field);
    return fields;
  }
  return {};
}

class KvmLibvirtRemote : public ::testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(test::running_as_root(), "root (sshd and libvirt's system daemon)");
    VPERF_REQUIRE(!test::find_program("libvirtd").empty() && !test::find_program("virsh").empty(),
                  "libvirtd and virsh (libvirt-daemon-system, libvirt-clients)");
    VPERF_REQUIRE(!test::find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the real guest");
    VPERF_REQUIRE(fs::exists("/usr/sbin/sshd") && !test::find_program("ssh").empty() && !test::find_program("ssh-keygen").empty(),
                  "an sshd to reach libvirt through qemu+ssh:// (openssh-server, scripts/install-deps.sh)");
    start_sshd();
    if (HasFatalFailure() || IsSkipped()) return;
    start_libvirtd();
    if (HasFatalFailure()) return;
    // The ssh transport works before anything is compared through it.
    test::ProgramResult version = test::run_program({"virsh", "-c", uri_, "version"});
    ASSERT_EQ(version.exit_code, 0) << uri_ << ": " << version.err << "\nsshd log:\n" << read_text(scratch_.root() / "sshd.log");
    create_domain();
  }

  void TearDown() override {
    domain_.reset();
    daemons_.reset();
    if (sshd_ > 0) {
      ::kill(sshd_, SIGTERM);
      ::waitpid(sshd_, nullptr, 0);
    }
  }

  // sshd -D on a spare port of 127.0.0.1 with this test's host key and authorized key; skipped
  // (counted) when it cannot start here.
  void start_sshd() {
    const fs::path dir = scratch_.root();
    for (const char* key : {"host_key", "client_key"}) {
      test::ProgramResult made = test::run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (dir / key).string()});
      ASSERT_EQ(made.exit_code, 0) << made.err;
    }
    fs::copy_file(dir / "client_key.pub", dir / "authorized_keys");
    // The privilege separation directory that systemd's ssh.service would create.
    std::error_code ec;
    fs::create_directories("/run/sshd", ec);
    // ssh records every host key it accepts in ~/.ssh/known_hosts unless told otherwise; the
    // wrapper (libvirt's command= parameter names the ssh binary) keeps this test's throwaway
    // host key out of root's.
    std::ofstream(dir / "ssh") << "#!/bin/sh\nexec ssh -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null "
                                  "-o LogLevel=ERROR \"$@\"\n";
    fs::permissions(dir / "ssh", fs::perms::owner_all);
    for (int attempt = 0; attempt < 3 && sshd_ <= 0; ++attempt) {
      const int port = test::spare_port();
      std::ofstream(dir / "sshd_config") << "ListenAddress 127.0.0.1\nPort " << port << "\nHostKey " << (dir / "host_key").string()
                                         << "\nAuthorizedKeysFile " << (dir / "authorized_keys").string()
                                         << "\nPidFile none\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                                            "KbdInteractiveAuthentication no\nUsePAM no\n"
                                            // The scratch directory lies under the world-writable /tmp.
                                            "StrictModes no\n";
      const std::vector<std::string> argv = {"/usr/sbin/sshd", "-D", "-f", (dir / "sshd_config").string(), "-E", (dir / "sshd.log").string()};
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      pid_t pid = 0;
      if (::posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) break;
      for (int i = 0; i < 50; ++i) {
        if (accepts_connections(port)) {
          sshd_ = pid;
          port_ = port;
          break;
        }
        if (::waitpid(pid, nullptr, WNOHANG) == pid) break;  // it gave up (the port was taken meanwhile, ...)
        std::this_thread::sleep_for(100ms);
      }
      if (sshd_ <= 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
      }
    }
    VPERF_REQUIRE(sshd_ > 0, "an sshd that starts here (its log: " + read_text(dir / "sshd.log") + ")");
    // keyfile=, no_verify= and command= make vperf refuse the URI unless --allow-unsafe-uri.
    uri_ = "qemu+ssh://root@127.0.0.1:" + std::to_string(port_) + "/system?keyfile=" + (dir / "client_key").string() +
           "&no_verify=1&command=" + (dir / "ssh").string();
  }

  // No systemd here: the daemons are started by hand (and stopped by the fixture if it did).
  void start_libvirtd() {
    Result<std::unique_ptr<test::LibvirtDaemons>> daemons = test::LibvirtDaemons::ensure();
    ASSERT_TRUE(daemons.ok()) << daemons.error().describe();
    daemons_ = std::move(daemons).value();
  }

  // The transient TCG domain of kvm_libvirt_test.cpp: the test guest with the agent's channel.
  void create_domain() {
    Result<test::GuestRig> rig = test::guest_rig();
    ASSERT_TRUE(rig.ok()) << rig.error().describe();
    Result<std::unique_ptr<test::TransientDomain>> domain =
        test::TransientDomain::create(*rig, scratch_.root() / "guest", "vperf-remote-test-" + std::to_string(::getpid()));
    ASSERT_TRUE(domain.ok()) << domain.error().describe();
    domain_ = std::move(domain).value();
    name_ = domain_->name();
  }

  test::TempTree scratch_;
  pid_t sshd_ = 0;
  int port_ = 0;
  std::string uri_;
  std::string name_;
  std::unique_ptr<test::LibvirtDaemons> daemons_;  // declared before the domain: destroyed after it
  std::unique_ptr<test::TransientDomain> domain_;
};

TEST_F(KvmLibvirtRemote, ListOverSshShowsWhatTheLocalUriShowsButNoVmmPid) {
  test::ProgramResult local = test::run_vperf({"kvm", "list", "--json"});
  test::ProgramResult remote = test::run_vperf({"kvm", "list", "-c", uri_, "--allow-unsafe-uri", "--json"});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  boost::json::value here = domain_entry(local.out, name_);
  boost::json::value there = domain_entry(remote.out, name_);
  ASSERT_TRUE(here.is_object()) << local.out;
  ASSERT_TRUE(there.is_object()) << remote.out;
  EXPECT_EQ(boost::json::parse(remote.out).as_object().at("uri").as_string(), uri_);
  for (const char* key : {"name", "state", "id", "vcpu_threads", "agent"})
    EXPECT_EQ(here.as_object().at(key), there.as_object().at(key)) << key << "\nlocal: " << local.out << "\nremote: " << remote.out;
  EXPECT_EQ(here.as_object().at("state").as_string(), "running");
  EXPECT_EQ(here.as_object().at("vcpu_threads").as_array().size(), 2u);
  EXPECT_TRUE(here.as_object().at("agent").as_bool());
  // Locally the pid is libvirt's own record of it; remotely it is unknown, not this host's
  // process that happens to own the remote thread ids.
  EXPECT_EQ(boost::json::serialize(here.as_object().at("vmm_pid")), domain_->vmm_pid());
  EXPECT_TRUE(there.as_object().at("vmm_pid").is_null()) << remote.out;

  test::ProgramResult local_table = test::run_vperf({"kvm", "list"});
  test::ProgramResult remote_table = test::run_vperf({"kvm", "list", "-c", uri_, "--allow-unsafe-uri"});
  ASSERT_EQ(local_table.exit_code, 0) << local_table.err;
  ASSERT_EQ(remote_table.exit_code, 0) << remote_table.err;
  std::vector<std::string> expected = row_fields(local_table.out, name_);
  ASSERT_EQ(expected.size(), 5u) << local_table.out;
  EXPECT_EQ(expected[2], domain_->vmm_pid());
  expected[2] = "-";
  EXPECT_EQ(row_fields(remote_table.out, name_), expected) << remote_table.out;
}

TEST_F(KvmLibvirtRemote, RecordOverSshIsRefusedWithOneErrorLine) {
  const fs::path data = scratch_.root() / "perf.data.guest";
  test::ProgramResult rec =
      test::run_vperf({"kvm", "record", "--domain", name_, "--connect", uri_, "--allow-unsafe-uri", "-F", "100",
                       "--duration", "1", "-o", data.string()});
  EXPECT_EQ(rec.exit_code, 1) << rec.err;
  EXPECT_TRUE(rec.err.starts_with("vperf: error: ")) << rec.err;
  EXPECT_EQ(std::count(rec.err.begin(), rec.err.end(), '\n'), 1) << rec.err;
  EXPECT_NE(rec.err.find("another host"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("(hint: "), std::string::npos) << rec.err;
  EXPECT_FALSE(fs::exists(data)) << "nothing is written";
  EXPECT_FALSE(fs::exists(data.string() + ".guestmount"));
}

}  // namespace
}  // namespace vperf
