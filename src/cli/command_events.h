#pragma once
// The event resolver of the commands that open counters (stat, record): perf's builtins, raw
// events, sysfs PMUs and tracepoints, with the libpfm4/perfmon names loaded only when a name
// reaches them (pmc/deferred_pmc_source.h), so a plain `-e task-clock` costs what perf's does.
#include <string_view>
#include <vector>

#include "pmc/deferred_pmc_source.h"
#include "events/event_catalog.h"

namespace vperf::cli {

class CommandEvents {
 public:
  CommandEvents();
  CommandEvents(const CommandEvents&) = delete;  // the catalog points at pmc_names_
  CommandEvents& operator=(const CommandEvents&) = delete;

  const events::EventCatalog& catalog() const { return catalog_; }
  // Throws usage_error for unknown events, as EventCatalog::resolve.
  std::vector<events::ResolvedGroup> resolve(std::string_view list) const { return catalog_.resolve(list); }
  // The core PMU publishes this event alias (perf adds stalled-cycles to stat's default set then).
  bool core_pmu_has(std::string_view alias) const;

 private:
  events::DeferredPmcSource pmc_names_;
  events::EventCatalog catalog_;
};

}  // namespace vperf::cli
