#pragma once
// The libpfm4 and perfmon names, loaded only when a name reaches them. Loading the PMC
// catalog initialises libpfm4 and walks its tables (~15 ms); perf's builtins, raw events,
// PMU terms, sysfs aliases and tracepoints resolve before any named source is asked, so
// `vperf stat -e task-clock -- true` never pays for it.
#include <memory>
#include <optional>

#include "events/named_event_source.h"
#include "pmc/perfmon_event_source.h"
#include "pmc/pfm_event_source.h"
#include "pmc/pmc_catalog.h"

namespace vperf::events {

class DeferredPmcSource final : public NamedEventSource {
 public:
  explicit DeferredPmcSource(PmcCatalogOptions options) : options_(std::move(options)) {}

  // Perfmon first (Intel's tables are the reference where both know a name), then libpfm4,
  // as in EventEnvironment.
  std::optional<Result<ResolvedEvent>> resolve(std::string_view name) const override;
  std::vector<std::string> names() const override;

  bool loaded() const { return loaded_ != nullptr; }

 private:
  struct Sources {
    explicit Sources(PmcCatalog catalog);
    PmcCatalog pmc;
    PfmEventSource pfm;  // refers to pmc: Sources never moves
    std::optional<PerfmonEventSource> perfmon;
  };
  const Sources* sources() const;  // nullptr: libpfm4 does not know this machine's CPU

  PmcCatalogOptions options_;
  mutable std::unique_ptr<Sources> loaded_;
  // This machine's CPU is one libpfm4 does not know (a CPU newer than its tables): no PMC names,
  // rather than an error for every name that is not a builtin.
  mutable bool unknown_cpu_ = false;
};

}  // namespace vperf::events
