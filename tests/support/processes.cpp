#include "support/processes.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace vperf::test {

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

void use_cpu_time(std::chrono::microseconds cpu_time) {
  auto thread_time = [] {
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
  };
  const auto until = thread_time() + cpu_time;
  while (thread_time() < until) {
  }
}

long blocked_syscall(pid_t pid, pid_t tid) {
  // The first word is the number of the system call the thread is blocked in, or "running".
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  long number = -1;
  if (!(in >> number)) return -1;
  return number;
}

bool blocked_in_wait(pid_t pid, pid_t tid) {
  const long number = blocked_syscall(pid, tid);
  // Descriptor waits only: a run loop waits on its ring, signal and pidfd descriptors. A sleep
  // (nanosleep) or a child wait (wait4) can happen during setup and would look ready too early.
  static constexpr std::array<long, 7> kWaits = {SYS_poll,       SYS_ppoll,       SYS_select,      SYS_pselect6,
                                                 SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_pwait2};
  return std::find(kWaits.begin(), kWaits.end(), number) != kWaits.end();
}

uint64_t cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 13; ++i) rest >> field;  // state .. cmajflt
  uint64_t utime = 0, stime = 0;
  rest >> utime >> stime;
  return utime + stime;
}

bool blocked_in_wait(pid_t pid) { return blocked_in_wait(pid, pid); }

int perf_event_fds(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    std::filesystem::path target = std::filesystem::read_symlink(entry.path(), link_ec);
    if (!link_ec && target.string() == "anon_inode:[perf_event]") ++n;
  }
  return n;
}

namespace {

struct ProcessEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  std::string state;
  std::string comm;
};

// Every process in /proc, from its stat line (this kernel has no /proc/PID/task/TID/children).
std::vector<ProcessEntry> all_processes() {
  std::vector<ProcessEntry> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    size_t close = stat.rfind(')');
    size_t open = stat.find('(');
    if (close == std::string::npos || open == std::string::npos) continue;
    ProcessEntry process;
    process.pid = std::stoi(name);
    process.comm = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 2));
    rest >> process.state >> process.ppid;
    out.push_back(std::move(process));
  }
  return out;
}

}  // namespace

std::vector<pid_t> process_tree(pid_t root) {
  const std::vector<ProcessEntry> processes = all_processes();
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i)
    for (const ProcessEntry& p : processes)
      if (p.ppid == tree[i] && p.state != "Z") tree.push_back(p.pid);
  return tree;
}

bool counting_and_waiting(pid_t root) {
  for (pid_t pid : process_tree(root))
    if (perf_event_fds(pid) > 0 && blocked_in_wait(pid)) return true;
  return false;
}

std::vector<pid_t> children_named(pid_t parent, const std::string& comm) {
  std::vector<pid_t> out;
  for (const ProcessEntry& p : all_processes())
    if (p.ppid == parent && p.state != "Z" && p.comm == comm) out.push_back(p.pid);
  return out;
}

uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace vperf::test
