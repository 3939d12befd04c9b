#include "symbols/vdso.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "core/files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"

namespace vperf::symbols {
namespace {

struct Range {
  uint64_t start = 0, end = 0;
};

Result<Range> vdso_range(const std::string& maps_path) {
  auto maps = read_file(maps_path);
  if (!maps) return maps.error();
  for (std::string_view line : split(maps.value(), '\n')) {
    if (!line.ends_with("[vdso]")) continue;
    size_t dash = line.find('-'), sp = line.find(' ');
    if (dash == std::string_view::npos || sp == std::string_view::npos || dash > sp) break;
    auto start = parse_u64_base(line.substr(0, dash), 16);
    auto end = parse_u64_base(line.substr(dash + 1, sp - dash - 1), 16);
    if (start && end && *end > *start) return Range{*start, *end};
  }
  return Error{maps_path + ": no [vdso] mapping", ENOENT};
}

}  // namespace

Result<std::vector<char>> read_own_vdso() {
  auto range = vdso_range("/proc/self/maps");
  if (!range) return range.error();
  unsigned long ehdr = getauxval(AT_SYSINFO_EHDR);
  if (ehdr == 0 || ehdr != range->start) return Error{"AT_SYSINFO_EHDR does not point at the [vdso] mapping", ENOENT};
  std::vector<char> image(range->end - range->start);
  std::memcpy(image.data(), reinterpret_cast<const void*>(ehdr), image.size());
  return image;
}

Result<std::vector<char>> read_process_vdso(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  auto range = vdso_range(proc + "/maps");
  if (!range) return range.error();
  ScopedFd mem(::open((proc + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!mem.valid()) return Error::from_errno("open " + proc + "/mem");
  std::vector<char> image(range->end - range->start);
  ssize_t n = ::pread(mem.get(), image.data(), image.size(), static_cast<off_t>(range->start));
  if (n < 0) return Error::from_errno("read " + proc + "/mem");
  if (static_cast<size_t>(n) != image.size()) return Error{"short read of the [vdso] of " + proc, EIO};
  return image;
}

}  // namespace vperf::symbols
