#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "workloads.h"

namespace vperf::workloads {

int run_watched_writes(uint64_t n, const Options& options) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // MAP_FIXED_NOREPLACE: the address is the workload's contract, and another mapping there
  // (none is expected) is an error rather than replaced.
  void* at = ::mmap(reinterpret_cast<void*>(kWatchedAddress), page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (at == MAP_FAILED || reinterpret_cast<uint64_t>(at) != kWatchedAddress) {
    std::fprintf(stderr, "vperf-workload: watched-writes: cannot map a page at 0x%" PRIx64 ": %s\n", kWatchedAddress,
                 at == MAP_FAILED ? std::strerror(errno) : "the kernel placed it elsewhere");
    return 1;
  }
  volatile uint64_t* word = static_cast<volatile uint64_t*>(at);
  for (uint64_t i = 0; i < n; ++i) *word = i;  // a store only: no read of the word
  ::munmap(at, page);
  if (options.verbose) std::printf("watched-writes: wrote 0x%" PRIx64 " %" PRIu64 " times\n", kWatchedAddress, n);
  return 0;
}

}  // namespace vperf::workloads
