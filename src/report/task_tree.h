#pragma once
// perf report --tasks: the recording's threads as a tree of who forked whom, one line each,
//   "#      pid      tid     ppid  comm", then "  %8d %8d %8d |" + one space per level + comm,
// in perf 6.1's order (builtin-report.c tasks_print): perf walks its thread tables, 256 buckets
// by tid % 256, each in tid order; a thread goes under the thread it forked from (found by tid),
// and a thread with no FORK seen (ppid -1) is a root. Children follow their parent in the order
// that walk first reached them.
#include <string>

#include "symbols/machine.h"

namespace vperf::report {

// The tree of `machine`'s threads. (perf stops at a thread whose parent it no longer holds; a
// Machine never drops a thread a FORK named, so every parent is there.)
std::string render_task_tree(const symbols::Machine& machine);

}  // namespace vperf::report
