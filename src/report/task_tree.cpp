#include "report/task_tree.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

namespace vperf::report {
namespace {

struct Task {
  const symbols::Thread* thread = nullptr;
  std::vector<Task*> children;
  bool listed = false;  // in a parent's children or among the roots
};

void print_level(const Task& task, int level, std::string& out) {
  char line[64];
  const symbols::Thread& t = *task.thread;
  std::snprintf(line, sizeof line, "  %8d %8d %8d |%*s", t.pid, t.tid, t.ppid, level, "");
  out += line;
  out += t.comm;
  out += '\n';
  for (const Task* child : task.children) print_level(*child, level + 1, out);
}

}  // namespace

std::string render_task_tree(const symbols::Machine& machine) {
  std::vector<const symbols::Thread*> threads = machine.threads();
  // perf's walk: THREADS__TABLE_SIZE (256) tables by tid % 256, each an rbtree by tid.
  std::sort(threads.begin(), threads.end(), [](const symbols::Thread* a, const symbols::Thread* b) {
    const auto bucket = [](pid_t tid) { return static_cast<unsigned>(tid) % 256; };
    if (bucket(a->tid) != bucket(b->tid)) return bucket(a->tid) < bucket(b->tid);
    return a->tid < b->tid;
  });
  std::vector<Task> tasks(threads.size());
  std::unordered_map<pid_t, Task*> by_tid;
  for (size_t i = 0; i < threads.size(); ++i) {
    tasks[i].thread = threads[i];
    by_tid.emplace(threads[i]->tid, &tasks[i]);
  }
  std::vector<Task*> roots;
  for (Task& first : tasks) {
    // Up the chain of parents to the first one already listed, or to a root (perf's tasks_list).
    for (Task* task = &first; task != nullptr && !task->listed;) {
      if (task->thread->ppid == -1) {
        task->listed = true;
        roots.push_back(task);
        break;
      }
      auto parent = by_tid.find(task->thread->ppid);
      if (parent == by_tid.end()) {  // cannot happen (see the header): shown as a root rather than lost
        task->listed = true;
        roots.push_back(task);
        break;
      }
      task->listed = true;
      parent->second->children.push_back(task);
      task = parent->second;
    }
  }
  std::string out = "#      pid      tid     ppid  comm\n";
  for (const Task* root : roots) print_level(*root, 0, out);
  return out;
}

}  // namespace vperf::report
