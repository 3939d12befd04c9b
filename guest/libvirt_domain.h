#pragma once
// libvirt's view of VMs (virConnectOpen URI: qemu:///system by default, qemu+ssh://host/system
// for another host, test:///default for libvirt's in-process test driver): the domains, and for
// one domain its QEMU monitor (virDomainQemuMonitorCommand) and guest agent
// (virDomainQemuAgentCommand) as vperf's VmMonitor and GuestAgent, so everything that works on a
// QMP socket works on a domain, here or on another host.
#include <libvirt/libvirt.h>

#include <memory>
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

class LibvirtConnection {
 public:
  static Result<LibvirtConnection> open(const std::string& uri);
  LibvirtConnection(LibvirtConnection&& other) noexcept;
  LibvirtConnection& operator=(LibvirtConnection&&) = delete;
  LibvirtConnection(const LibvirtConnection&) = delete;
  LibvirtConnection& operator=(const LibvirtConnection&) = delete;
  ~LibvirtConnection();

  const std::string& uri() const { return uri_; }
  Result<std::vector<DomainSummary>> domains() const;
  // The domain's monitor and agent; each keeps its own reference to the domain.
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

// Whether a libvirt URI names a host ("qemu+ssh://host2/system"): its domains run there.
bool libvirt_uri_is_remote(std::string_view uri);

// libvirt's last error as one line ("Domain not found: no domain with matching name 'x'").
std::string libvirt_error();

}  // namespace vperf::guest
