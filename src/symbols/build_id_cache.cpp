#include "symbols/build_id_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "symbols/elf_file.h"

namespace vperf::symbols {

namespace fs = std::filesystem;

namespace {

Error fs_error(const std::string& what, const std::error_code& ec) { return Error{what + ": " + ec.message(), ec.value()}; }

// The path an entry's link names: "../../<path>/<hex>" -> "/<path>" (perf's origname).
std::optional<std::string> origin_of(const std::string& target, const std::string& hex) {
  constexpr std::string_view kUp = "../..";
  const std::string suffix = "/" + hex;
  if (!target.starts_with(kUp) || !target.ends_with(suffix) || target.size() <= kUp.size() + suffix.size()) return std::nullopt;
  std::string origin = target.substr(kUp.size(), target.size() - kUp.size() - suffix.size());
  if (origin.starts_with("/[")) origin.erase(0, 1);  // perf's "[kernel.kallsyms]", "[vdso]"
  return origin;
}

}  // namespace

fs::path BuildIdCache::default_dir() {
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : "") / ".debug";
}

fs::path BuildIdCache::link_of(const BuildId& id) const {
  const std::string hex = id.hex();
  return dir_ / ".build-id" / hex.substr(0, 2) / hex.substr(2);
}

fs::path BuildIdCache::entry_dir(const std::string& path, const BuildId& id) const {
  return dir_ / fs::path(path).relative_path() / id.hex();  // "[kernel.kallsyms]" is relative already
}

Result<BuildId> BuildIdCache::add(const fs::path& file) const {
  Result<ElfFile> elf = ElfFile::open(file);
  if (!elf) return elf.error();
  std::optional<BuildId> id = elf->build_id();
  if (!id || id->empty()) return Error{file.string() + " has no build-id (NT_GNU_BUILD_ID note)", 0, "link it with -Wl,--build-id"};
  VPERF_TRY(add(file, *id));
  return *id;
}

Result<bool> BuildIdCache::add(const fs::path& file, const BuildId& id) const {
  if (id.empty() || id.hex().size() < 3) return Error{"an empty build-id for " + file.string()};
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  if (ec) return fs_error("cannot add " + file.string() + " to the build-id cache", ec);
  if (!fs::is_regular_file(real, ec)) return Error{real.string() + " is not a regular file"};
  const fs::path entry = entry_dir(real.string(), id);
  const fs::path elf = entry / "elf";
  const fs::path link = link_of(id);
  bool added = false;
  if (!fs::exists(elf, ec)) {
    fs::create_directories(entry, ec);
    if (ec) return fs_error("cannot create " + entry.string(), ec);
    // A hard link costs nothing; across file systems, a copy (its mode kept: perf's copyfile).
    if (::link(real.c_str(), elf.c_str()) != 0) {
      // Copied beside, then renamed: a copy cut short (a full disk) never stands as the file.
      const fs::path part = entry / ("elf.vperf-" + std::to_string(::getpid()));
      fs::copy_file(real, part, fs::copy_options::overwrite_existing, ec);
      if (!ec) fs::rename(part, elf, ec);
      if (ec) {
        std::error_code ignored;
        fs::remove(part, ignored);
        return fs_error("cannot copy " + real.string() + " into the build-id cache", ec);
      }
    }
    added = true;
  }
  if (!fs::is_symlink(link, ec)) {
    fs::create_directories(link.parent_path(), ec);
    if (ec) return fs_error("cannot create " + link.parent_path().string(), ec);
    fs::create_symlink(fs::path("../..") / real.relative_path() / id.hex(), link, ec);
    if (ec) return fs_error("cannot link " + link.string(), ec);
    added = true;
  }
  return added;
}

std::vector<BuildIdCacheEntry> BuildIdCache::list() const {
  std::vector<BuildIdCacheEntry> out;
  std::error_code ec;
  for (const fs::directory_entry& prefix : fs::directory_iterator(dir_ / ".build-id", ec)) {
    const std::string head = prefix.path().filename().string();
    if (head.size() != 2) continue;
    std::error_code inner;
    for (const fs::directory_entry& link : fs::directory_iterator(prefix.path(), inner)) {
      std::error_code read;
      if (!link.is_symlink(read)) continue;
      const std::string hex = head + link.path().filename().string();
      std::optional<BuildId> id = BuildId::from_hex(hex);
      const fs::path target = fs::read_symlink(link.path(), read);
      if (!id || read) continue;
      if (std::optional<std::string> origin = origin_of(target.string(), hex)) out.push_back({*id, *origin});
    }
  }
  std::sort(out.begin(), out.end(), [](const BuildIdCacheEntry& a, const BuildIdCacheEntry& b) { return a.id.hex() < b.id.hex(); });
  return out;
}

std::optional<fs::path> BuildIdCache::find(const BuildId& id) const {
  for (const BuildIdCacheEntry& entry : list())
    if (entry.id == id) {
      const fs::path elf = entry_dir(entry.path, id) / "elf";
      std::error_code ec;
      if (fs::is_regular_file(elf, ec)) return elf;
    }
  return std::nullopt;
}

Result<void> BuildIdCache::remove_entry(const BuildIdCacheEntry& entry) const {
  std::error_code ec;
  fs::remove_all(entry_dir(entry.path, entry.id), ec);
  if (ec) return fs_error("cannot remove " + entry_dir(entry.path, entry.id).string(), ec);
  fs::remove(link_of(entry.id), ec);
  if (ec) return fs_error("cannot remove " + link_of(entry.id).string(), ec);
  return {};
}

Result<bool> BuildIdCache::remove(const fs::path& file) const {
  Result<ElfFile> elf = ElfFile::open(file);
  if (!elf) return elf.error();
  std::optional<BuildId> id = elf->build_id();
  if (!id || id->empty()) return Error{file.string() + " has no build-id (NT_GNU_BUILD_ID note)"};
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  if (ec) return fs_error("cannot remove " + file.string() + " from the build-id cache", ec);
  const BuildIdCacheEntry entry{*id, real.string()};
  const std::vector<BuildIdCacheEntry> all = list();
  if (std::find(all.begin(), all.end(), entry) == all.end()) return false;
  VPERF_TRY(remove_entry(entry));
  return true;
}

Result<size_t> BuildIdCache::purge(const fs::path& file) const {
  std::error_code ec;
  // "[kernel.kallsyms]" and "[vdso]" are names, not paths.
  const std::string real = file.string().starts_with("[") ? file.string() : fs::weakly_canonical(fs::absolute(file, ec), ec).string();
  size_t removed = 0;
  for (const BuildIdCacheEntry& entry : list())
    if (entry.path == real) {
      VPERF_TRY(remove_entry(entry));
      ++removed;
    }
  return removed;
}

Result<size_t> BuildIdCache::purge_all() const {
  size_t removed = 0;
  for (const BuildIdCacheEntry& entry : list()) {
    VPERF_TRY(remove_entry(entry));
    ++removed;
  }
  return removed;
}

}  // namespace vperf::symbols
