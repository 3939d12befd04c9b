#include "pmc/encoding_disagreements.h"

#include <boost/json.hpp>
#include <set>

#include "core/strings.h"
#include "pmc/perfmon_encoding.h"

namespace vperf::events {

namespace {

std::string join_key(std::string_view event, std::string_view umask) {
  return to_upper(event) + "." + to_upper(umask);
}

bool same_counter(const PerfmonEvent& event, const PerfmonEncoding& intel, uint64_t libpfm_config) {
  if (libpfm_config == intel.config) return true;
  for (uint64_t alternative : intel.alternative_configs)
    if (libpfm_config == alternative) return true;
  return event.fixed_counter && libpfm_config == (uint64_t{event.event_codes.front()} | uint64_t{event.umask} << 8);
}

}  // namespace

EncodingDisagreements::EncodingDisagreements(const PmcCatalog& catalog) {
  const PmcPmuEntry* core = catalog.core_pmu();
  if (core == nullptr || !core->encoded || catalog.perfmon.empty()) return;
  // libpfm4's EVENT:UMASK encodings by "EVENT.UMASK".
  std::map<std::string, std::pair<std::string, uint64_t>, std::less<>> libpfm;
  for (const PfmEvent& e : core->pmu.events)
    for (size_t i = 0; i < e.umasks.size() && i < e.umask_encodings.size(); ++i)
      if (const std::optional<PfmEncoding>& enc = e.umask_encodings[i])
        libpfm.emplace(join_key(e.name, e.umasks[i].name),
                       std::make_pair(e.pmu + "::" + e.name + ":" + e.umasks[i].name, enc->config));

  std::set<std::string, std::less<>> seen;
  for (const PerfmonFile& file : catalog.perfmon) {
    for (const PerfmonEvent& e : file.events) {
      if (e.is_uncore()) continue;
      std::vector<std::string_view> parts = split(e.name, '.');
      if (parts.size() != 2) continue;  // three-part names (OFFCORE_RESPONSE.X.Y) have no libpfm4 twin
      std::string key = join_key(parts[0], parts[1]);
      if (!seen.insert(key).second) continue;  // a name listed twice: the first is the one that resolves
      auto twin = libpfm.find(key);
      if (twin == libpfm.end()) continue;
      ++compared_;
      PerfmonEncoding intel = encode_perfmon_event(e, catalog.layout);
      if (same_counter(e, intel, twin->second.second)) continue;
      by_key_.emplace(key, disagreements_.size());
      disagreements_.push_back({e.name, twin->second.first, intel.config, twin->second.second});
    }
  }
}

const EncodingDisagreement* EncodingDisagreements::for_perfmon(std::string_view perfmon_name) const {
  std::vector<std::string_view> parts = split(perfmon_name, '.');
  if (parts.size() != 2) return nullptr;
  return for_libpfm(parts[0], parts[1]);
}

const EncodingDisagreement* EncodingDisagreements::for_libpfm(std::string_view event, std::string_view umask) const {
  auto it = by_key_.find(join_key(event, umask));
  return it == by_key_.end() ? nullptr : &disagreements_[it->second];
}

std::string OtherCatalogEncoding::text() const { return "(" + catalog + ": " + perf_raw_syntax(config) + ")"; }

boost::json::value other_catalog_json(const std::optional<OtherCatalogEncoding>& other) {
  if (!other) return nullptr;
  return boost::json::object{{"catalog", other->catalog}, {"raw", perf_raw_syntax(other->config)}, {"config", hex(other->config)}};
}

std::optional<OtherCatalogEncoding> libpfm_encoding_if_different(const EncodingDisagreements& d, std::string_view perfmon_name) {
  if (const EncodingDisagreement* found = d.for_perfmon(perfmon_name)) return OtherCatalogEncoding{"libpfm4", found->libpfm_config};
  return std::nullopt;
}

std::optional<OtherCatalogEncoding> perfmon_encoding_if_different(const EncodingDisagreements& d, std::string_view event,
                                                                  std::string_view umask) {
  if (const EncodingDisagreement* found = d.for_libpfm(event, umask)) return OtherCatalogEncoding{"perfmon", found->perfmon_config};
  return std::nullopt;
}

}  // namespace vperf::events
