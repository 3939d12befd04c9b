#include "pmc/event_environment.h"

namespace vperf::events {

std::unique_ptr<EventEnvironment> EventEnvironment::load(const EventEnvironmentOptions& options) {
  return std::unique_ptr<EventEnvironment>(new EventEnvironment(load_pmc_catalog(options.pmc), options));
}

EventEnvironment::EventEnvironment(PmcCatalog pmc, const EventEnvironmentOptions& options)
    : pmc_(std::move(pmc)), pfm_(pmc_) {
  if (!pmc_.perfmon.empty()) perfmon_.emplace(pmc_.perfmon, pmc_.layout);
  EventCatalogConfig config;
  config.sysfs_pmu_root = options.pmc.sysfs_pmu_root;
  config.tracefs_root = options.tracefs_root;
  // Intel's perfmon tables are the reference where both know a name, so they are asked first.
  if (perfmon_) config.named_sources.push_back(&*perfmon_);
  config.named_sources.push_back(&pfm_);
  // "--model X" means: encode for X. Its core PMU's format replaces this machine's.
  if (!options.pmc.model.empty()) config.core_pmu_override = core_pmu_for_layout(pmc_.layout);
  catalog_.emplace(EventCatalog::load(config));
}

}  // namespace vperf::events
