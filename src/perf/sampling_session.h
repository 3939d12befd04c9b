#pragma once
// Sampling for `vperf record`: every event opened on every place the target asks for (each
// task, or each CPU), one RingBuffer per place shared by the events there
// (PERF_EVENT_IOC_SET_OUTPUT), each counter's kernel id known (PERF_EVENT_IOC_ID) so the
// perf.data attr section can map sample ids back to events.
//
// Places follow perf record: -a/-C open per CPU with pid = -1 (one ring per CPU); tasks that
// are followed into their children (inherit) are opened per task and per CPU, because the
// kernel refuses to map a ring for an inherited counter that is not bound to a CPU; tasks
// without inherit are opened once each with cpu = -1.
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "perf/event_fd.h"
#include "perf/ring_buffer.h"

namespace vperf::perf {

struct SamplingTarget {
  std::vector<pid_t> threads;  // tasks to sample; empty: system-wide on `cpus`
  // System-wide: the CPUs. With threads: each thread is opened once per CPU listed (the
  // kernel maps no ring for an inherited per-task counter with cpu = -1, so inheriting
  // tasks are sampled per CPU, as perf does); empty: once per thread, cpu = -1.
  std::vector<int> cpus;
};

struct SamplingEvent {
  std::string name;      // as perf names it ("cycles", "cpu-clock", "sched:sched_switch")
  perf_event_attr attr;  // complete: sample_type, period/freq, tracking bits on the first
  // A group member's leader, by index among the session's events (opened with it as group_fd,
  // earlier in the list); -1 for a leader or an event alone.
  int group_leader = -1;
};

// Asked when `event` cannot be opened somewhere (`error` carries perf_event_open's errno). It
// may change the event (perf's fallbacks: cycles -> cpu-clock, user space only at
// perf_event_paranoid >= 2) and return true: everything is then opened again with the changed
// event, so that all its counters agree. It must return false once it has nothing left to try.
using OpenRetry = std::function<bool(SamplingEvent& event, const Error& error)>;

class SamplingSession {
 public:
  // Opens everything and maps one ring of `data_pages` (a power of two) per place. The Error
  // names the event and the place; its errno is perf_event_open's (or mmap's).
  static Result<SamplingSession> open(const PerfEventOpener& opener, std::vector<SamplingEvent> events,
                                      const SamplingTarget& target, size_t data_pages, const OpenRetry& retry = {});

  const std::vector<SamplingEvent>& events() const { return events_; }
  // Kernel ids of each event's counters, in events() order (for the attr section).
  const std::vector<std::vector<uint64_t>>& ids() const { return ids_; }

  // A tracepoint filter ("prev_pid == 0") on every counter of event `index`.
  Result<void> set_filter(size_t index, const std::string& filter) const;

  // Starts and stops the counters that do not start on exec.
  Result<void> enable() const;
  Result<void> disable() const;
  // Every counter of every event, or of event `index` only, on or off (a control command's
  // enable and disable, once the command runs: enable on exec no longer matters).
  Result<void> set_enabled(bool on, std::optional<size_t> index) const;

  // One fd per ring, to poll (session/run_loop.h): readable when the ring has data past its
  // wakeup mark, hung up (POLLHUP) once its task has exited. A hung-up ring is not polled again
  // (as perf does: every later poll would return at once), but it is still drained.
  std::vector<int> ring_fds() const;

  // Hands every record now in the rings to `on_record`, ring by ring. Returns the count. Rings
  // of write_backward events are overwrite rings: each drain is a snapshot (ring_buffer.h).
  Result<size_t> drain(const std::function<void(std::span<const uint8_t>)>& on_record);

 private:
  struct Place {
    int cpu = -1;
    pid_t thread = -1;
    std::vector<EventFd> fds;  // one per event; fds[0] owns the ring
    std::optional<RingBuffer> ring;
  };

  // One attempt; on failure `failed_event` is the index of the event that was refused.
  static Result<SamplingSession> open_once(const PerfEventOpener& opener, std::vector<SamplingEvent> events,
                                           const SamplingTarget& target, size_t data_pages, size_t& failed_event);

  std::vector<SamplingEvent> events_;
  std::vector<std::vector<uint64_t>> ids_;
  std::vector<Place> places_;
};

}  // namespace vperf::perf
