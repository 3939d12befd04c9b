#pragma once
// The libpfm4 and perfmon names, loaded only when a name reaches them. Loading the PMC
// catalog initialises libpfm4 and walks its tables (~15 ms); perf's builtins, raw events,
// PMU terms, sysfs aliases and tracepoints resolve before any named source is asked, so
// `vperf stat -e task-clock -- true` never pays for it. Intel's perfmon tables (the bundled
// ones of this CPU, pmc/perfmon_bundle.h, or --perfmon's) are read and decompressed later
// still: when a name that could be Intel's (no libpfm4 "pmu::" prefix) reaches them.
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
  // Whether Intel's perfmon tables have been looked for (and read, if this CPU has one).
  bool perfmon_loaded() const { return loaded_ != nullptr && loaded_->perfmon_loaded; }

 private:
  struct Sources {
    explicit Sources(PmcCatalog catalog);
    PmcCatalog pmc;  // libpfm4's tables; pmc.perfmon is filled when Intel's are first needed
    PfmEventSource pfm;
    bool perfmon_loaded = false;
    std::optional<PerfmonEventSource> perfmon;  // empty: no Intel table for this CPU
  };
  Sources* sources() const;  // nullptr: libpfm4 does not know this machine's CPU
  const PerfmonEventSource* perfmon(Sources& s) const;  // reads Intel's tables on first use

  PmcCatalogOptions options_;
  mutable std::unique_ptr<Sources> loaded_;
  // This machine's CPU is one libpfm4 does not know (a CPU newer than its tables): no PMC names,
  // rather than an error for every name that is not a builtin.
  mutable bool unknown_cpu_ = false;
};

}  // namespace vperf::events
