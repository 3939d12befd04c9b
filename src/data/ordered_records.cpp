#include "data/ordered_records.h"

#include <algorithm>
#include <type_traits>

namespace vperf::data {

static_assert(sizeof(OrderedRecords::Entry) == 24 && std::is_trivially_copyable_v<OrderedRecords::Entry>);

void OrderedRecords::push(const Entry& entry, std::vector<uint8_t>&& owned) {
  if (entry.time < last_delivered_) ++unordered_;
  max_time_ = std::max(max_time_, entry.time);
  Entry queued = entry;
  if (holds_bytes_) {
    if (free_slots_.empty()) {
      free_slots_.push_back(static_cast<uint32_t>(held_.size()));
      held_.emplace_back();
    }
    queued.size = free_slots_.back();
    free_slots_.pop_back();
    held_[queued.size] = std::move(owned);
  }
  queue_.push_back(queued);
}

uint64_t OrderedRecords::lowest_offset(uint64_t bound) const {
  for (const Entry& e : queue_) bound = std::min(bound, e.offset);
  return bound;
}

// By time, ties in arrival order. The queue is made of runs already in time order (what one
// CPU's ring buffer gave in a round, and what the last flush kept): they are merged pairwise,
// log2(runs) passes instead of a full sort's log2(records), through a buffer kept from round to
// round.
void OrderedRecords::sort() {
  auto by_time = [](const Entry& a, const Entry& b) { return a.time < b.time; };
  run_starts_.clear();
  run_starts_.push_back(0);
  for (size_t i = 1; i < queue_.size(); ++i)
    if (queue_[i].time < queue_[i - 1].time) run_starts_.push_back(i);
  if (run_starts_.size() == 1) return;
  run_starts_.push_back(queue_.size());
  merged_.resize(queue_.size());
  while (run_starts_.size() > 2) {
    size_t kept = 0;
    for (size_t r = 0; r + 1 < run_starts_.size(); r += 2) {
      const size_t first = run_starts_[r], middle = run_starts_[r + 1];
      const size_t last = r + 2 < run_starts_.size() ? run_starts_[r + 2] : middle;
      std::merge(queue_.begin() + first, queue_.begin() + middle, queue_.begin() + middle, queue_.begin() + last,
                 merged_.begin() + first, by_time);  // stable: the earlier run's first on ties
      run_starts_[kept++] = first;
    }
    run_starts_[kept++] = queue_.size();
    run_starts_.resize(kept);
    queue_.swap(merged_);
  }
}

void OrderedRecords::release_slot(uint32_t slot) {
  held_[slot] = {};
  free_slots_.push_back(slot);
}

void OrderedRecords::forget_first(size_t count) {
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(count));
}

}  // namespace vperf::data
