#pragma once
// libpfm4 event names for the resolver:
//   INST_RETIRED:ANY_P              event:umask with libpfm's own modifiers (:u :k :c=1 :i :e :t
//   INST_RETIRED:ANY_P:u:c=1        :precise=2 :ldlat=3 ...), checked by libpfm4 itself
//   ivb::L2_STORE_LOCK_RQSTS:HIT_M  a PMU prefix picks that model, whatever the machine is
//   L2_STORE_LOCK_RQSTS.HIT_M       the SDM/perfmon dotted form, when libpfm4 knows EVENT:UMASK
// Core events resolve to PERF_TYPE_RAW with libpfm's config/config1.
//
// libpfm4 is not kept initialised between calls: names() comes from the catalog snapshot and
// each resolve() opens a short PfmSession (see pfm_session.h), so this source can live as long
// as the resolver without holding libpfm's global state.
#include <string>
#include <vector>

#include "events/named_event_source.h"
#include "pmc/pmc_catalog.h"

namespace vperf::events {

class PfmEventSource final : public NamedEventSource {
 public:
  // Knows the events of the catalog's encodable PMUs (the model's core PMU, and on the running
  // CPU its uncore and RAPL PMUs as well).
  explicit PfmEventSource(const PmcCatalog& catalog);

  std::optional<Result<ResolvedEvent>> resolve(std::string_view name) const override;
  std::vector<std::string> names() const override;

  // What resolve() found besides the ResolvedEvent: libpfm's description and PEBS flag.
  struct Details {
    std::string description;
    std::string fully_qualified;
    bool precise = false;
  };
  std::optional<Result<std::pair<ResolvedEvent, Details>>> resolve_with_details(std::string_view name) const;

 private:
  PmcModel model_;
  std::vector<std::string> pmu_names_;  // encodable libpfm PMUs, core first: where bare names are looked up
  std::vector<std::string> names_;
};

}  // namespace vperf::events
