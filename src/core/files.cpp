#include "core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "core/scoped_fd.h"

namespace vperf {

namespace {

const char* kind_of_file(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

Error not_regular(const std::filesystem::path& path, mode_t mode) {
  return Error{path.string() + " is " + kind_of_file(mode) + ", not a regular file"};
}

// A descriptor opened O_NONBLOCK (so that a FIFO swapped in after a check cannot block the
// open), kept only if it is a regular file, and made blocking again.
Result<ScopedFd> regular_and_blocking(ScopedFd fd, const std::filesystem::path& path) {
  struct stat opened {};
  if (::fstat(fd.get(), &opened) != 0) return Error::from_errno("fstat " + path.string());
  if (!S_ISREG(opened.st_mode)) return not_regular(path, opened.st_mode);
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace

Result<ScopedFd> open_regular_file(const std::filesystem::path& path) {
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) return Error::from_errno("open " + path.string());
  if (!S_ISREG(before.st_mode)) return not_regular(path, before.st_mode);
  // O_NONBLOCK: should the path be swapped for a FIFO after the check, the open still returns.
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return Error::from_errno("open " + path.string());
  return regular_and_blocking(std::move(fd), path);
}

Result<ScopedFd> create_regular_file(const std::filesystem::path& path, mode_t mode) {
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISLNK(existing.st_mode))
      return Error{path.string() + " is a symbolic link (vperf does not write through links)"};
    return not_regular(path, existing.st_mode);
  }
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode));
  if (!fd.valid()) return Error::from_errno("create " + path.string());
  return regular_and_blocking(std::move(fd), path);
}

Result<void> move_aside_to_old(const std::filesystem::path& path) {
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) != 0) return {};
  if (!S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode)) return not_regular(path, existing.st_mode);
  const std::string old = path.string() + ".old";
  if (::rename(path.c_str(), old.c_str()) != 0) return Error::from_errno("rename " + path.string() + " to " + old);
  return {};
}

Result<void> write_kernel_file(const std::filesystem::path& path, std::string_view value, bool append) {
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)));
  if (!fd.valid()) return Error::from_errno("cannot open " + path.string() + " for writing");
  if (value.empty()) return {};
  if (::write(fd.get(), value.data(), value.size()) < 0) return Error::from_errno("writing '" + std::string(value) + "' to " + path.string());
  return {};
}

Result<size_t> replace_file(const std::filesystem::path& path, std::string_view content) {
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") return Error{path.string() + ": not a file name", EINVAL};
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode))
    return not_regular(path, existing.st_mode);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  ScopedFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.valid()) return Error::from_errno("open directory " + dir.string());

  std::string temporary;
  ScopedFd fd;
  for (int attempt = 0; attempt < 100 && !fd.valid(); ++attempt) {
    temporary = "." + name + ".vperf-" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
    fd.reset(::openat(dir_fd.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (!fd.valid() && errno != EEXIST) {
      // procfs and sysfs answer ENOENT, which would read as "the target does not exist".
      if (errno == ENOENT) return Error{dir.string() + " does not take new files"};
      return Error::from_errno("create a file in " + dir.string());
    }
  }
  if (!fd.valid()) return Error::from_errno("create a file in " + dir.string());
  auto fail = [&](std::string what) {
    Error e = Error::from_errno(std::move(what));
    ::unlinkat(dir_fd.get(), temporary.c_str(), 0);
    return e;
  };
  for (size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write " + (dir / temporary).string());
    done += static_cast<size_t>(n);
  }
  if (::close(fd.release()) != 0) return fail("write " + (dir / temporary).string());
  if (::renameat(dir_fd.get(), temporary.c_str(), dir_fd.get(), name.c_str()) != 0)
    return fail("replace " + path.string());
  return content.size();
}

Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes) {
  Result<ScopedFd> opened = open_regular_file(path);
  if (!opened) return opened.error();
  ScopedFd fd = std::move(opened).value();
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("read " + path.string());
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes)
      return Error{"read " + path.string() + ": longer than " + std::to_string(max_bytes >> 20) + " MiB", EFBIG};
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> read_first_line(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  std::string line = text.value().substr(0, text.value().find('\n'));
  return line;
}

Result<std::vector<std::string>> list_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return Error{"list " + dir.string(), ec.value()};
  std::vector<std::string> names;
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace vperf
