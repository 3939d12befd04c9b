#pragma once
// The guest kernel symbols read through a guest agent, cached on the host per guest boot: a
// guest's kallsyms moves with every boot (KASLR) and gains module symbols with every module
// load, so an entry is keyed by the guest's boot id (/proc/sys/kernel/random/boot_id, new at
// each boot, which also covers a new kernel release) and used only while the guest's
// /proc/modules is byte for byte the one it was stored with. A hit costs the agent two small
// reads instead of kallsyms (~4 MB, seconds over a TCG guest's virtio-serial port).
//
// Layout: ROOT/<boot id>/{kallsyms,modules,release}.
#include <filesystem>
#include <string>

#include "core/error.h"
#include "guest/guest_agent.h"

namespace vperf::guest {

struct GuestSymbolFiles {
  std::string kallsyms;
  std::string modules;
  std::string release;  // uname -r of the guest
  bool from_cache = false;
};

// $XDG_CACHE_HOME/vperf/guest-symbols, else ~/.cache/vperf/guest-symbols.
std::filesystem::path default_guest_symbol_cache();

// Reads through `agent`, from the cache when it holds this boot with these modules; stores
// what it read. A cache that cannot be written is not an error (the symbols are still returned).
Result<GuestSymbolFiles> read_guest_symbols(GuestAgent& agent, const std::filesystem::path& cache_root);

}  // namespace vperf::guest
