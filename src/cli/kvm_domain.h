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
// a pid of this host is needed, a kallsyms with hidden addresses; a URI that could run a
// program or pick files (guest/libvirt_domain.h) is a usage error unless --allow-unsafe-uri.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "guest/guest_agent.h"
#include "guest/guest_memory.h"
#include "guest/guest_symbol_cache.h"
#include "guest/libvirt_domain.h"

namespace vperf::cli {

// `names` ("--connect", "-c,--connect") for the URI and --allow-unsafe-uri on `sub`; `when`
// says what the URI goes with ("With --domain: ").
void add_connect_options(CLI::App& sub, const std::string& names, std::string& uri, bool& allow_unsafe_uri,
                         const std::string& when);

// The connection to `uri`, read-only unless the caller needs the domain's monitor or agent; a
// URI unsafe_libvirt_uri_reason refuses is a usage error unless `allow_unsafe_uri`.
guest::LibvirtConnection connect_to_libvirt(const std::string& uri, guest::LibvirtAccess access, bool allow_unsafe_uri);

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
  // The domain's agent, VMM pid, UUID (the cache's key) and kernel memory (what checks a
  // cached kallsyms) through libvirt, then from_agent.
  static DomainGuestMount fetch(const std::string& domain, const std::string& uri, bool allow_unsafe_uri,
                                const std::optional<guest::GuestSymbolCacheLocation>& cache_location);
  // The guest's kallsyms and modules through `agent` (from the per-boot cache when it holds
  // them and `live_kernel` agrees, guest/guest_symbol_cache.h) as the guest of `vmm_pid`;
  // `domain` names it in messages.
  static DomainGuestMount from_agent(guest::GuestAgent& agent, pid_t vmm_pid, const std::string& domain,
                                     const guest::GuestSymbolCache& cache, guest::MemoryView* live_kernel);

  DomainGuestMount(DomainGuestMount&& other) noexcept;
  DomainGuestMount& operator=(DomainGuestMount&&) = delete;
  DomainGuestMount(const DomainGuestMount&) = delete;
  DomainGuestMount& operator=(const DomainGuestMount&) = delete;
  ~DomainGuestMount();  // removes the directory

  const std::filesystem::path& directory() const { return directory_; }  // the --guestmount DIR
  pid_t vmm_pid() const { return vmm_pid_; }
  bool from_cache() const { return from_cache_; }
  // Why the symbol cache was not used or written (guest::GuestSymbolFiles), to print as warnings.
  const std::vector<std::string>& cache_warnings() const { return cache_warnings_; }

 private:
  DomainGuestMount(std::filesystem::path directory, pid_t vmm_pid, bool from_cache)
      : directory_(std::move(directory)), vmm_pid_(vmm_pid), from_cache_(from_cache) {}
  std::filesystem::path directory_;  // empty in a moved-from object
  pid_t vmm_pid_ = 0;
  bool from_cache_ = false;
  std::vector<std::string> cache_warnings_;
};

}  // namespace vperf::cli
