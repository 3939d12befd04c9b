#include "report/annotate_hits.h"

#include <algorithm>
#include <tuple>

#include "report/sample_replay.h"

namespace vperf::report {

void sort_hottest_first(std::vector<SymbolHits>& symbols, const std::vector<std::string>& event_order) {
  auto rank = [&](const std::string& event) {
    auto it = std::find(event_order.begin(), event_order.end(), event);
    return static_cast<size_t>(it - event_order.begin());
  };
  std::stable_sort(symbols.begin(), symbols.end(), [&](const SymbolHits& a, const SymbolHits& b) {
    size_t ra = rank(a.event), rb = rank(b.event);
    if (ra != rb) return ra < rb;
    if (a.period != b.period) return a.period > b.period;
    if (a.samples != b.samples) return a.samples > b.samples;
    return std::tie(a.dso().name(), a.symbol->name) < std::tie(b.dso().name(), b.symbol->name);
  });
}

Result<AnnotateHits> collect_annotate_hits(data::PerfDataReader& reader, symbols::Machines& machines) {
  AnnotateHits result;
  // Samples counted per (event, ip frame) in the replay's profile, then gathered per symbol.
  Profile profile;
  SampleReplay replay(machines, profile, ReplayOptions{.resolve_chain = false});
  PerfDataSource source(reader);
  Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& s) {
    ++result.samples;
    uint32_t event = s.event == data::kNoAttrIndex ? kNoId : static_cast<uint32_t>(s.event);
    profile.count(event, 0, profile.intern_stack(std::span<const uint32_t>(&s.ip_frame, 1)), s.sample.period ? s.sample.period : 1);
    return true;
  });
  if (!stats) return stats.error();
  // By the event's position among the file's attrs: in pipe mode an event's name may arrive
  // after its samples (EVENT_DESC at the end of the stream), so names are looked up at the end.
  using Key = std::tuple<size_t, const symbols::Dso*, uint64_t>;
  std::map<Key, SymbolHits> by_symbol;
  for (const ProfileCount& counted : profile.counts()) {
    const symbols::ResolvedAddress& at = profile.frame(profile.stack(counted.stack).front()).at;
    if (at.symbol == nullptr || !at.map || !at.map->dso) {
      result.without_symbol += counted.value.samples;
      continue;
    }
    size_t event = counted.event == kNoId ? data::kNoAttrIndex : counted.event;
    SymbolHits& hits = by_symbol[Key{event, at.map->dso.get(), at.symbol->start}];
    if (!hits.map) {
      hits.map = at.map;
      hits.symbol = at.symbol;
    }
    AddressHits& here = hits.by_address[at.symbol_address];
    here.samples += counted.value.samples;
    here.period += counted.value.weight;
    hits.samples += counted.value.samples;
    hits.period += counted.value.weight;
  }
  result.warnings = reader.warnings();
  if (std::optional<std::string> note = replay.scope_note()) result.warnings.push_back(*note);
  std::vector<std::string> event_order;
  for (const auto& attr : reader.attrs()) event_order.push_back(attr.name);
  result.symbols.reserve(by_symbol.size());
  for (auto& [key, hits] : by_symbol) {
    size_t index = std::get<0>(key);
    if (index < event_order.size()) hits.event = event_order[index];
    result.symbols.push_back(std::move(hits));
  }
  sort_hottest_first(result.symbols, event_order);
  return result;
}

}  // namespace vperf::report
