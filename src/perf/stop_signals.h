#pragma once
// Stop signals: while a StopSignals is alive, SIGINT, SIGTERM and SIGHUP do not kill vperf.
// Each one is recorded and makes fd() readable, so a session::RunLoop (a workload, an
// interval timer, a ring-buffer reader) wakes up and decides what to do: forward it to the
// workload, stop counting, print what was counted, and only then end.
//
// Mechanism: a self-pipe. The handler (SA_SIGINFO, SA_RESTART) writes one 2-byte record
// {signal number, from_terminal} into a non-blocking O_CLOEXEC pipe and stores the number in
// an atomic; nothing else runs in signal context. The signal mask is never changed, so this
// works with any number of threads and needs no sigprocmask dance around fork (unlike
// signalfd, whose blocked mask would be inherited by a workload across exec).
//
// A forked child must not run our handler (it would write into the parent's pipe):
// reset_in_child() puts back the dispositions vperf had before install() (SIG_IGN stays
// SIG_IGN, e.g. SIGHUP under nohup) and is async-signal-safe; Workload calls it after fork().
// exec() would reset a caught signal to SIG_DFL anyway, but only at exec.
//
// Process-wide state: signal dispositions are process-wide, so at most one StopSignals may be
// alive at a time; install() fails with EBUSY otherwise.
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::perf {

struct StopSignal {
  int number = 0;
  // Sent by the kernel on behalf of a terminal (^C, ^\, hangup: si_code SI_KERNEL). The tty
  // signals the whole foreground process group, so a workload in vperf's group got it too.
  bool from_terminal = false;
};

class StopSignals {
 public:
  // The signals handled: SIGINT, SIGTERM, SIGHUP.
  static const std::vector<int>& handled();

  // `with_sigusr2`: SIGUSR2 is recorded too (record --switch-output's request for the next
  // file), where it would otherwise end vperf.
  static Result<StopSignals> install(bool with_sigusr2 = false);

  StopSignals(StopSignals&& other) noexcept;
  StopSignals& operator=(StopSignals&&) = delete;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();  // restores the previous handlers (a pending record is dropped)

  // Readable (POLLIN) while a received signal has not been take()n.
  int fd() const { return read_end_.get(); }
  // The latest stop signal received since install(), taken or not.
  std::optional<int> received() const;
  // The signals received since the last take(), oldest first; empties fd().
  std::vector<StopSignal> take() const;

  // In a forked child, before exec: restore the dispositions from before install(). A no-op
  // when no StopSignals is alive. Async-signal-safe.
  static void reset_in_child();

 private:
  explicit StopSignals(ScopedFd read_end) : read_end_(std::move(read_end)) {}
  ScopedFd read_end_;  // invalid in a moved-from object, which then restores nothing
};

}  // namespace vperf::perf
