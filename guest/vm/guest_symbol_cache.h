#pragma once
// The guest kernel symbols read through a guest agent, cached on the host per guest boot: a
// guest's kallsyms moves with every boot (KASLR) and gains module symbols with every module
// load. A hit costs the agent two small reads instead of kallsyms (~4 MB, seconds over a TCG
// guest's virtio-serial port).
//
// Nothing a guest says picks another guest's entry, and nothing another user can write is
// read: an entry is keyed first by who the guest is as the host knows it (its libvirt UUID, or
// its VMM's pid and start time), then by the boot id the guest reports
// (/proc/sys/kernel/random/boot_id, new at each boot); the cache directory and its files are
// this user's alone (core/private_files.h). An entry is used only while the guest's
// /proc/modules is byte for byte the one it was stored with, and only after a few live reads
// of the guest's kernel memory agree with it (cached_kallsyms_mismatch); with no way to read
// that memory, the symbols are read again.
//
// Layout: ROOT/<guest identity>/<boot id>/{kallsyms,modules,release}.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/private_files.h"
#include "guest/guest_agent.h"
#include "guest/guest_memory.h"

namespace vperf::symbols {
class Kallsyms;
}

namespace vperf::guest {

// Where the cache lives: `below` (created 0700) under `base`, a directory of this user's.
using GuestSymbolCacheLocation = CacheLocation;

// user_cache_location("guest-symbols"): $XDG_CACHE_HOME/vperf/guest-symbols, else
// $HOME/.cache/vperf/guest-symbols (sudo may keep the invoking user's HOME, which is then not
// this effective user's and so not used), else /var/cache/vperf/guest-symbols for root.
std::optional<GuestSymbolCacheLocation> default_guest_symbol_cache();

// The cache of one guest: where, and who the guest is; no location or no identity: no cache.
struct GuestSymbolCache {
  std::optional<GuestSymbolCacheLocation> location;
  std::string guest_identity;
};

// Who a guest is as the host knows it: "libvirt-<domain UUID>", or "vmm-<pid>-<start time>"
// for a VMM of this host reached by its sockets (the start time from /proc/PID/stat, so a
// later process with the same pid is another guest).
std::string libvirt_guest_identity(const std::string& domain_uuid);
Result<std::string> vmm_guest_identity(pid_t vmm_pid);

struct GuestSymbolFiles {
  std::string kallsyms;
  std::string modules;
  std::string release;  // uname -r of the guest
  bool from_cache = false;
  // Why the cache was not used or not written, one line each ("... is a symbolic link").
  std::vector<std::string> cache_warnings;
};

// Why `kallsyms` is not the kernel in `live_kernel`; nullopt when a few reads agree with it:
// linux_banner reads "Linux version RELEASE " (RELEASE: the guest's uname -r, when given), and
// the first bytes of _text (else _stext) and of two text symbols between it and _etext can be
// read, _text's not all zero. A kallsyms of another boot or another guest has other
// addresses (KASLR) and fails the first read.
std::optional<std::string> cached_kallsyms_mismatch(const symbols::Kallsyms& kallsyms, const std::string& release,
                                                    MemoryView& live_kernel);

// Reads through `agent`, from the cache when it holds this guest's boot with these modules
// and `live_kernel` confirms it (no live_kernel: never from the cache); stores what it read.
// A cache that cannot be used or written is not an error: the symbols are still returned,
// with cache_warnings saying why.
Result<GuestSymbolFiles> read_guest_symbols(GuestAgent& agent, const GuestSymbolCache& cache, MemoryView* live_kernel);

}  // namespace vperf::guest
