#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>

#include "core/scoped_fd.h"

namespace vperf {

Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Error::from_errno("open " + path.string());
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
