#include <time.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "workloads.h"

namespace vperf::workloads {

int run_sleep(uint64_t ms, const Options& options) {
  timespec left{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  if (options.verbose) std::printf("sleep: %" PRIu64 " ms\n", ms);
  return 0;
}

}  // namespace vperf::workloads
