#pragma once
// Directories and files vperf keeps between runs (the guest and kernel symbol caches), which it reads back
// as root and trusts: so only this user may have written them. Each directory below a trusted
// base is created 0700, each file 0600; none is reached through a symbolic link (every step is
// an openat with O_NOFOLLOW from the one before, so a path swapped meanwhile is not followed),
// and one that another user owns, or that group or others may write, is refused by name.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/file_mapping.h"
#include "core/scoped_fd.h"

namespace vperf {

enum class CreateMissing { no, yes };

// Where one of vperf's caches lives: `below` (each directory created 0700) under `base`, a
// directory of this user's.
struct CacheLocation {
  std::filesystem::path base;
  std::filesystem::path below;
  std::filesystem::path path() const { return base / below; }
};

// vperf's cache `name` for this user: $XDG_CACHE_HOME/vperf/NAME, else $HOME/.cache/vperf/NAME,
// each only when the variable names an absolute directory of this user's that group and others
// cannot write (so never /tmp, even for root); else /var/cache/vperf/NAME for root; else none.
std::optional<CacheLocation> user_cache_location(std::string_view name);

class PrivateDirectory {
 public:
  // base/below: `base` (followed if a symbolic link: $HOME often is one) and each directory of
  // `below` must be owned by this effective user and not writable by group or others; the
  // ones of `below` are created when missing if `create` says so. An Error names the first
  // that is not as it should be ("/root/.cache/vperf is a symbolic link"), or is missing
  // (errno ENOENT).
  static Result<PrivateDirectory> open(const std::filesystem::path& base, const std::filesystem::path& below,
                                       CreateMissing create);

  const std::filesystem::path& path() const { return path_; }
  // The file `name` here: a regular file with the same owner and mode rules, at most
  // kMaxWholeFileBytes. ENOENT when there is none.
  Result<std::string> read(const std::string& name) const;
  // The same file mapped read-only (no copy, and its pages are the page cache's): for a large
  // file read once, such as the kernel symbol cache. replace() never changes a file in place,
  // so a mapped file keeps its bytes.
  Result<FileMapping> map(const std::string& name) const;
  // Writes `text` to a new temporary file here and renames it over `name`: a reader never sees
  // half a file, and whatever was at `name` (a symbolic link too) is replaced, not followed.
  Result<void> replace(const std::string& name, std::string_view text) const;
  // Removes the file `name` here; one that is not there is no error.
  Result<void> remove(const std::string& name) const;

 private:
  PrivateDirectory(ScopedFd fd, std::filesystem::path path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Result<PrivateDirectory> subdirectory(const std::string& name, CreateMissing create) const;
  // `name` here opened for reading, once its owner and mode pass the rules above.
  Result<ScopedFd> open_file(const std::string& name) const;
  ScopedFd fd_;
  std::filesystem::path path_;
};

}  // namespace vperf
