#pragma once
// Watching processes from integration tests: readiness by polling a condition (never a fixed
// sleep), and the children a program started.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vperf::test {

// Polls `condition` every 10 ms until it holds or `limit` has passed; the limit only bounds a
// failure, it is never what makes a test pass.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit);

// Thread `tid` of process `pid` is blocked waiting on descriptors (poll, select, epoll), as
// /proc/PID/task/TID/syscall shows it. A program reaches its wait loop only after its setup,
// so this is the readiness of programs that print nothing when they are ready.
bool blocked_in_wait(pid_t pid, pid_t tid);
bool blocked_in_wait(pid_t pid);

// The number of the system call thread `tid` of `pid` is blocked in, or -1 while it runs (or is
// gone).
long blocked_syscall(pid_t pid, pid_t tid);

// The number of perf_event file descriptors process `pid` holds (from /proc/PID/fd).
int perf_event_fds(pid_t pid);

// This process's resident bytes (/proc/self/statm), mapped file pages included: what a reader
// that gives back the pages behind it keeps in memory.
uint64_t resident_bytes();

// `root` and its live descendants.
std::vector<pid_t> process_tree(pid_t root);

// A process of `root`'s tree holds perf_event descriptors and is blocked in its wait loop: the
// counters of a vperf command are open and enabled (vperf enables before it waits).
bool counting_and_waiting(pid_t root);

// Runs on this thread until it has used `cpu_time` of CPU time (CLOCK_THREAD_CPUTIME_ID): an
// event that samples CPU time (cpu-clock, task-clock) on this CPU certainly fires meanwhile.
void use_cpu_time(std::chrono::microseconds cpu_time);

// CPU time `pid` has used, in clock ticks (utime + stime of /proc/PID/stat); 0 once it is gone.
uint64_t cpu_ticks(pid_t pid);

// PIDs of the live children of `parent` whose comm is `comm`.
std::vector<pid_t> children_named(pid_t parent, const std::string& comm);

}  // namespace vperf::test
