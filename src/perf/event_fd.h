#pragma once
// The perf_event_open boundary. EventFd owns one counter's file descriptor; PerfEventOpener
// is the interface in front of the syscall so that probes and counters can be unit-tested
// with a fake that answers like a kernel without a PMU, or with one.
#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::perf {

class EventFd {
 public:
  EventFd() = default;
  explicit EventFd(ScopedFd fd) : fd_(std::move(fd)) {}
  int get() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }

  Result<void> enable() const;
  Result<void> disable() const;
  Result<void> reset() const;
  // A tracepoint's filter (PERF_EVENT_IOC_SET_FILTER), in the syntax of tracefs's filter files.
  Result<void> set_filter(const std::string& filter) const;
  // Reads the counter value with the attr's read_format; `buf` must hold it.
  Result<size_t> read(void* buf, size_t size) const;

 private:
  ScopedFd fd_;
};

struct OpenTarget {
  pid_t pid = 0;    // 0 = this thread, -1 = all tasks (needs cpu >= 0)
  int cpu = -1;     // -1 = any CPU
  int group_fd = -1;
  unsigned long flags = PERF_FLAG_FD_CLOEXEC;
};

class PerfEventOpener {
 public:
  virtual ~PerfEventOpener() = default;
  // On failure the Error carries the errno perf_event_open set (ENOENT: no such event,
  // EOPNOTSUPP: no such feature, EACCES/EPERM: paranoid level, EINVAL: bad attr).
  virtual Result<EventFd> open(const perf_event_attr& attr, const OpenTarget& target) const = 0;
};

// The attr of a capability probe: count `type`/`config` in user space only, which every
// perf_event_paranoid level allows, so a failure means "no such event here", not "no permission".
perf_event_attr user_space_probe_attr(uint32_t type, uint64_t config);

// perf's "missing feature" fallback for PMUs that take no guest/host filter (the msr PMU, some
// uncore PMUs): EINVAL for an attr with exclude_guest or exclude_host is retried once without
// them. Counting (stat) and sampling (record) both open through it.
class GuestFilterFallbackOpener final : public PerfEventOpener {
 public:
  explicit GuestFilterFallbackOpener(const PerfEventOpener& inner) : inner_(inner) {}
  Result<EventFd> open(const perf_event_attr& attr, const OpenTarget& target) const override;

 private:
  const PerfEventOpener& inner_;
};

// The real syscall.
class KernelPerfEventOpener final : public PerfEventOpener {
 public:
  Result<EventFd> open(const perf_event_attr& attr, const OpenTarget& target) const override;
};

}  // namespace vperf::perf
