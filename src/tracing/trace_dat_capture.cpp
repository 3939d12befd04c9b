#include "tracing/trace_dat_capture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

namespace vperf::tracing {

Result<RawCpuRecorder> RawCpuRecorder::open(const FtraceBuffer& buffer, int cpu, size_t index, size_t page_size) {
  RawCpuRecorder r;
  r.cpu_ = cpu;
  r.index_ = index;
  r.page_size_ = page_size;
  const std::filesystem::path raw = buffer.file("per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw");
  r.raw_ = ScopedFd(::open(raw.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!r.raw_.valid()) return Error::from_errno("cannot open " + raw.string());
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) == 0) {
    r.pipe_read_ = ScopedFd(ends[0]);
    r.pipe_write_ = ScopedFd(ends[1]);
  }
  return r;
}

Result<void> RawCpuRecorder::drain(TraceDatWriter& file, bool final) {
  if (pipe_read_.valid() && !final) {
    for (;;) {
      const ssize_t in = ::splice(raw_.get(), nullptr, pipe_write_.get(), nullptr, page_size_ * 16, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (in < 0 && errno == EINTR) continue;
      if (in < 0 && errno == EINVAL) {
        pipe_read_.reset();  // no splice here: read() below
        break;
      }
      if (in <= 0) return {};
      VPERF_TRY(file.add_pages_from_pipe(index_, pipe_read_.get(), static_cast<size_t>(in)));
    }
  }
  std::vector<uint8_t> page(page_size_);
  for (;;) {
    const ssize_t n = ::read(raw_.get(), page.data(), page.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    // A read gives one page, padded to the page size (a short read is padded here).
    std::fill(page.begin() + n, page.end(), 0);
    VPERF_TRY(file.add_pages(index_, page));
  }
}

bool out_of_room(const Error& e) { return e.errno_value == ENOSPC || e.errno_value == EDQUOT || e.errno_value == EFBIG; }

Result<NewTraceDat> create_trace_dat(const std::filesystem::path& path) {
  struct stat existing{};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    return Error{path.string() + (S_ISLNK(existing.st_mode) ? " is a symbolic link (vperf does not write through links)" : " is not a regular file"), 0,
                 "give -o a regular file's path"};
  const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  NewTraceDat file;
  file.fd = ScopedFd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!file.fd.valid()) {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return Error::from_errno("cannot create " + path.string());
    file.fd = ScopedFd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600));
    if (!file.fd.valid()) return Error::from_errno("cannot create " + path.string());
    file.named = true;
  }
  if (::fchmod(file.fd.get(), 0600) != 0) return Error::from_errno("cannot make " + path.string() + " private (mode 0600)");
  return file;
}

Result<void> name_trace_dat(NewTraceDat& file, const std::filesystem::path& path) {
  if (file.named) return {};
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Error::from_errno("cannot replace " + path.string());
  const std::string self = "/proc/self/fd/" + std::to_string(file.fd.get());
  if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) != 0) return Error::from_errno("cannot name " + path.string());
  file.named = true;
  return {};
}

}  // namespace vperf::tracing
