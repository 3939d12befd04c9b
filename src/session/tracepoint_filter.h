#pragma once
// perf's --filter (record and stat): a filter for the event named last, which must be a
// tracepoint; the kernel checks the expression when it is set. The errors both commands give.
#include <string>

#include "core/error.h"

namespace vperf::session {

// The last event is `event_name`, not a tracepoint.
UserError filter_needs_a_tracepoint(const std::string& event_name);
// The kernel refused `filter` (PERF_EVENT_IOC_SET_FILTER).
UserError filter_refused(const std::string& filter, const Error& why);

}  // namespace vperf::session
