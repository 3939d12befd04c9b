#pragma once
// Everything a command needs to turn user event strings into events for one CPU model:
// the PMC catalog (libpfm4, and Intel perfmon JSON when asked), the two named-event sources
// built from it, and the resolver over perf's builtins, sysfs PMUs, tracefs and those sources.
// The resolver holds pointers to the sources, so the environment lives behind a unique_ptr
// and never moves.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "events/event_catalog.h"
#include "pmc/perfmon_event_source.h"
#include "pmc/pfm_event_source.h"
#include "pmc/pmc_catalog.h"

namespace vperf::events {

struct EventEnvironmentOptions {
  PmcCatalogOptions pmc;                              // --model, --perfmon, sysfs root
  std::optional<std::filesystem::path> tracefs_root;  // nullopt: find the mount
};

class EventEnvironment {
 public:
  // Throws UserError for an unknown model or unreadable perfmon files.
  static std::unique_ptr<EventEnvironment> load(const EventEnvironmentOptions& options);

  EventEnvironment(const EventEnvironment&) = delete;
  EventEnvironment& operator=(const EventEnvironment&) = delete;

  const PmcCatalog& pmc() const { return pmc_; }
  const EventCatalog& catalog() const { return *catalog_; }
  const PfmEventSource& pfm() const { return pfm_; }
  const PerfmonEventSource* perfmon() const { return perfmon_ ? &*perfmon_ : nullptr; }

 private:
  EventEnvironment(PmcCatalog pmc, const EventEnvironmentOptions& options);

  PmcCatalog pmc_;
  PfmEventSource pfm_;
  std::optional<PerfmonEventSource> perfmon_;
  std::optional<EventCatalog> catalog_;
};

}  // namespace vperf::events
