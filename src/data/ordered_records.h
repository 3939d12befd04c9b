#pragma once
// perf's ordered_events: the records of a perf.data file are written per CPU buffer, so within
// a round (between FINISHED_ROUND records) they are not in time order. perf queues them and,
// at each FINISHED_ROUND, delivers in time order everything up to the newest time it had seen
// by the round before (no CPU can still write older records than that); what is left at the
// end is delivered last. Ties keep their arrival order. PerfDataReader::read feeds this queue;
// it holds 24-byte entries that sort cheaply, and a record's bytes stay where they are (the
// mapped file) unless the queue was asked to hold them (records read from a pipe).
#include <cstdint>
#include <span>
#include <vector>

namespace vperf::data {

class OrderedRecords {
 public:
  // What a record is to the queue: its time, where it is in the input and its size there, the
  // index of its event (opaque here).
  struct Entry {
    uint64_t time;
    uint64_t offset;
    uint32_t size;
    uint32_t attr;
  };

  // holds_bytes: records come with their bytes (`push`'s owned), kept until delivered.
  explicit OrderedRecords(bool holds_bytes) : holds_bytes_(holds_bytes) {}

  // Queues a record. `owned` is taken only when the queue holds bytes.
  void push(const Entry& entry, std::vector<uint8_t>&& owned = {});

  // A FINISHED_ROUND: delivers, in time order, the records up to the newest time seen before
  // the last round. deliver(entry, bytes) gets the held bytes (empty when the queue does not
  // hold them) and returns false to stop; nothing more is delivered after a stop.
  template <class Deliver>
  void finish_round(Deliver&& deliver) {
    flush(next_flush_, deliver);
    next_flush_ = max_time_;
  }
  // The end of the input: delivers everything left, in time order.
  template <class Deliver>
  void finish(Deliver&& deliver) {
    flush(UINT64_MAX, deliver);
  }

  bool stopped() const { return stopped_; }
  // Queued records whose time is older than one already delivered (perf counts them too).
  uint64_t unordered() const { return unordered_; }
  // The lowest input offset a queued record starts at, or `bound` if that is lower (what the
  // reader may drop from memory below).
  uint64_t lowest_offset(uint64_t bound) const;

 private:
  template <class Deliver>
  void flush(uint64_t limit, Deliver& deliver) {
    sort();
    size_t done = 0;
    for (; done < queue_.size() && queue_[done].time <= limit && !stopped_; ++done) {
      Entry entry = queue_[done];
      last_delivered_ = entry.time;
      if (!holds_bytes_) {
        if (!deliver(entry, std::span<const uint8_t>())) stopped_ = true;
        continue;
      }
      const uint32_t slot = entry.size;
      entry.size = static_cast<uint32_t>(held_[slot].size());
      if (!deliver(entry, std::span<const uint8_t>(held_[slot]))) stopped_ = true;
      release_slot(slot);
    }
    forget_first(done);
  }
  // Queued entries: a record whose bytes the queue holds has its slot in held_ as its size.
  void sort();
  void release_slot(uint32_t slot);
  void forget_first(size_t count);

  bool holds_bytes_;
  bool stopped_ = false;
  std::vector<Entry> queue_, merged_;
  std::vector<size_t> run_starts_;
  std::vector<std::vector<uint8_t>> held_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_flush_ = 0, max_time_ = 0, last_delivered_ = 0, unordered_ = 0;
};

}  // namespace vperf::data
