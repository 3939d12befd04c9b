#pragma once
// The tasks /proc shows: what -a synthesizes for samples' names, what -p follows, and what
// stat --per-thread -a counts (perf's thread_map__new_all_cpus and thread_map__read_comms).
// A task can end at any moment between listing and use: the lists are a snapshot, and each
// function says what an ended task gives.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace vperf::session {

// Every process (/proc's numeric entries), in /proc's order.
std::vector<pid_t> all_processes();

// The threads of process `pid` (/proc/PID/task), or nullopt when there is no such process.
std::optional<std::vector<pid_t>> threads_of_process(pid_t pid);

// Every thread of every process; a process that ends while being listed is left out.
std::vector<pid_t> all_threads();

// Thread `tid`'s command name (/proc/TID/comm without its newline); "" when it has ended.
std::string task_comm(pid_t tid);

}  // namespace vperf::session
