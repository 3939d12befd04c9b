#include "pmc/deferred_pmc_source.h"

namespace vperf::events {

DeferredPmcSource::Sources::Sources(PmcCatalog catalog) : pmc(std::move(catalog)), pfm(pmc) {
  if (!pmc.perfmon.empty()) perfmon.emplace(pmc.perfmon, pmc.layout);
}

const DeferredPmcSource::Sources* DeferredPmcSource::sources() const {
  if (!loaded_ && !unknown_cpu_) {
    if (options_.model.empty() && !options_.perfmon && !running_cpu_has_pmc_model()) {
      unknown_cpu_ = true;
      return nullptr;
    }
    loaded_ = std::make_unique<Sources>(load_pmc_catalog(options_));
  }
  return loaded_.get();
}

std::optional<Result<ResolvedEvent>> DeferredPmcSource::resolve(std::string_view name) const {
  if (!sources()) return std::nullopt;
  const Sources& s = *sources();
  if (s.perfmon)
    if (auto answer = s.perfmon->resolve(name)) return answer;
  return s.pfm.resolve(name);
}

std::vector<std::string> DeferredPmcSource::names() const {
  if (!sources()) return {};
  const Sources& s = *sources();
  std::vector<std::string> all = s.perfmon ? s.perfmon->names() : std::vector<std::string>{};
  std::vector<std::string> pfm = s.pfm.names();
  all.insert(all.end(), std::make_move_iterator(pfm.begin()), std::make_move_iterator(pfm.end()));
  return all;
}

}  // namespace vperf::events
