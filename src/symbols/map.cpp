#include "symbols/map.h"

#include <atomic>

namespace vperf::symbols {

uint64_t MapSet::next_version() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

void MapSet::insert(Map map) {
  version_ = next_version();
  if (map.end <= map.start) return;
  // Candidates: the map that starts before the new one (it may reach into it) and every map
  // that starts inside it.
  auto it = maps_.lower_bound(map.start);
  if (it != maps_.begin()) --it;
  std::vector<Map> pieces;
  while (it != maps_.end() && it->second->start < map.end) {
    const Map& old = *it->second;
    if (old.end <= map.start) {
      ++it;
      continue;
    }
    if (old.start < map.start) {
      Map before = old;
      before.end = map.start;
      pieces.push_back(std::move(before));
    }
    if (old.end > map.end) {
      Map after = old;
      after.start = map.end;
      if (after.addressing == MapAddressing::FileOffset) after.pgoff += map.end - old.start;
      pieces.push_back(std::move(after));
    }
    it = maps_.erase(it);
  }
  for (auto& piece : pieces) {
    uint64_t start = piece.start;
    maps_.emplace(start, std::make_shared<const Map>(std::move(piece)));
  }
  uint64_t start = map.start;
  maps_.emplace(start, std::make_shared<const Map>(std::move(map)));
}

std::shared_ptr<const Map> MapSet::find_shared(uint64_t ip) const {
  auto it = maps_.upper_bound(ip);
  if (it == maps_.begin()) return nullptr;
  --it;
  return it->second->contains(ip) ? it->second : nullptr;
}

const Map* MapSet::find(uint64_t ip) const { return find_shared(ip).get(); }

std::shared_ptr<const Map> MapSet::find_preceding(uint64_t ip) const {
  auto it = maps_.upper_bound(ip);
  if (it == maps_.begin()) return nullptr;
  return std::prev(it)->second;
}

std::vector<std::shared_ptr<const Map>> MapSet::maps() const {
  std::vector<std::shared_ptr<const Map>> out;
  out.reserve(maps_.size());
  for (const auto& [start, map] : maps_) out.push_back(map);
  return out;
}

}  // namespace vperf::symbols
