#include "perf/workload.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <utility>

#include "core/files.h"
#include "core/strings.h"
#include "perf/stop_signals.h"

namespace vperf::perf {
namespace {

// The child's side of the handshake over a socketpair (a socket, not a pipe, so that the
// parent's send() to a child that died before start() is EPIPE with MSG_NOSIGNAL instead of
// SIGPIPE): it waits for one byte, execs, and if exec fails sends exec's errno back. Its end
// is O_CLOEXEC, so a successful exec reads as end-of-file in the parent.
// Runs between fork and exec: async-signal-safe calls only.
[[noreturn]] void run_child(int control, char* const* args, const sigset_t& mask, WorkloadStdout stdout_to) {
  StopSignals::reset_in_child();
  if (stdout_to == WorkloadStdout::to_stderr) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  char go = 0;
  ssize_t n;
  do {
    n = ::read(control, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) ::_exit(127);  // never started: the parent went away or gave up
  ::execvp(args[0], args);
  const int err = errno;
  [[maybe_unused]] ssize_t w = ::write(control, &err, sizeof err);
  ::_exit(127);
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

}  // namespace

std::string WorkloadExit::describe() const {
  if (!signaled) return "exited with status " + std::to_string(code);
  const char* what = ::sigdescr_np(code);
  return "killed by signal " + std::to_string(code) + (what ? std::string(" (") + what + ")" : std::string());
}

Result<Workload> Workload::prepare(const std::vector<std::string>& argv, WorkloadStdout stdout_to) {
  if (argv.empty() || argv[0].empty()) return Error{"no command to run", EINVAL};
  // Everything the child needs is made before fork: a multi-threaded parent's child may not
  // allocate.
  std::vector<std::string> strings = argv;
  std::vector<char*> args;
  for (std::string& s : strings) args.push_back(s.data());
  args.push_back(nullptr);

  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return Error::from_errno("socketpair");
  ScopedFd parent_end(ends[0]), child_end(ends[1]);

  // Block the stop signals across fork so that the child cannot run vperf's handler before
  // it has put the old dispositions back; the parent gets any pending one after fork.
  sigset_t stop_set, old_mask;
  sigemptyset(&stop_set);
  for (int s : StopSignals::handled()) sigaddset(&stop_set, s);
  ::pthread_sigmask(SIG_BLOCK, &stop_set, &old_mask);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(parent_end.get());
    run_child(child_end.get(), args.data(), old_mask, stdout_to);
  }
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) return Error::from_errno("fork", fork_errno);
  child_end.reset();

  // A pidfd turns "the child exited" into a readable fd for poll(). The pid cannot be reused
  // before we reap it, so opening it by pid here is race-free.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  Workload workload(pid, std::move(parent_end), ScopedFd(pidfd), std::move(strings));
  if (pidfd < 0) return Error::from_errno("pidfd_open");  // ~Workload kills and reaps the child
  return workload;
}

Workload::Workload(Workload&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      control_(std::move(other.control_)),
      pidfd_(std::move(other.pidfd_)),
      argv_(std::move(other.argv_)),
      started_(other.started_),
      exit_(std::move(other.exit_)) {}

Workload& Workload::operator=(Workload&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    control_ = std::move(other.control_);
    pidfd_ = std::move(other.pidfd_);
    argv_ = std::move(other.argv_);
    started_ = other.started_;
    exit_ = std::move(other.exit_);
  }
  return *this;
}

Workload::~Workload() { kill_and_reap(); }

void Workload::kill_and_reap() {
  if (pid_ <= 0 || exit_) return;
  ::kill(pid_, SIGKILL);
  int status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

Result<void> Workload::start() {
  const std::string what = "cannot run '" + argv_.at(0) + "'";
  if (started_ || !control_.valid()) return Error{what + ": already started", 0};
  started_ = true;
  const char go = 'g';
  ssize_t n;
  do {
    n = ::send(control_.get(), &go, 1, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != 1) {  // EPIPE: the child died before it was started (e.g. a ^C)
    Error error = Error::from_errno(what);
    control_.reset();
    return error;
  }
  int exec_errno = 0;
  size_t got = 0;
  while (got < sizeof exec_errno) {
    n = ::read(control_.get(), reinterpret_cast<char*>(&exec_errno) + got, sizeof exec_errno - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  control_.reset();
  if (got == 0) return {};  // end-of-file: the CLOEXEC end closed, exec succeeded
  if (got == sizeof exec_errno) {
    (void)reap(true);  // it _exits(127) right after telling us
    return Error{what, exec_errno};
  }
  return Error{what + ": short message from the child", 0};
}

Result<std::optional<WorkloadExit>> Workload::reap(bool block) {
  if (exit_) return std::optional<WorkloadExit>(*exit_);
  if (pid_ <= 0) return Error{"wait for a workload that was never prepared", ECHILD};
  // Its name, from its zombie before the reap takes it: what it exec'd last (record --overwrite
  // names the command by it, as perf reads it from the zombie).
  std::string comm;
  siginfo_t info{};
  int peeked;
  do {
    peeked = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
  } while (peeked < 0 && errno == EINTR);
  if (peeked == 0 && info.si_pid == pid_)
    if (Result<std::string> text = read_file("/proc/" + std::to_string(pid_) + "/comm"); text)
      comm = std::string(trim(*text));
  int status = 0;
  rusage usage{};
  pid_t r;
  do {
    r = ::wait4(pid_, &status, block ? 0 : WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return Error::from_errno("wait4 " + std::to_string(pid_));
  if (r == 0) return std::optional<WorkloadExit>();  // WNOHANG: still running
  WorkloadExit out;
  out.signaled = WIFSIGNALED(status);
  out.code = out.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
  out.user_seconds = seconds(usage.ru_utime);
  out.system_seconds = seconds(usage.ru_stime);
  out.comm = std::move(comm);
  exit_ = out;
  pidfd_.reset();
  return std::optional<WorkloadExit>(out);
}

Result<std::optional<WorkloadExit>> Workload::try_reap() { return reap(false); }

Result<WorkloadExit> Workload::wait() {
  Result<std::optional<WorkloadExit>> exit = reap(true);
  if (!exit) return exit.error();
  return std::move(exit->value());  // a blocking reap always has the exit
}

void Workload::forward(const std::vector<StopSignal>& signals) {
  for (const StopSignal& s : signals)
    if (!s.from_terminal) terminate(s.number);
}

void Workload::terminate(int signal) {
  if (pid_ > 0 && !exit_) ::kill(pid_, signal);
}

}  // namespace vperf::perf
