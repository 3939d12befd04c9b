// libFuzzer target for the CPU and PID lists vperf reads from the command line (-C, -p, -t)
// and from sysfs (devices/system/cpu/online, a PMU's cpumask): any text must parse or fail
// with an Error, and a CPU list that parses must print back (format_cpu_list) to
// a text that parses to the same CPUs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpu_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  vperf::Result<std::vector<int>> cpus = vperf::parse_cpu_list(text);
  if (cpus) {
    vperf::Result<std::vector<int>> again = vperf::parse_cpu_list(vperf::format_cpu_list(*cpus));
    if (!again || *again != *cpus) __builtin_trap();
  }
  if (vperf::Result<std::vector<pid_t>> ids = vperf::parse_task_ids(text, "-p"))
    for (pid_t id : *ids)
      if (id <= 0) __builtin_trap();
  return 0;
}
