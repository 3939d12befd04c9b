#pragma once
// The workload of `vperf stat -- CMD` (and later `record`), started the way perf starts it:
//
//   auto w = Workload::prepare(argv);      // fork: the child waits, nothing is exec'd yet
//   open counters on w->pid() with enable_on_exec (and inherit)
//   w->start();                            // the child execs; counting starts at exec
//   a session::RunLoop watches w->exit_fd() and the stop signals; try_reap() when it is readable
//
// The child stays in vperf's process group, so a terminal's ^C reaches both, as with perf.
// Before exec it gets back the signal dispositions vperf had before StopSignals::install().
// A child that is never start()ed never execs: it waits for one "go" byte and _exits(127)
// when the parent end closes instead (the destructor, or vperf dying).
//
// Signals while waiting (see StopSignals): the loop's signal handler calls forward(), which
// passes a signal on to the child with kill(), except a signal from the terminal (si_code
// SI_KERNEL), which the tty already sent to the whole foreground group, child included;
// forwarding it would deliver ^C twice. The loop then normally waits on (the child usually
// ends at once) and the command prints what was counted, like perf. Workload waits in no loop
// of its own: RunLoop is the one place a command waits.
//
// perf 6.1 for comparison (measured, `perf stat -e task-clock -- CMD`):
//  - ^C (SIGINT to the group): perf catches it and does not forward it; the child gets it
//    from the tty. perf waits for the child, prints "CMD: Interrupt" (psignal) when SIGINT
//    killed it, prints the counts, then re-raises SIGINT on itself (shell sees 130).
//    If the child handles SIGINT and exits 77, perf prints the counts and exits 77.
//  - `kill -INT <perf>` alone: nothing reaches the child; perf waits until it ends, prints
//    the counts and exits 0 (its SIGCHLD handler overwrites the remembered SIGINT).
//  - `kill -TERM`/`-HUP <perf>`: default disposition, perf dies at once printing nothing;
//    the child is orphaned and runs on.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::perf {

class StopSignals;
struct StopSignal;

// Where the workload's standard output goes. A recording written to vperf's own stdout (-o -)
// would be corrupted by the workload's output, so there, as perf does, it goes to stderr.
enum class WorkloadStdout { inherited, to_stderr };

struct WorkloadExit {
  bool signaled = false;
  int code = 0;  // exit code, or signal number when signaled
  double user_seconds = 0, system_seconds = 0;  // rusage of the child and its reaped children
  std::string comm;  // the name it ended with (after its execs), read before the reap; "" if unreadable
  // What a shell would report: code, or 128 + signal.
  int shell_status() const { return signaled ? 128 + code : code; }
  // "exited with status 3", "killed by signal 2 (Interrupt)"
  std::string describe() const;
};

class Workload {
 public:
  // Forks; the child waits for start(). argv[0] is looked up on PATH unless it has a '/'.
  // Errors: empty argv, fork or socketpair failure. A missing program is start()'s error.
  static Result<Workload> prepare(const std::vector<std::string>& argv,
                                  WorkloadStdout stdout_to = WorkloadStdout::inherited);

  Workload(Workload&& other) noexcept;
  Workload& operator=(Workload&& other) noexcept;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;
  // A child not yet reaped is killed (SIGKILL) and reaped: nothing is left behind.
  ~Workload();

  pid_t pid() const { return pid_; }
  const std::vector<std::string>& argv() const { return argv_; }

  // Lets the child exec and returns once exec has happened. If it failed the child exits 127
  // and the Error is "cannot run 'foo': No such file or directory" (exec's errno). Once only.
  Result<void> start();

  // The child's exit once it has ended (reaped now, or remembered from before), else nullopt;
  // never blocks.
  Result<std::optional<WorkloadExit>> try_reap();
  // Blocks until the child has ended and reaps it (no timeout, no signals: for those, wait in
  // a RunLoop). After the exit has been returned, returns it again at once.
  Result<WorkloadExit> wait();

  // Sends `signal` to the child unless it has been reaped.
  void terminate(int signal = SIGTERM);

  // Forwards stop signals to the child, all but those a terminal sent (the tty already gave
  // them to the whole foreground group, child included).
  void forward(const std::vector<StopSignal>& signals);

  // Readable once the child has exited (a pidfd), for a RunLoop to watch; try_reap() then reaps
  // it. -1 before prepare().
  int exit_fd() const { return pidfd_.get(); }

  bool reaped() const { return exit_.has_value(); }

 private:
  Workload(pid_t pid, ScopedFd control, ScopedFd pidfd, std::vector<std::string> argv)
      : pid_(pid), control_(std::move(control)), pidfd_(std::move(pidfd)), argv_(std::move(argv)) {}
  // The exit already reaped, or wait4 on the child: blocking, or with WNOHANG (nullopt while it
  // runs).
  Result<std::optional<WorkloadExit>> reap(bool block);
  void kill_and_reap();

  pid_t pid_ = -1;
  ScopedFd control_;  // our end of the socketpair: "go" byte out, exec's errno in
  ScopedFd pidfd_;    // readable once the child has exited
  std::vector<std::string> argv_;
  bool started_ = false;
  std::optional<WorkloadExit> exit_;
};

}  // namespace vperf::perf
