#pragma once
// libvirt's view of VMs (virConnectOpen URI: qemu:///system by default, qemu+ssh://host/system
// for another host, test:///default for libvirt's in-process test driver): the domains, and for
// one domain its QEMU monitor (virDomainQemuMonitorCommand) and guest agent
// (virDomainQemuAgentCommand) as vperf's VmMonitor and GuestAgent, so everything that works on a
// QMP socket works on a domain, here or on another host.
//
// A URI is code and files to libvirt: its ext transport runs the program of command=, other
// parameters pick the socket, the ssh key, the certificates or turn verification off, and
// vperf runs as root. So a URI is checked before libvirt sees it (unsafe_libvirt_uri_reason)
// unless the user vouches for it (--allow-unsafe-uri). A connection is read-only unless the
// caller needs the domain's QEMU monitor or guest agent: libvirt refuses both on read-only
// connections, as they can do anything to the domain.
#include <libvirt/libvirt.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "guest/guest_agent.h"
#include "guest/vm_monitor.h"

namespace vperf::guest {

inline constexpr const char* kDefaultLibvirtUri = "qemu:///system";

struct DomainSummary {
  std::string name;
  std::string state;  // "running", "paused", "shut off", ... (virsh's words)
  int id = -1;        // -1 when not running
};

// Read-only suffices to list and look up domains; the monitor and the agent need read-write.
enum class LibvirtAccess { read_only, read_write };
// Whether open() checks the URI first (checked), or the user passed --allow-unsafe-uri.
enum class LibvirtUriTrust { checked, vouched_for };

class LibvirtConnection {
 public:
  // A URI that unsafe_libvirt_uri_reason refuses is an Error without reaching libvirt, unless vouched for.
  static Result<LibvirtConnection> open(const std::string& uri, LibvirtAccess access, LibvirtUriTrust trust);
  LibvirtConnection(LibvirtConnection&& other) noexcept;
  LibvirtConnection& operator=(LibvirtConnection&&) = delete;
  LibvirtConnection(const LibvirtConnection&) = delete;
  LibvirtConnection& operator=(const LibvirtConnection&) = delete;
  ~LibvirtConnection();

  const std::string& uri() const { return uri_; }
  Result<std::vector<DomainSummary>> domains() const;
  // The domain's UUID as libvirt holds it ("4dea22b3-1d52-d8f3-2516-782e98ab3fa0"): chosen by
  // the host, so no guest can claim another's.
  Result<std::string> uuid(const std::string& domain) const;
  // The domain's monitor and agent (read-write connections only); each keeps its own reference to the domain.
  Result<std::unique_ptr<VmMonitor>> monitor(const std::string& domain) const;
  Result<std::unique_ptr<GuestAgent>> agent(const std::string& domain) const;
  // The domain's VMM (QEMU) process on this host: the thread group of its vCPU threads (QMP
  // query-cpus-fast), the pid libvirt keeps in /run/libvirt/qemu/NAME.pid for qemu:///system,
  // found the same way for qemu:///session. An Error for a domain that does not exist or does
  // not run, and for a remote URI: that VMM is a process of another host, and this host's
  // /proc would name an unrelated one.
  Result<pid_t> vmm_pid(const std::string& domain) const;

 private:
  LibvirtConnection(virConnectPtr connection, std::string uri) : connection_(connection), uri_(std::move(uri)) {}
  Result<virDomainPtr> lookup(const std::string& domain) const;
  virConnectPtr connection_ = nullptr;
  std::string uri_;
};

// Why handing `uri` to libvirt could run a program, read or trust files, or connect where the
// URI says (the ext transport; command=, socket=, netcat=, keyfile=, pkipath=, known_hosts=,
// no_verify=, ...: every query parameter but name=, mode=, proxy=, no_tty=, sshauth= and
// tls_priority=; a test driver file other than test:///default; an ssh host that would be an
// option); nullopt for a URI libvirt only connects through (qemu:///system,
// qemu+ssh://host/system, test:///default).
std::optional<std::string> unsafe_libvirt_uri_reason(std::string_view uri);

// Whether a libvirt URI names a host ("qemu+ssh://host2/system"): its domains run there.
bool libvirt_uri_is_remote(std::string_view uri);

// libvirt's last error as one line ("Domain not found: no domain with matching name 'x'").
std::string libvirt_error();

}  // namespace vperf::guest
