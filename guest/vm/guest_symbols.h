#pragma once
// Where the guests' kernel symbols come from, and the guest machines made from them: perf kvm's
// --guestkallsyms/--guestmodules/--guestvmlinux (the default guest) and --guestmount (one guest
// per VMM pid), as vperf's session machines (symbols::Machines).
//
//   default guest   any VMM pid without a machine of its own (perf's DEFAULT_GUEST_KERNEL_ID,
//                   pid 0): kallsyms + modules copied from the guest, or its vmlinux.
//   --guestmount D  D/<pid>/proc/kallsyms and D/<pid>/proc/modules for the guest run by VMM
//                   process <pid>, and D/<pid> as that guest's root for its user-space files.
//                   perf 6.1 puts every such guest into the default machine; here each VMM's
//                   samples resolve against its own guest.
//
// Each guest's kernel maps are made up front from its kallsyms and modules, so guest samples
// resolve without the guest kernel MMAP records perf kvm record writes (perf needs them); when
// a file has them, they relocate the symbols (KASLR) as for the host.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>

#include "core/error.h"
#include "symbols/machines.h"

namespace vperf::guest {

struct GuestSymbolSources {
  std::filesystem::path kallsyms;  // the default guest's /proc/kallsyms, copied out
  std::filesystem::path modules;   // the default guest's /proc/modules
  std::filesystem::path vmlinux;   // or its vmlinux (ELF with .symtab)
  std::filesystem::path mount;     // DIR with one <pid>/ per guest

  bool has_default_guest() const { return !kallsyms.empty() || !vmlinux.empty(); }
  bool empty() const { return !has_default_guest() && mount.empty() && modules.empty(); }
};

// The symbol configuration of one guest: its kallsyms/modules/vmlinux, its root as symfs, no
// vdso of this machine (the guest's is not this process's).
symbols::SymbolConfig guest_symbol_config(const std::filesystem::path& kallsyms, const std::filesystem::path& modules,
                                          const std::filesystem::path& vmlinux, const std::filesystem::path& root);

// The guests under a --guestmount directory: VMM pid -> its directory (numeric names only).
Result<std::map<pid_t, std::filesystem::path>> guests_under_mount(const std::filesystem::path& mount);

// Adds the default guest and the mounted guests to `machines` and makes their kernel maps.
// Errors name the file and say what to do: unreadable files, a kallsyms whose addresses are
// all 0 (kptr_restrict in the guest), --guestmodules without --guestkallsyms.
Result<void> add_guest_machines(symbols::Machines& machines, const GuestSymbolSources& sources);

// The fix for a guest kallsyms with hidden addresses: it has to be copied again.
std::string guest_kallsyms_hint();

}  // namespace vperf::guest
