#pragma once
// perf report's warning for a recording whose kernel address maps were hidden
// (report__warn_kptr_restrict in perf 6.1's builtin-report.c). `vperf record` and `perf record`
// write the kernel's map from /proc/kallsyms's _text; where kernel.kptr_restrict (or, for a user
// without CAP_SYSLOG, kernel.perf_event_paranoid >= 2) shows every address as 0 they write none,
// and the report can never name a kernel sample. perf decides from the recording, not from
// the reading machine's kallsyms (it warns for root too): the events sample the kernel, and
// either the data has no host kernel map or a kernel sample fell in a map with no relocation
// reference (address 0).
#include <optional>
#include <string>
#include <vector>

#include "data/perf_data_reader.h"

namespace vperf::report {

class RestrictedKernelMaps {
 public:
  // Every record of the recording, in order.
  void observe(const data::Record& record);
  // perf's warning text as one line, or nullopt when perf shows none. `attrs`: the recording's
  // events (all of them excluding the kernel means no warning).
  std::optional<std::string> warning(const std::vector<data::EventAttrEntry>& attrs) const;

 private:
  bool kernel_map_ = false;            // a host [kernel.kallsyms] MMAP
  bool kernel_map_without_reference_ = false;  // ... whose relocation reference (pgoff) is 0
  bool kernel_sample_ = false;         // a sample in the host kernel
};

}  // namespace vperf::report
