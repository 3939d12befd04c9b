#include "perf/event_fd.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "events/attr_builder.h"

namespace vperf::perf {

namespace {
Result<void> ioctl_call(int fd, unsigned long request, const char* what) {
  if (::ioctl(fd, request, 0) != 0) return Error::from_errno(what);
  return {};
}
}  // namespace

Result<void> EventFd::enable() const { return ioctl_call(get(), PERF_EVENT_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE"); }
Result<void> EventFd::disable() const { return ioctl_call(get(), PERF_EVENT_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE"); }
Result<void> EventFd::reset() const { return ioctl_call(get(), PERF_EVENT_IOC_RESET, "PERF_EVENT_IOC_RESET"); }

Result<void> EventFd::set_filter(const std::string& filter) const {
  if (::ioctl(get(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) return Error::from_errno("set the filter '" + filter + "'");
  return {};
}

Result<size_t> EventFd::read(void* buf, size_t size) const {
  for (;;) {
    ssize_t n = ::read(get(), buf, size);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) return Error::from_errno("read perf counter");
  }
}

perf_event_attr user_space_probe_attr(uint32_t type, uint64_t config) {
  perf_event_attr attr = events::blank_attr(type, config);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return attr;
}

Result<EventFd> KernelPerfEventOpener::open(const perf_event_attr& attr, const OpenTarget& target) const {
  long fd = ::syscall(SYS_perf_event_open, &attr, target.pid, target.cpu, target.group_fd, target.flags);
  if (fd < 0) return Error::from_errno("perf_event_open");
  return EventFd(ScopedFd(static_cast<int>(fd)));
}

Result<EventFd> GuestFilterFallbackOpener::open(const perf_event_attr& attr, const OpenTarget& target) const {
  Result<EventFd> fd = inner_.open(attr, target);
  if (fd || fd.error().errno_value != EINVAL || !(attr.exclude_guest || attr.exclude_host)) return fd;
  perf_event_attr unfiltered = attr;
  unfiltered.exclude_guest = 0;
  unfiltered.exclude_host = 0;
  return inner_.open(unfiltered, target);
}

}  // namespace vperf::perf
