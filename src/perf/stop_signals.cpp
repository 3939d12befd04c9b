#include "perf/stop_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>

namespace vperf::perf {
namespace {

constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
// Handled too when asked for (record --switch-output's "next file" signal), last.
constexpr std::array<int, 4> kSignalsWithUsr2 = {SIGINT, SIGTERM, SIGHUP, SIGUSR2};

// The state a signal handler can reach: process-wide by nature (see the header).
std::atomic<bool> g_installed{false};
size_t g_count = 0;  // of kSignalsWithUsr2 installed: kSignals.size(), or all with SIGUSR2
std::atomic<int> g_write_fd{-1};
std::atomic<int> g_latest{0};
struct sigaction g_previous[kSignalsWithUsr2.size()];

void on_stop_signal(int number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  g_latest.store(number, std::memory_order_relaxed);
  const unsigned char record[2] = {static_cast<unsigned char>(number),
                                   static_cast<unsigned char>(info != nullptr && info->si_code == SI_KERNEL)};
  const int fd = g_write_fd.load(std::memory_order_relaxed);
  // Non-blocking: if the pipe is full (64 KiB of unread signals) the record is dropped, but
  // g_latest and the readable fd still say that something arrived.
  if (fd >= 0) [[maybe_unused]] ssize_t n = ::write(fd, record, sizeof record);
  errno = saved_errno;
}

}  // namespace

const std::vector<int>& StopSignals::handled() {
  static const std::vector<int> signals(kSignals.begin(), kSignals.end());
  return signals;
}

Result<StopSignals> StopSignals::install(bool with_sigusr2) {
  bool expected = false;
  if (!g_installed.compare_exchange_strong(expected, true))
    return Error::from_errno("install stop-signal handlers (another StopSignals is alive)", EBUSY);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    Error error = Error::from_errno("pipe2 for stop signals");
    g_installed = false;
    return error;
  }
  ScopedFd read_end(fds[0]);
  g_write_fd = fds[1];
  g_latest = 0;

  g_count = with_sigusr2 ? kSignalsWithUsr2.size() : kSignals.size();
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < g_count; ++i) sigaddset(&action.sa_mask, kSignalsWithUsr2[i]);  // one handler at a time
  for (size_t i = 0; i < g_count; ++i) {
    if (::sigaction(kSignalsWithUsr2[i], &action, &g_previous[i]) != 0) {
      Error error = Error::from_errno("sigaction");
      for (size_t j = 0; j < i; ++j) ::sigaction(kSignalsWithUsr2[j], &g_previous[j], nullptr);
      ::close(g_write_fd.exchange(-1));
      g_installed = false;
      return error;
    }
  }
  return StopSignals(std::move(read_end));
}

StopSignals::StopSignals(StopSignals&& other) noexcept : read_end_(std::move(other.read_end_)) {}

StopSignals::~StopSignals() {
  if (!read_end_.valid()) return;  // moved from
  for (size_t i = 0; i < g_count; ++i) ::sigaction(kSignalsWithUsr2[i], &g_previous[i], nullptr);
  // Only now that no handler can run, close its pipe.
  ::close(g_write_fd.exchange(-1));
  g_installed = false;
}

std::optional<int> StopSignals::received() const {
  const int latest = g_latest.load(std::memory_order_relaxed);
  if (latest == 0) return std::nullopt;
  return latest;
}

std::vector<StopSignal> StopSignals::take() const {
  std::vector<StopSignal> out;
  unsigned char buf[256];
  for (;;) {
    ssize_t n = ::read(read_end_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: drained
    // Records are 2 bytes and pipe writes of <= PIPE_BUF bytes are atomic, so a read of an
    // even-sized buffer never splits one.
    for (ssize_t i = 0; i + 1 < n; i += 2) out.push_back(StopSignal{buf[i], buf[i + 1] != 0});
  }
  return out;
}

void StopSignals::reset_in_child() {
  if (!g_installed.load(std::memory_order_relaxed)) return;
  for (size_t i = 0; i < g_count; ++i) ::sigaction(kSignalsWithUsr2[i], &g_previous[i], nullptr);
  g_write_fd.store(-1, std::memory_order_relaxed);  // the child's copy only
}

}  // namespace vperf::perf
