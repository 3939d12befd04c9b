#pragma once
// Intel perfmon JSON event names for the resolver: "L2_STORE_LOCK_RQSTS.HIT_M",
// "INST_RETIRED.ANY_P:u", "MEM_LOAD_RETIRED.L3_MISS:precise=2", "UOPS_ISSUED.ANY:c=1:i".
// Modifiers after the name (libpfm4's spelling, so both sources read alike):
//   u / k          count only user / only kernel level
//   c=N            CounterMask override        i   invert     e   edge detect
//   precise=N      precise_ip; more than the event's PEBS support allows is an error
// Core events resolve to PERF_TYPE_RAW; uncore events are not resolved here (their PMU type is
// the sysfs uncore box's), and the error says which uncore_*/.../ form to use.
#include <string>
#include <vector>

#include "events/named_event_source.h"
#include "pmc/perfmon_encoding.h"
#include "pmc/perfmon_json.h"

namespace vperf::events {

class PerfmonEventSource final : public NamedEventSource {
 public:
  PerfmonEventSource(std::vector<PerfmonFile> files, CoreLayout layout);

  std::optional<Result<ResolvedEvent>> resolve(std::string_view name) const override;
  std::vector<std::string> names() const override;

  // The event a name (without modifiers) refers to, case-insensitively.
  const PerfmonEvent* find(std::string_view event_name) const;

 private:
  std::vector<PerfmonFile> files_;
  CoreLayout layout_;
};

}  // namespace vperf::events
