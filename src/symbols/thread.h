#pragma once
// A thread as perf's machine model knows it: pid, tid, comm, and the MapSet of its process.
// Threads of one process share one MapSet (the leader's); fork of a new process copies the
// parent's; exec starts an empty one.
#include <sys/types.h>

#include <memory>
#include <string>

#include "symbols/map.h"

namespace vperf::symbols {

struct Thread {
  pid_t pid = -1;
  pid_t tid = -1;
  pid_t ppid = -1;  // the tid of the thread it forked from (perf's thread->ppid); -1: no FORK seen
  std::string comm;  // perf shows ":TID" until a COMM event names the thread
  bool comm_set = false;  // a COMM record (or perf's idle "swapper") named it: a fork passes it on
  std::shared_ptr<MapSet> maps;
  bool exited = false;
};

}  // namespace vperf::symbols
