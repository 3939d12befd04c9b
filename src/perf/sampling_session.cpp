#include "perf/sampling_session.h"

#include <sys/ioctl.h>

#include <cerrno>

namespace vperf::perf {

namespace {

std::string place_text(int cpu, pid_t thread) {
  if (thread > 0) return "task " + std::to_string(thread) + (cpu >= 0 ? " on CPU " + std::to_string(cpu) : "");
  return "CPU " + std::to_string(cpu);
}

}  // namespace

Result<SamplingSession> SamplingSession::open(const PerfEventOpener& kernel, std::vector<SamplingEvent> events,
                                              const SamplingTarget& target, size_t data_pages, const OpenRetry& retry) {
  for (;;) {
    size_t failed_event = events.size();
    Result<SamplingSession> session = open_once(kernel, events, target, data_pages, failed_event);
    if (session || !retry || failed_event >= events.size() || !retry(events[failed_event], session.error()))
      return session;
  }
}

Result<SamplingSession> SamplingSession::open_once(const PerfEventOpener& kernel, std::vector<SamplingEvent> events,
                                                   const SamplingTarget& target, size_t data_pages,
                                                   size_t& failed_event) {
  GuestFilterFallbackOpener opener(kernel);
  SamplingSession session;
  session.events_ = std::move(events);
  session.ids_.resize(session.events_.size());

  std::vector<std::pair<int, pid_t>> where;
  if (!target.threads.empty()) {
    for (pid_t tid : target.threads) {
      if (target.cpus.empty()) where.emplace_back(-1, tid);
      for (int cpu : target.cpus) where.emplace_back(cpu, tid);
    }
  } else {
    for (int cpu : target.cpus) where.emplace_back(cpu, -1);
  }

  for (auto [cpu, thread] : where) {
    Place place;
    place.cpu = cpu;
    place.thread = thread;
    for (size_t e = 0; e < session.events_.size(); ++e) {
      OpenTarget at;
      at.cpu = cpu;
      at.pid = thread;
      const int leader = session.events_[e].group_leader;
      if (leader >= 0 && static_cast<size_t>(leader) < place.fds.size()) at.group_fd = place.fds[static_cast<size_t>(leader)].get();
      Result<EventFd> fd = opener.open(session.events_[e].attr, at);
      if (!fd) {
        failed_event = e;
        return Error{"cannot sample " + session.events_[e].name + " on " + place_text(cpu, thread) + ": " +
                         fd.error().message,
                     fd.error().errno_value};
      }
      uint64_t id = 0;
      if (::ioctl(fd->get(), PERF_EVENT_IOC_ID, &id) != 0) return Error::from_errno("read a counter's id");
      session.ids_[e].push_back(id);
      if (e == 0) {
        Result<RingBuffer> ring = RingBuffer::map(fd->get(), data_pages, session.events_[e].attr.write_backward != 0);
        if (!ring) return ring.error();
        place.ring.emplace(std::move(ring).value());
      } else if (::ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, place.fds[0].get()) != 0) {
        return Error::from_errno("share the ring of " + place_text(cpu, thread));
      }
      place.fds.push_back(std::move(fd).value());
    }
    session.places_.push_back(std::move(place));
  }
  return session;
}

Result<void> SamplingSession::set_filter(size_t index, const std::string& filter) const {
  for (const Place& place : places_)
    if (index < place.fds.size() && ::ioctl(place.fds[index].get(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0)
      return Error::from_errno("set the filter '" + filter + "' on " + events_[index].name);
  return {};
}

Result<void> SamplingSession::enable() const {
  for (const Place& place : places_)
    for (size_t e = 0; e < place.fds.size(); ++e)
      if (!events_[e].attr.enable_on_exec)
        VPERF_TRY(place.fds[e].enable());
  return {};
}

Result<void> SamplingSession::disable() const {
  for (const Place& place : places_)
    for (const EventFd& fd : place.fds)
      VPERF_TRY(fd.disable());
  return {};
}

Result<void> SamplingSession::set_enabled(bool on, std::optional<size_t> index) const {
  for (const Place& place : places_)
    for (size_t e = 0; e < place.fds.size(); ++e)
      if (!index || *index == e) VPERF_TRY(on ? place.fds[e].enable() : place.fds[e].disable());
  return {};
}

std::vector<int> SamplingSession::ring_fds() const {
  std::vector<int> fds;
  for (const Place& place : places_) fds.push_back(place.fds[0].get());
  return fds;
}

Result<size_t> SamplingSession::drain(const std::function<void(std::span<const uint8_t>)>& on_record) {
  size_t total = 0;
  for (Place& place : places_) {
    // An overwrite ring is paused while its snapshot is read, so the kernel does not write over
    // the records being read (perf's BKW_MMAP_DATA_PENDING).
    const bool overwrite = !events_.empty() && events_.front().attr.write_backward;
    if (overwrite) ::ioctl(place.fds[0].get(), PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
    Result<size_t> n = place.ring->drain(on_record);
    if (overwrite) ::ioctl(place.fds[0].get(), PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
    if (!n) return Error{"ring of " + place_text(place.cpu, place.thread) + ": " + n.error().message};
    total += *n;
  }
  return total;
}

}  // namespace vperf::perf
