#pragma once
// The per-CPU (or per-thread) sample buffer the kernel fills for a sampling event.
//
// Layout (linux/perf_event.h): one metadata page (struct perf_event_mmap_page) followed by
// 2^n data pages used as a ring. The kernel writes records and advances data_head; the
// reader consumes up to data_head and publishes data_tail so the kernel may reuse the space.
//
// Memory ordering, as the header documents it: read data_head with acquire semantics before
// reading the records it covers; store data_tail with release semantics after the last read
// of them. A record may wrap from the end of the data area to its start: it is copied into a
// contiguous buffer before it is handed out. Every record begins with perf_event_header; a
// header whose size is zero or larger than the ring is corruption, and draining stops there
// (the caller reports it) rather than looping or reading out of bounds.
//
// An overwrite ring (record --overwrite: attr.write_backward, mapped read-only) is a flight
// recorder: the kernel writes backward from data_head (which counts down) over the oldest
// records and never waits for a reader. drain() then takes a snapshot: the records written since
// the last one (at most the ring's size), newest at data_head, handed out oldest first. A record
// the newest ones overwrote in part, and the ring's never-written zeroes, end the snapshot.
#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/error.h"

namespace vperf::perf {

// The reader over a metadata page and a data area, whoever mapped them (the kernel, or a
// test). Not owning.
class RingBufferView {
 public:
  RingBufferView(perf_event_mmap_page* meta, uint8_t* data, size_t data_size, bool overwrite = false)
      : meta_(meta), data_(data), size_(data_size), overwrite_(overwrite) {}

  // Hands every complete record available now to `on_record`, then releases the space.
  // Returns the number of records, or an Error for a corrupt header (the space up to it is
  // released; the ring is unusable afterwards).
  Result<size_t> drain(const std::function<void(std::span<const uint8_t>)>& on_record);

  // Bytes written by the kernel and not yet consumed.
  uint64_t pending() const;

 private:
  Result<size_t> snapshot(const std::function<void(std::span<const uint8_t>)>& on_record);
  // The record header at ring position `position` (it may straddle the end).
  perf_event_header header_at(uint64_t position) const;
  // The `size` bytes at `position`, contiguous (copied into wrapped_ if they cross the end).
  std::span<const uint8_t> bytes_at(uint64_t position, size_t size);

  perf_event_mmap_page* meta_;
  uint8_t* data_;
  size_t size_;  // a power of two
  bool overwrite_ = false;
  uint64_t snapshot_head_ = 0;  // overwrite: data_head at the last snapshot (0: the start)
  std::vector<uint8_t> wrapped_;  // reused for records that cross the end
};

// Owns the mapping of one sampling event's fd.
class RingBuffer {
 public:
  // Maps 1 + data_pages pages of `fd` (data_pages a power of two; perf's default is 128 at
  // 4 KiB, "-m PAGES"), read-only for an overwrite ring. EPERM here usually means
  // perf_event_mlock_kb is exhausted.
  static Result<RingBuffer> map(int fd, size_t data_pages, bool overwrite = false);

  RingBuffer(RingBuffer&& other) noexcept;
  RingBuffer& operator=(RingBuffer&& other) noexcept;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;
  ~RingBuffer();

  Result<size_t> drain(const std::function<void(std::span<const uint8_t>)>& on_record) {
    return view_.drain(on_record);
  }
  uint64_t pending() const { return view_.pending(); }

 private:
  RingBuffer(void* base, size_t length, RingBufferView view) : base_(base), length_(length), view_(std::move(view)) {}
  void unmap();

  void* base_ = nullptr;
  size_t length_ = 0;
  RingBufferView view_;
};

}  // namespace vperf::perf
