#pragma once
// A libvirt domain named on vperf kvm's command line (--domain NAME [--connect URI]) where a
// guest is meant:
//   kvm stat record|report|live --domain NAME   the domain's VMM pid, as -p would give it
//   kvm --domain NAME report|script|flamegraph|annotate
//                                               the guest kernel symbols of the domain's
//                                               current boot, through its guest agent, for the
//                                               samples of its VMM pid
// Every failure is a UserError with the fix: libvirt not reachable, no such domain (vperf kvm
// list shows them), no guest agent (the org.qemu.guest_agent.0 channel), a remote URI where
// a pid of this host is needed, a kallsyms with hidden addresses.
#include <sys/types.h>

#include <filesystem>
#include <string>

#include "guest/guest_agent.h"
#include "guest/libvirt_domain.h"

namespace vperf::cli {

guest::LibvirtConnection connect_to_libvirt(const std::string& uri);

// A guest's kallsyms and modules written as PROC/kallsyms and PROC/modules (--guestmount
// layout: DIR/<VMM pid>/proc), PROC created; a failure is a UserError with `hint`.
void write_guest_proc(const std::filesystem::path& proc, const std::string& kallsyms, const std::string& modules,
                      const std::string& hint);

// The pid of the domain's VMM (QEMU) on this host.
pid_t domain_vmm_pid(const guest::LibvirtConnection& connection, const std::string& domain);

// The guest symbols of one VMM in --guestmount layout, DIR/<VMM pid>/proc/{kallsyms,modules},
// in a private temporary directory (mkdtemp under $TMPDIR) that lives as long as this object:
// a report reads them there, and nothing is left behind when it ends.
class DomainGuestMount {
 public:
  // The domain's agent and VMM pid through libvirt, then from_agent.
  static DomainGuestMount fetch(const std::string& domain, const std::string& uri,
                                const std::filesystem::path& cache_root);
  // The guest's kallsyms and modules through `agent` (from the per-boot cache when it holds
  // them, guest/guest_symbol_cache.h) as the guest of `vmm_pid`; `domain` names it in messages.
  static DomainGuestMount from_agent(guest::GuestAgent& agent, pid_t vmm_pid, const std::string& domain,
                                     const std::filesystem::path& cache_root);

  DomainGuestMount(DomainGuestMount&& other) noexcept;
  DomainGuestMount& operator=(DomainGuestMount&&) = delete;
  DomainGuestMount(const DomainGuestMount&) = delete;
  DomainGuestMount& operator=(const DomainGuestMount&) = delete;
  ~DomainGuestMount();  // removes the directory

  const std::filesystem::path& directory() const { return directory_; }  // the --guestmount DIR
  pid_t vmm_pid() const { return vmm_pid_; }
  bool from_cache() const { return from_cache_; }

 private:
  DomainGuestMount(std::filesystem::path directory, pid_t vmm_pid, bool from_cache)
      : directory_(std::move(directory)), vmm_pid_(vmm_pid), from_cache_(from_cache) {}
  std::filesystem::path directory_;  // empty in a moved-from object
  pid_t vmm_pid_ = 0;
  bool from_cache_ = false;
};

}  // namespace vperf::cli
