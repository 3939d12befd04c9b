#include <sys/syscall.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "workloads.h"

namespace vperf::workloads {

int run_getppid(uint64_t n, const Options& options) {
  for (uint64_t i = 0; i < n; ++i) ::syscall(SYS_getppid);  // the libc wrapper may be cached
  if (options.verbose) std::printf("getppid: %" PRIu64 " system calls\n", n);
  return 0;
}

}  // namespace vperf::workloads
