#pragma once
// perf's build-id cache: a copy of each profiled binary kept under the build-id it had, so a
// recording can be read after the binary was rebuilt, moved or deleted. perf record fills it
// (every DSO with samples; every mapped one with --buildid-all), perf buildid-cache manages it,
// and vperf writes the layout perf 6.1 writes and reads, in DIR (default ~/.debug, or
// --buildid-dir):
//   DIR/<the file's absolute path>/<hex build-id>/elf     a hard link to the file, else a copy
//   DIR/.build-id/<hex[0:2]>/<hex[2:]>                     a symlink to ../../<path>/<hex build-id>
// The kernel's and modules' entries (perf keeps kallsyms and .ko copies there) are not written
// by vperf; they are listed when perf wrote them.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "symbols/build_id.h"

namespace vperf::symbols {

struct BuildIdCacheEntry {
  BuildId id;
  std::string path;  // the file it was taken from ("/usr/bin/xz", "[kernel.kallsyms]")
  bool operator==(const BuildIdCacheEntry&) const = default;
};

class BuildIdCache {
 public:
  explicit BuildIdCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // $HOME/.debug, as perf's default (/.debug without HOME).
  static std::filesystem::path default_dir();
  const std::filesystem::path& dir() const { return dir_; }

  // Adds `file` under its own build-id (read from its note). Returns the id; an Error when the
  // file cannot be read or has no build-id. Adding what is there already changes nothing.
  Result<BuildId> add(const std::filesystem::path& file) const;
  // Adds `file` under `id` (known already: perf record's BUILD_ID table). Returns whether it
  // was added (false: it was there).
  Result<bool> add(const std::filesystem::path& file, const BuildId& id) const;
  // Removes `file`'s entry for its current build-id (false: there was none).
  Result<bool> remove(const std::filesystem::path& file) const;
  // Removes every entry taken from `file`'s path, whatever its build-id; returns how many.
  Result<size_t> purge(const std::filesystem::path& file) const;
  // Removes every entry; returns how many.
  Result<size_t> purge_all() const;
  // Every entry (DIR/.build-id's links), by build-id, as perf buildid-cache -l lists them.
  std::vector<BuildIdCacheEntry> list() const;
  // The cached copy of the file with build-id `id`, if the cache has one.
  std::optional<std::filesystem::path> find(const BuildId& id) const;

 private:
  std::filesystem::path link_of(const BuildId& id) const;
  std::filesystem::path entry_dir(const std::string& path, const BuildId& id) const;
  Result<void> remove_entry(const BuildIdCacheEntry& entry) const;

  std::filesystem::path dir_;
};

}  // namespace vperf::symbols
