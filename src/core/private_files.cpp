#include "core/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <random>

#include "core/files.h"

namespace vperf {

namespace fs = std::filesystem;

namespace {

// Why what `fd` refers to (shown as `path`) is not this user's alone; empty when it is.
std::string ownership_problem(int fd, const fs::path& path, mode_t kind) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "cannot stat " + path.string();
  if ((st.st_mode & S_IFMT) != kind) return path.string() + (kind == S_IFDIR ? " is not a directory" : " is not a regular file");
  if (st.st_uid != ::geteuid())
    return path.string() + " belongs to uid " + std::to_string(st.st_uid) + ", not to uid " + std::to_string(::geteuid());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return path.string() + " is writable by group or others";
  return {};
}

// The Error for an openat(O_NOFOLLOW) of `name` in `dir` that failed with errno.
Error open_error(int dir, const std::string& name, const fs::path& path) {
  const int err = errno;
  struct stat st {};
  if ((err == ELOOP || err == ENOTDIR) && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    return Error{path.string() + " is a symbolic link"};
  return Error::from_errno("open " + path.string(), err);
}

// The directory an environment variable names, when it is absolute, this user's and not
// writable by group or others.
std::optional<fs::path> own_directory(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr || *value != '/') return std::nullopt;
  struct stat st {};
  if (::stat(value, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return std::nullopt;
  return fs::path(value);
}

}  // namespace

std::optional<CacheLocation> user_cache_location(std::string_view name) {
  if (std::optional<fs::path> xdg = own_directory("XDG_CACHE_HOME")) return CacheLocation{*xdg, fs::path("vperf") / name};
  if (std::optional<fs::path> home = own_directory("HOME")) return CacheLocation{*home, fs::path(".cache/vperf") / name};
  if (::geteuid() == 0) return CacheLocation{"/var/cache", fs::path("vperf") / name};
  return std::nullopt;
}

Result<PrivateDirectory> PrivateDirectory::open(const fs::path& base, const fs::path& below, CreateMissing create) {
  ScopedFd fd(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Error::from_errno("open " + base.string());
  if (std::string problem = ownership_problem(fd.get(), base, S_IFDIR); !problem.empty()) return Error{problem};
  PrivateDirectory dir(std::move(fd), base);
  for (const fs::path& part : below) {
    Result<PrivateDirectory> sub = dir.subdirectory(part.string(), create);
    if (!sub) return sub.error();
    dir = std::move(sub).value();
  }
  return dir;
}

Result<PrivateDirectory> PrivateDirectory::subdirectory(const std::string& name, CreateMissing create) const {
  const fs::path path = path_ / name;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return Error{path.string() + " is not a plain directory name"};
  if (create == CreateMissing::yes && ::mkdirat(fd_.get(), name.c_str(), 0700) != 0 && errno != EEXIST)
    return Error::from_errno("create " + path.string());
  ScopedFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return open_error(fd_.get(), name, path);
  if (std::string problem = ownership_problem(fd.get(), path, S_IFDIR); !problem.empty()) return Error{problem};
  return PrivateDirectory(std::move(fd), path);
}

Result<ScopedFd> PrivateDirectory::open_file(const std::string& name) const {
  const fs::path path = path_ / name;
  // O_NONBLOCK: a FIFO here would otherwise hang the open.
  ScopedFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return open_error(fd_.get(), name, path);
  if (std::string problem = ownership_problem(fd.get(), path, S_IFREG); !problem.empty()) return Error{problem};
  return fd;
}

Result<FileMapping> PrivateDirectory::map(const std::string& name) const {
  VPERF_TRY(ScopedFd fd, open_file(name));
  const fs::path path = path_ / name;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::from_errno("stat " + path.string());
  if (static_cast<uint64_t>(st.st_size) > kMaxWholeFileBytes) return Error{path.string() + " is larger than it can be", EFBIG};
  return FileMapping::map(fd, path.string());
}

Result<std::string> PrivateDirectory::read(const std::string& name) const {
  VPERF_TRY(ScopedFd fd, open_file(name));
  const fs::path path = path_ / name;
  std::string text;
  // Its size now, so the text is not copied as it grows (it may still change while read).
  if (struct stat st {}; ::fstat(fd.get(), &st) == 0 && st.st_size > 0)
    text.reserve(std::min<uint64_t>(static_cast<uint64_t>(st.st_size), kMaxWholeFileBytes));
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::from_errno("read " + path.string());
    if (n == 0) return text;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxWholeFileBytes) return Error{path.string() + " is larger than it can be", EFBIG};
  }
}

Result<void> PrivateDirectory::replace(const std::string& name, std::string_view text) const {
  const fs::path path = path_ / name;
  static std::atomic<unsigned> serial{0};
  const std::string temporary = "." + name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++) + "." +
                                std::to_string(std::random_device{}());
  ScopedFd fd(::openat(fd_.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Error::from_errno("create a temporary file in " + path_.string());
  auto fail = [&](const std::string& what) {
    Error e = Error::from_errno(what);
    ::unlinkat(fd_.get(), temporary.c_str(), 0);
    return e;
  };
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write " + path.string());
    done += static_cast<size_t>(n);
  }
  if (::close(fd.release()) != 0) return fail("write " + path.string());
  if (::renameat(fd_.get(), temporary.c_str(), fd_.get(), name.c_str()) != 0) return fail("rename onto " + path.string());
  return {};
}

Result<void> PrivateDirectory::remove(const std::string& name) const {
  if (::unlinkat(fd_.get(), name.c_str(), 0) != 0 && errno != ENOENT) return Error::from_errno("remove " + (path_ / name).string());
  return {};
}

}  // namespace vperf
