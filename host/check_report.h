#pragma once
// Renderers for a CheckResult: the text report of `vperf check` and its --json form.
// JSON keys that scripts rely on (keep them stable): cpu.vendor, cpu.family, cpu.model,
// hypervisor.vendor (null on bare metal), arch_perfmon.{version, gp_counters, gp_width,
// fixed_counters, unavailable_events}, verdicts.<name>.{available, reason, fix}.
#include <boost/json.hpp>
#include <ostream>

#include "host/capability_check.h"

namespace vperf::host {

void render_check_text(const CheckResult& result, std::ostream& out);
boost::json::value check_to_json(const CheckResult& result);

}  // namespace vperf::host
