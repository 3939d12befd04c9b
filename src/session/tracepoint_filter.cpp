#include "session/tracepoint_filter.h"

namespace vperf::session {

UserError filter_needs_a_tracepoint(const std::string& event_name) {
  return usage_error("--filter applies to a tracepoint, and " + event_name + " is not one",
                     "e.g. -e sched:sched_switch --filter 'prev_pid == 0'");
}

UserError filter_refused(const std::string& filter, const Error& why) {
  return usage_error("the kernel refused the filter '" + filter + "': " + why.describe(),
                     "see the event's fields in /sys/kernel/tracing/events/<subsystem>/<event>/format");
}

}  // namespace vperf::session
