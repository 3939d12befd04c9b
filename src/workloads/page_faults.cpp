#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "workloads.h"

namespace vperf::workloads {

int run_page_faults(uint64_t n, const Options& options) {
  if (n == 0) return 0;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (n > UINT64_MAX / page) {
    std::fprintf(stderr, "vperf-workload: page-faults: %" PRIu64 " pages is too many\n", n);
    return 2;
  }
  const size_t bytes = static_cast<size_t>(n * page);
  void* region = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) {
    std::fprintf(stderr, "vperf-workload: page-faults: mmap %zu bytes: %s\n", bytes, std::strerror(errno));
    return 1;
  }
  // A transparent huge page would serve 512 pages with one fault. (With THP "always" this
  // advice is what keeps the count exact; with "madvise" or "never" it changes nothing.)
  ::madvise(region, bytes, MADV_NOHUGEPAGE);
  volatile char* bytes_ptr = static_cast<volatile char*>(region);
  // A write (not a read, which would map the shared zero page and fault again on a later
  // write) to each fresh page: one minor fault each.
  for (uint64_t i = 0; i < n; ++i) bytes_ptr[i * page] = 1;
  ::munmap(region, bytes);
  // The region's bounds let a test tell the loop's faults (sampled with their addresses) from
  // start-up's, which the kernel may vary.
  if (options.verbose)
    std::printf("page-faults: touched %" PRIu64 " fresh pages at 0x%" PRIxPTR "-0x%" PRIxPTR "\n", n,
                reinterpret_cast<uintptr_t>(region), reinterpret_cast<uintptr_t>(region) + bytes);
  return 0;
}

}  // namespace vperf::workloads
