#pragma once
// The [vdso] image. Every process on one kernel maps the same vdso, so perf reads its own
// (tools/perf/util/vdso.c) and so does vperf: the bytes at getauxval(AT_SYSINFO_EHDR), as long
// as /proc/self/maps says the [vdso] mapping is. Another process's copy can be read from
// /proc/PID/mem at its [vdso] address (same bytes; for a process that is gone, nothing).
#include <sys/types.h>

#include <vector>

#include "core/error.h"

namespace vperf::symbols {

Result<std::vector<char>> read_own_vdso();
Result<std::vector<char>> read_process_vdso(pid_t pid);

}  // namespace vperf::symbols
