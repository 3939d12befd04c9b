#pragma once
// A mapping of a Dso into an address space, and the set of them one process (or the kernel)
// has. Maps are immutable and shared; a MapSet copies cheaply (fork copies the parent's set).
//
// MapSet::insert follows perf's maps__fixup_overlappings: a new mapping replaces the part of
// every old one it overlaps, so an old map is cut to the piece before and/or after the new one
// (the piece after keeps its file offset right: pgoff moves by the bytes cut off).
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "symbols/dso.h"

namespace vperf::symbols {

enum class MapAddressing : uint8_t {
  // ip -> ip - start + pgoff (a file offset): mmaps of files and the [vdso].
  FileOffset,
  // ip -> ip + delta: the kernel, modules and anonymous (JIT) memory. delta is non-zero for a
  // kernel recorded under another KASLR offset than the kallsyms read now.
  Absolute,
};

struct Map {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint64_t pgoff = 0;
  uint32_t prot = 0;  // PROT_* as recorded (0 = unknown)
  MapAddressing addressing = MapAddressing::FileOffset;
  int64_t delta = 0;  // Absolute only
  std::shared_ptr<const Dso> dso;

  bool contains(uint64_t ip) const { return ip >= start && ip < end; }
  // perf's map__map_ip: the address perf script prints for a callchain entry.
  uint64_t map_ip(uint64_t ip) const {
    return addressing == MapAddressing::FileOffset ? ip - start + pgoff : ip + static_cast<uint64_t>(delta);
  }
  uint64_t unmap_ip(uint64_t relative) const {
    return addressing == MapAddressing::FileOffset ? relative - pgoff + start : relative - static_cast<uint64_t>(delta);
  }
};

class MapSet {
 public:
  MapSet() : version_(next_version()) {}
  MapSet(const MapSet& other) : maps_(other.maps_), version_(next_version()) {}
  MapSet& operator=(const MapSet& other) {
    maps_ = other.maps_;
    version_ = next_version();
    return *this;
  }
  // Different for every MapSet and after every change of one (a copy, an insert, a clear), so
  // that a cache of resolved addresses can key on it and never clear: a MapSet freed and another
  // made at its address has another version. Versions come from one process-wide counter.
  uint64_t version() const { return version_; }

  // Inserts `map`, cutting the maps it overlaps (see above). Empty maps are ignored.
  void insert(Map map);
  // The map containing ip, or nullptr.
  const Map* find(uint64_t ip) const;
  std::shared_ptr<const Map> find_shared(uint64_t ip) const;
  // The map starting last at or below ip, whether or not it reaches ip; nullptr if none.
  std::shared_ptr<const Map> find_preceding(uint64_t ip) const;
  // Maps in address order.
  std::vector<std::shared_ptr<const Map>> maps() const;
  size_t size() const { return maps_.size(); }
  bool empty() const { return maps_.empty(); }
  void clear() {
    maps_.clear();
    version_ = next_version();
  }

 private:
  static uint64_t next_version();

  std::map<uint64_t, std::shared_ptr<const Map>> maps_;  // by start
  uint64_t version_;
};

}  // namespace vperf::symbols
