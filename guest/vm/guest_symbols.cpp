#include "guest/guest_symbols.h"

#include <cerrno>
#include <charconv>
#include <system_error>

#include "symbols/kallsyms.h"

namespace vperf::guest {

std::string guest_kallsyms_hint() {
  return "in the guest, as root: sysctl kernel.kptr_restrict=0, then copy /proc/kallsyms again "
         "(cat /proc/kallsyms > kallsyms; the copy must be made by root)";
}

symbols::SymbolConfig guest_symbol_config(const std::filesystem::path& kallsyms, const std::filesystem::path& modules,
                                          const std::filesystem::path& vmlinux, const std::filesystem::path& root) {
  symbols::SymbolConfig config;
  config.kallsyms = kallsyms;
  config.modules = modules;
  config.vmlinux = vmlinux;
  config.symfs = root;
  // The guest's debuginfo and JIT maps are in its root, when there is one.
  config.debug_dirs = root.empty() ? std::vector<std::filesystem::path>{} : std::vector{root / "usr/lib/debug"};
  config.jit_map_dir = root.empty() ? std::filesystem::path() : root / "tmp";
  config.vdso = symbols::VdsoSource::Skip;
  return config;
}

Result<std::map<pid_t, std::filesystem::path>> guests_under_mount(const std::filesystem::path& mount) {
  std::error_code ec;
  std::filesystem::directory_iterator it(mount, ec);
  if (ec) return Error{"--guestmount " + mount.string() + ": " + ec.message(), ec.value()};
  std::map<pid_t, std::filesystem::path> out;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (err != std::errc() || end != name.data() + name.size() || pid <= 0 || !entry.is_directory(ec)) continue;
    out.emplace(pid, entry.path());
  }
  return out;
}

namespace {

// Loads what the machine's kernel maps need now, so a bad file is reported before any sample
// is read (a zeroed kallsyms would otherwise leave every guest sample unresolved).
Result<void> prepare(symbols::Machine& machine, const std::string& what) {
  if (!machine.config().kallsyms.empty()) {
    auto k = machine.kallsyms();
    if (!k) {
      if (k.error().errno_value == EACCES)
        return Error{what + ": " + machine.config().kallsyms.string() +
                         ": every kernel symbol address is 0 (the guest's kernel.kptr_restrict hid them)",
                     EACCES};
      return Error{what + ": " + k.error().describe(), k.error().errno_value};
    }
  }
  auto maps = machine.create_kernel_maps();
  if (!maps) return Error{what + ": " + maps.error().describe(), maps.error().errno_value};
  return {};
}

}  // namespace

Result<void> add_guest_machines(symbols::Machines& machines, const GuestSymbolSources& sources) {
  if (!sources.modules.empty() && !sources.has_default_guest())
    return Error{"--guestmodules needs --guestkallsyms (or --guestvmlinux): the module list has no symbols"};
  if (sources.has_default_guest()) {
    symbols::Machine& guest = machines.add_guest(
        symbols::Machines::kDefaultGuestPid, guest_symbol_config(sources.kallsyms, sources.modules, sources.vmlinux, {}));
    VPERF_TRY(prepare(guest, "the guest's symbols"));
  }
  if (!sources.mount.empty()) {
    auto guests = guests_under_mount(sources.mount);
    if (!guests) return guests.error();
    if (guests->empty())
      return Error{"--guestmount " + sources.mount.string() + " has no guest directories (expected " +
                   sources.mount.string() + "/<VMM pid>/proc/kallsyms)"};
    for (const auto& [pid, root] : *guests) {
      symbols::Machine& guest =
          machines.add_guest(pid, guest_symbol_config(root / "proc/kallsyms", root / "proc/modules", {}, root));
      VPERF_TRY(prepare(guest, "the guest of VMM pid " + std::to_string(pid)));
    }
  }
  return {};
}

}  // namespace vperf::guest
