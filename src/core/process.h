#pragma once
// Facts about other processes that vperf's clean-up decisions rest on.
#include <sys/types.h>

namespace vperf {

// Whether PID is a running vperf (by its executable's name): what a private resource named
// after a PID (an inline probe group vperf_PID, an ftrace instance vperf-PID) belongs to while
// that vperf runs. A dead PID, or one reused by another program, owns nothing any more.
bool is_running_vperf(pid_t pid);

}  // namespace vperf
