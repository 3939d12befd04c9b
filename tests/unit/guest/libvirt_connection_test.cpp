// What vperf hands libvirt (guest/libvirt_domain.h): a --connect URI that would run a program,
// pick a socket, keys or certificates, or turn verification off is refused before libvirt
// sees it unless vouched for; a plain one connects, read-only where listing is all it is for.
#include "guest/libvirt_domain.h"

#include <gtest/gtest.h>

#include "support/fake_event_fs.h"
#include "support/marker_script.h"

namespace vperf::guest {
namespace {

namespace fs = std::filesystem;

TEST(LibvirtUri, ProgramsSocketsKeysAndUncheckedServersAreRefused) {
  for (const char* uri : {
           "qemu+ext:///system?command=/tmp/x",
           "QEMU+EXT:///system",
           "qemu+unix:///system?socket=/tmp/fake-libvirt-sock",
           "qemu+ssh://host/system?keyfile=/root/.ssh/id_ed25519",
           "qemu+ssh://host/system?command=/tmp/ssh",
           "qemu+ssh://host/system?netcat=/tmp/nc",
           "qemu+ssh://host/system?no_verify=1",
           "qemu+libssh://host/system?known_hosts=/tmp/hosts",
           "qemu+libssh://host/system?known_hosts_verify=ignore",
           "qemu+tls://host/system?pkipath=/tmp/pki",
           "qemu+ssh://host/system?mode=direct&Command=/tmp/x",   // case and position do not matter
           "qemu+ssh://host/system?mode=direct;command=/tmp/x",   // nor the other separator
           "qemu+ssh://host/system?%63ommand=/tmp/x",             // libvirt unescapes names
           "qemu+ssh://host/system?name=qemu%2Bext:///system%3Fcommand%3D/tmp/x",  // the remote side's URI
           "qemu:///embed?root=/tmp/embedded",
           "test:///etc/shadow",
           "qemu+ssh://-oProxyCommand=touch%20x/system",
       }) {
    std::optional<std::string> reason = unsafe_libvirt_uri_reason(uri);
    ASSERT_TRUE(reason.has_value()) << uri;
    EXPECT_TRUE(reason->starts_with("libvirt URI '" + std::string(uri) + "' is refused: ")) << *reason;
  }
  EXPECT_EQ(*unsafe_libvirt_uri_reason("qemu+ext:///system?command=/tmp/x"),
            "libvirt URI 'qemu+ext:///system?command=/tmp/x' is refused: the ext transport runs the program its command= "
            "parameter names");
  EXPECT_EQ(*unsafe_libvirt_uri_reason("qemu+unix:///system?socket=/tmp/s"),
            "libvirt URI 'qemu+unix:///system?socket=/tmp/s' is refused: its socket= parameter names the socket libvirt talks to");
}

TEST(LibvirtUri, PlainUrisPass) {
  for (const char* uri : {"qemu:///system", "qemu:///session", "qemu+ssh://host/system", "qemu+ssh://root@host:2222/system",
                          "qemu+ssh://host/system?mode=legacy&no_tty=1", "qemu+tls://10.0.0.2/system", "qemu+tcp://host/system",
                          "qemu+libssh2://host/system?sshauth=privkey", "test:///default", "lxc:///system"})
    EXPECT_EQ(unsafe_libvirt_uri_reason(uri), std::nullopt) << uri;
}

TEST(LibvirtConnection, ExtCommandIsNotRunUnlessVouchedFor) {
  test::TempTree tree;
  const fs::path marker = tree.root() / "ran";
  const std::string uri = "qemu+ext:///system?command=" + test::marker_script(tree, "connect.sh", marker).string();
  for (LibvirtAccess access : {LibvirtAccess::read_only, LibvirtAccess::read_write}) {
    Result<LibvirtConnection> refused = LibvirtConnection::open(uri, access, LibvirtUriTrust::checked);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, *unsafe_libvirt_uri_reason(uri));
    EXPECT_FALSE(fs::exists(marker));
  }
  // Vouched for, libvirt runs it (and then finds no libvirt protocol on its output): what the
  // check above keeps from happening.
  EXPECT_FALSE(LibvirtConnection::open(uri, LibvirtAccess::read_only, LibvirtUriTrust::vouched_for).ok());
  EXPECT_TRUE(fs::exists(marker));
}

TEST(LibvirtConnection, ReadOnlyListsButServesNoMonitor) {
  Result<LibvirtConnection> connection = LibvirtConnection::open("test:///default", LibvirtAccess::read_only, LibvirtUriTrust::checked);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  Result<std::vector<DomainSummary>> domains = connection->domains();
  ASSERT_TRUE(domains.ok()) << domains.error().message;
  ASSERT_EQ(domains->size(), 1u);
  EXPECT_EQ(domains->front().name, "test");
  EXPECT_EQ(domains->front().state, "running");
  Result<std::string> uuid = connection->uuid("test");
  ASSERT_TRUE(uuid.ok()) << uuid.error().message;
  EXPECT_EQ(uuid->size(), 36u);
  // libvirt itself refuses the monitor on this connection: it is read-only.
  Result<std::unique_ptr<VmMonitor>> monitor = connection->monitor("test");
  ASSERT_TRUE(monitor.ok());
  Result<boost::json::value> answer = (*monitor)->qmp("query-status", {});
  ASSERT_FALSE(answer.ok());
  EXPECT_NE(answer.error().message.find("read only"), std::string::npos) << answer.error().message;
}

}  // namespace
}  // namespace vperf::guest
