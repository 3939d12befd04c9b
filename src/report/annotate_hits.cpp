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
  // By the event's position among the file's attrs: in pipe mode an event's name may arrive
  // after its samples (EVENT_DESC at the end of the stream), so names are looked up at the end.
  using Key = std::tuple<size_t, const symbols::Dso*, uint64_t>;
  std::map<Key, SymbolHits> by_symbol;
  constexpr size_t kNoAttr = static_cast<size_t>(-1);
  auto attr_index = [&reader, kNoAttr](const data::EventAttrEntry* attr) {
    const auto& attrs = reader.attrs();
    for (size_t i = 0; i < attrs.size(); ++i)
      if (&attrs[i] == attr) return i;
    return kNoAttr;
  };
  SampleReplay replay(machines, ReplayOptions{.resolve_chain = false});
  Result<data::ReadStats> stats = replay.run(reader, [&](const ResolvedSample& s) {
    ++result.samples;
    const symbols::ResolvedAddress& at = s.at;
    if (at.symbol == nullptr || !at.map || !at.map->dso) {
      ++result.without_symbol;
      return true;
    }
    SymbolHits& hits = by_symbol[Key{attr_index(s.view.attr), at.map->dso.get(), at.symbol->start}];
    if (!hits.map) {
      hits.map = at.map;
      hits.symbol = at.symbol;
    }
    uint64_t period = s.sample.period ? s.sample.period : 1;
    AddressHits& here = hits.by_address[at.symbol_address];
    ++here.samples;
    here.period += period;
    ++hits.samples;
    hits.period += period;
    return true;
  });
  if (!stats) return stats.error();
  result.warnings = reader.warnings();
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
