#include "pmc/deferred_pmc_source.h"

namespace vperf::events {

DeferredPmcSource::Sources::Sources(PmcCatalog catalog) : pmc(std::move(catalog)), pfm(pmc) {}

DeferredPmcSource::Sources* DeferredPmcSource::sources() const {
  if (!loaded_ && !unknown_cpu_) {
    if (options_.model.empty() && !options_.perfmon && !running_cpu_has_pmc_model()) {
      unknown_cpu_ = true;
      return nullptr;
    }
    loaded_ = std::make_unique<Sources>(load_libpfm_catalog(options_));
  }
  return loaded_.get();
}

const PerfmonEventSource* DeferredPmcSource::perfmon(Sources& s) const {
  if (!s.perfmon_loaded) {
    add_perfmon_tables(s.pmc, options_);
    if (!s.pmc.perfmon.empty()) s.perfmon.emplace(s.pmc.perfmon, s.pmc.layout);
    s.perfmon_loaded = true;
  }
  return s.perfmon ? &*s.perfmon : nullptr;
}

std::optional<Result<ResolvedEvent>> DeferredPmcSource::resolve(std::string_view name) const {
  Sources* s = sources();
  if (!s) return std::nullopt;
  // "pmu::EVENT" names a libpfm4 table; every other name may be Intel's, whose tables win.
  if (name.find("::") == std::string_view::npos)
    if (const PerfmonEventSource* intel = perfmon(*s))
      if (auto answer = intel->resolve(name)) return answer;
  return s->pfm.resolve(name);
}

std::vector<std::string> DeferredPmcSource::names() const {
  Sources* s = sources();
  if (!s) return {};
  const PerfmonEventSource* intel = perfmon(*s);
  std::vector<std::string> all = intel ? intel->names() : std::vector<std::string>{};
  std::vector<std::string> pfm = s->pfm.names();
  all.insert(all.end(), std::make_move_iterator(pfm.begin()), std::make_move_iterator(pfm.end()));
  return all;
}

}  // namespace vperf::events
