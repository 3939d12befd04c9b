#pragma once
// Ids of things a caller keeps in its own vector (stacks, chains, histogram entries, call-graph
// nodes), found by a 64-bit hash of the thing and the caller's equality test.
//
// The reading side looks one of these up for every sample and every frame: millions of times
// per report. std::unordered_map allocates a node per key and follows a pointer or two per
// lookup, and on real programs' profiles (many distinct addresses) those cache misses were
// where the time went. Here the table is one array of 8-byte (tag, id) slots, open addressing
// with linear probing, at most half full: a lookup reads one or two adjacent slots, and
// compares the thing itself only when the slot's tag matches (32 bits of the spread hash, whose
// low bits are also the slot's index). The slots stay 8 bytes, not 16 with the whole hash:
// on real programs' profiles these tables hold hundreds of thousands of ids, and a lookup's
// cost is whether its slot is still in a cache.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace vperf::core {

class HashedIds {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr size_t kSlotBytes = 8;  // a slot's size: at most twice this per id

  // The id whose hash is `hash` and for which equal(id) holds, else kNone.
  template <class Equal>
  uint32_t find(uint64_t hash, Equal&& equal) const {
    if (slots_.empty()) return kNone;
    const uint32_t tag = tag_of(hash);
    const size_t mask = slots_.size() - 1;
    for (size_t at = tag & mask;; at = (at + 1) & mask) {
      ++probes_;
      const Slot& slot = slots_[at];
      if (slot.id == kNone) return kNone;
      if (slot.tag == tag && equal(slot.id)) return slot.id;
    }
  }

  // The id of the thing equal(id) finds under `hash`, or else `next` (the id the caller gives
  // the thing it adds next) entered under it; .second tells whether it was entered.
  template <class Equal>
  std::pair<uint32_t, bool> find_or_insert(uint64_t hash, Equal&& equal, uint32_t next) {
    const uint32_t found = find(hash, equal);
    if (found != kNone) return {found, false};
    insert(hash, next);
    return {next, true};
  }

  // Adds `id` under `hash`; the caller has made sure no equal thing is there.
  void insert(uint64_t hash, uint32_t id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    place(tag_of(hash), id);
    ++size_;
  }

  size_t size() const { return size_; }
  // Forgets every id but keeps the table's size: a cache emptied when full (the replay's walked
  // chains, script's forgotten profile) fills up again, and growing it anew each time, doubling
  // from 64 slots and placing every id again, cost 3% of a system-wide script.
  void clear() {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    size_ = 0;
  }
  // Slots looked at by find() so far: what a test counts to show lookups stay constant.
  uint64_t probes() const { return probes_; }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t id = kNone;
  };

  // Callers' hashes may be weak in the low bits (a multiply, a pointer): the finalizer of
  // MurmurHash3 spreads every bit over the tag, which places the slot too (so growing needs
  // nothing but the tags; ids are 32-bit, so a table never needs more than 2^32 slots' index).
  static uint32_t tag_of(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return static_cast<uint32_t>((h ^ (h >> 33)) >> 32);
  }
  void place(uint32_t tag, uint32_t id) {
    const size_t mask = slots_.size() - 1;
    size_t at = tag & mask;
    while (slots_[at].id != kNone) at = (at + 1) & mask;
    slots_[at] = Slot{tag, id};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    for (const Slot& slot : old)
      if (slot.id != kNone) place(slot.tag, slot.id);
  }

  static_assert(sizeof(Slot) == kSlotBytes);

  std::vector<Slot> slots_;
  size_t size_ = 0;
  mutable uint64_t probes_ = 0;
};

}  // namespace vperf::core
