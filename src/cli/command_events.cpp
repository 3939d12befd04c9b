#include "cli/command_events.h"

namespace vperf::cli {

namespace {

events::EventCatalogConfig config_with(const events::NamedEventSource* names) {
  events::EventCatalogConfig config;
  config.named_sources = {names};
  return config;
}

}  // namespace

CommandEvents::CommandEvents()
    : pmc_names_(events::PmcCatalogOptions{}), catalog_(events::EventCatalog::load(config_with(&pmc_names_))) {}

bool CommandEvents::core_pmu_has(std::string_view alias) const {
  const events::SysfsPmu* core = catalog_.find_pmu(catalog_.core_pmu());
  return core && core->find_event(alias);
}

}  // namespace vperf::cli
