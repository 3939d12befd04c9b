#pragma once
// A libvirt domain where vperf kvm means a guest (--domain NAME):
//   kvm stat record|report|live --domain NAME   the domain's VMM pid, as -p would give it
//   kvm --domain NAME report|script|flamegraph|annotate
//                                               the guest kernel symbols of the domain's
//                                               current boot, through its guest agent, for the
//                                               samples of its VMM pid
// Every failure is an Error whose hint says what to do: no such domain (vperf kvm list shows
// them), no guest agent (the org.qemu.guest_agent.0 channel), a remote URI where a pid of this
// host is needed, a kallsyms with hidden addresses, an unwritable TMPDIR.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "guest/guest_agent.h"
#include "guest/guest_memory.h"
#include "guest/guest_symbol_cache.h"
#include "guest/libvirt_domain.h"

namespace vperf::guest {

// A guest's kallsyms and modules written as PROC/kallsyms and PROC/modules (--guestmount
// layout: DIR/<VMM pid>/proc), PROC created. The error names the file; its hint is the caller's.
Result<void> write_guest_proc(const std::filesystem::path& proc, const std::string& kallsyms, const std::string& modules);

// The pid of the domain's VMM (QEMU) on this host.
Result<pid_t> domain_vmm_pid(const LibvirtConnection& connection, const std::string& domain);

// The guest symbols of one VMM in --guestmount layout, DIR/<VMM pid>/proc/{kallsyms,modules},
// in a private temporary directory (mkdtemp under $TMPDIR) that lives as long as this object:
// a report reads them there, and nothing is left behind when it ends.
class DomainGuestMount {
 public:
  // The domain's agent, VMM pid, UUID (the cache's key) and kernel memory (what checks a
  // cached kallsyms) through `connection` (read-write: libvirt serves the agent and the
  // monitor on no other), then from_agent.
  static Result<DomainGuestMount> fetch(const LibvirtConnection& connection, const std::string& domain,
                                        const std::optional<GuestSymbolCacheLocation>& cache_location);
  // The guest's kallsyms and modules through `agent` (from the per-boot cache when it holds
  // them and `live_kernel` agrees, guest/guest_symbol_cache.h) as the guest of `vmm_pid`;
  // `domain` names it in messages.
  static Result<DomainGuestMount> from_agent(GuestAgent& agent, pid_t vmm_pid, const std::string& domain,
                                             const GuestSymbolCache& cache, MemoryView* live_kernel);

  DomainGuestMount(DomainGuestMount&& other) noexcept;
  DomainGuestMount& operator=(DomainGuestMount&&) = delete;
  DomainGuestMount(const DomainGuestMount&) = delete;
  DomainGuestMount& operator=(const DomainGuestMount&) = delete;
  ~DomainGuestMount();  // removes the directory

  const std::filesystem::path& directory() const { return directory_; }  // the --guestmount DIR
  pid_t vmm_pid() const { return vmm_pid_; }
  bool from_cache() const { return from_cache_; }
  // Why the symbol cache was not used or written (GuestSymbolFiles), to print as warnings.
  const std::vector<std::string>& cache_warnings() const { return cache_warnings_; }

 private:
  DomainGuestMount(std::filesystem::path directory, pid_t vmm_pid, bool from_cache)
      : directory_(std::move(directory)), vmm_pid_(vmm_pid), from_cache_(from_cache) {}
  std::filesystem::path directory_;  // empty in a moved-from object
  pid_t vmm_pid_ = 0;
  bool from_cache_ = false;
  std::vector<std::string> cache_warnings_;
};

}  // namespace vperf::guest
