// perf report --tasks' tree from a machine model built by hand (the order and nesting rules of
// perf 6.1's tasks_print; Report.TasksTreeMatchesPerf checks real recordings against perf).
#include "report/task_tree.h"

#include <gtest/gtest.h>

namespace vperf::report {
namespace {

TEST(TaskTree, ForksNestUnderTheirParentInPerfsTableOrder) {
  symbols::Machine m{symbols::SymbolConfig{}};
  m.findnew_thread(0, 0).comm = "swapper";
  m.process_comm(300, 300, "sh", false);      // no FORK seen: a root
  m.process_fork(301, 300, 301, 300);         // sh forks 301
  m.process_comm(301, 301, "ls", true);
  m.process_fork(44, 300, 44, 300);           // a reused low tid forked later
  m.process_fork(301, 301, 558, 301);         // a thread of 301 (558 % 256 = 46: after 44's table)
  m.process_fork(5, 0, 5, 0);                 // a kernel thread under swapper
  // Tables by tid % 256, each by tid: 0, 5, 44, 300 (44), 301 (45), 558 (46).
  EXPECT_EQ(render_task_tree(m),
            "#      pid      tid     ppid  comm\n"
            "         0        0       -1 |swapper\n"
            "         5        5        0 | :5\n"
            "       300      300       -1 |sh\n"
            "        44       44      300 | sh\n"
            "       301      301      300 | ls\n"
            "       301      558      301 |  ls\n");
}

}  // namespace
}  // namespace vperf::report
