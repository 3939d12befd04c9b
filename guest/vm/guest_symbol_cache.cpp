#include "guest/guest_symbol_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/files.h"
#include "core/private_files.h"
#include "core/strings.h"
#include "symbols/kallsyms.h"

namespace vperf::guest {

namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Boot ids and identities become directory names: hex digits, letters and '-' only.
bool safe_key(const std::string& key) {
  if (key.empty() || key.size() > 96) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

}  // namespace

std::optional<GuestSymbolCacheLocation> default_guest_symbol_cache() { return user_cache_location("guest-symbols"); }

std::string libvirt_guest_identity(const std::string& domain_uuid) { return "libvirt-" + domain_uuid; }

Result<std::string> vmm_guest_identity(pid_t vmm_pid) {
  const std::string path = "/proc/" + std::to_string(vmm_pid) + "/stat";
  Result<std::string> stat = read_file(path);
  if (!stat) return stat.error();
  // "PID (COMM) STATE PPID ...": the command may hold spaces and ')', so fields count from its last ')'.
  const size_t comm_end = stat->rfind(')');
  if (comm_end == std::string::npos) return Error{path + " has no command field"};
  std::vector<std::string_view> fields = split(trim(std::string_view(*stat).substr(comm_end + 1)), ' ');
  constexpr size_t kStartTime = 22 - 3;  // field 22 (starttime), counted from field 3 (state)
  if (fields.size() <= kStartTime || !parse_u64(fields[kStartTime])) return Error{path + " has no start time"};
  return "vmm-" + std::to_string(vmm_pid) + "-" + std::string(fields[kStartTime]);
}

std::optional<std::string> cached_kallsyms_mismatch(const symbols::Kallsyms& kallsyms, const std::string& release,
                                                    MemoryView& live_kernel) {
  const std::optional<uint64_t> banner = kallsyms.address_of("linux_banner");
  if (!banner) return "it has no linux_banner to check against the guest's memory";
  const std::string expected = "Linux version " + (release.empty() ? std::string() : release + " ");
  std::string text(expected.size(), '\0');
  if (!live_kernel.read(*banner, {reinterpret_cast<uint8_t*>(text.data()), text.size()}) || text != expected)
    return "the guest's memory at its linux_banner does not read \"" + expected + "\"";
  const std::optional<symbols::RelocationReference>& base = kallsyms.relocation_reference();
  if (!base) return "it has neither _text nor _stext";
  std::vector<uint64_t> checked = {base->address};
  if (const std::optional<uint64_t> end = kallsyms.address_of("_etext")) {
    std::vector<uint64_t> text_starts;
    for (const symbols::Symbol& s : kallsyms.kernel().symbols())
      if (s.start > base->address && s.start < *end) text_starts.push_back(s.start);
    if (!text_starts.empty()) checked.insert(checked.end(), {text_starts[text_starts.size() / 3], text_starts[text_starts.size() * 2 / 3]});
  }
  for (uint64_t address : checked) {
    uint8_t code[16] = {};
    if (!live_kernel.read(address, code)) return "the guest's memory at " + hex(address) + " cannot be read";
    if (address == base->address && std::all_of(std::begin(code), std::end(code), [](uint8_t b) { return b == 0; }))
      return "the guest's memory at " + base->name + " is zero";
  }
  return std::nullopt;
}

Result<GuestSymbolFiles> read_guest_symbols(GuestAgent& agent, const GuestSymbolCache& cache, MemoryView* live_kernel) {
  Result<std::string> boot = agent.read_file("/proc/sys/kernel/random/boot_id");
  Result<std::string> modules = agent.read_file("/proc/modules");
  Result<std::string> release = agent.read_file("/proc/sys/kernel/osrelease");
  GuestSymbolFiles out;
  out.modules = modules ? *modules : std::string();  // a kernel without modules has no /proc/modules
  out.release = release ? trimmed(*release) : std::string();
  const std::string boot_id = boot ? trimmed(*boot) : std::string();
  const bool cacheable = cache.location && safe_key(cache.guest_identity) && safe_key(boot_id);
  const fs::path entry_below = cacheable ? cache.location->below / cache.guest_identity / boot_id : fs::path();
  // One line says why the cache was passed over: a directory that could not be read from
  // cannot be written to either, for the same reason.
  auto warn = [&](const std::string& what, const Error& why) {
    if (out.cache_warnings.empty()) out.cache_warnings.push_back("guest symbol cache " + what + ": " + why.describe());
  };

  if (cacheable && live_kernel != nullptr) {
    Result<PrivateDirectory> entry = PrivateDirectory::open(cache.location->base, entry_below, CreateMissing::no);
    Result<std::string> cached_modules = entry ? entry->read("modules") : Result<std::string>(entry.error());
    Result<std::string> cached_kallsyms = entry ? entry->read("kallsyms") : Result<std::string>(entry.error());
    if (cached_modules && cached_kallsyms && *cached_modules == out.modules) {
      Result<symbols::Kallsyms> parsed = symbols::Kallsyms::parse(*cached_kallsyms, "cached kallsyms");
      std::optional<std::string> mismatch =
          parsed ? cached_kallsyms_mismatch(*parsed, out.release, *live_kernel) : parsed.error().message;
      if (!mismatch) {
        out.kallsyms = std::move(cached_kallsyms).value();
        out.from_cache = true;
        return out;
      }
      warn("entry " + entry->path().string() + " not used", Error{*mismatch + "; read again from the guest"});
    } else {
      // A miss is silent; a directory or file that is not this user's alone is not.
      for (const Result<std::string>* r : {&cached_modules, &cached_kallsyms})
        if (!*r && r->error().errno_value != ENOENT) {
          warn("not used", r->error());
          break;
        }
    }
  }
  Result<std::string> kallsyms = agent.read_file("/proc/kallsyms");
  if (!kallsyms) return kallsyms.error();
  out.kallsyms = std::move(kallsyms).value();
  // Only a usable kallsyms is kept: one with hidden addresses must be read again once the
  // guest's kptr_restrict is fixed, within the same boot.
  if (!cacheable || !symbols::Kallsyms::parse(out.kallsyms, "guest kallsyms").ok()) return out;
  Result<PrivateDirectory> entry = PrivateDirectory::open(cache.location->base, entry_below, CreateMissing::yes);
  if (!entry) {
    warn("not written", entry.error());
    return out;
  }
  const std::string release_line = out.release + "\n";
  for (const auto& [name, text] : {std::pair<const char*, const std::string*>{"kallsyms", &out.kallsyms},
                                   {"release", &release_line}, {"modules", &out.modules}})
    if (Result<void> written = entry->replace(name, *text); !written) {
      warn("not written", written.error());
      break;
    }
  return out;
}

}  // namespace vperf::guest
