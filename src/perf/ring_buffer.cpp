#include "perf/ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

namespace vperf::perf {

uint64_t RingBufferView::pending() const {
  uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  return head - meta_->data_tail;
}

perf_event_header RingBufferView::header_at(uint64_t position) const {
  const size_t offset = static_cast<size_t>(position & (size_ - 1));
  perf_event_header header;
  const size_t first = std::min(sizeof header, size_ - offset);
  std::memcpy(&header, data_ + offset, first);
  if (first < sizeof header) std::memcpy(reinterpret_cast<uint8_t*>(&header) + first, data_, sizeof header - first);
  return header;
}

std::span<const uint8_t> RingBufferView::bytes_at(uint64_t position, size_t size) {
  const size_t offset = static_cast<size_t>(position & (size_ - 1));
  if (offset + size <= size_) return {data_ + offset, size};
  const size_t to_end = size_ - offset;
  wrapped_.resize(size);
  std::memcpy(wrapped_.data(), data_ + offset, to_end);
  std::memcpy(wrapped_.data() + to_end, data_, size - to_end);
  return {wrapped_.data(), size};
}

Result<size_t> RingBufferView::snapshot(const std::function<void(std::span<const uint8_t>)>& on_record) {
  const uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  // Written since the last snapshot: from head (the newest record) up to where it was then.
  const uint64_t unread = std::min<uint64_t>(snapshot_head_ - head, size_);
  std::vector<std::pair<uint64_t, uint16_t>> records;  // position and size, newest first
  for (uint64_t read = 0; read + sizeof(perf_event_header) <= unread;) {
    const perf_event_header header = header_at(head + read);
    if (header.size < sizeof header || read + header.size > unread) break;  // never written, or overwritten in part
    records.emplace_back(head + read, header.size);
    read += header.size;
  }
  for (auto it = records.rbegin(); it != records.rend(); ++it) on_record(bytes_at(it->first, it->second));
  snapshot_head_ = head;
  return records.size();
}

Result<size_t> RingBufferView::drain(const std::function<void(std::span<const uint8_t>)>& on_record) {
  if (overwrite_) return snapshot(on_record);
  uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta_->data_tail;
  size_t records = 0;
  std::optional<Error> corrupt;
  while (tail < head) {
    uint64_t available = head - tail;
    if (available < sizeof(perf_event_header)) {
      corrupt = Error{"ring buffer: " + std::to_string(available) + " bytes left, less than a record header"};
      break;
    }
    const perf_event_header header = header_at(tail);
    if (header.size < sizeof header || header.size > available || header.size > size_) {
      corrupt = Error{"ring buffer: record of type " + std::to_string(header.type) + " claims " +
                      std::to_string(header.size) + " bytes with " + std::to_string(available) + " written"};
      break;
    }
    on_record(bytes_at(tail, header.size));
    tail += header.size;
    ++records;
  }
  // On corruption the rest is skipped too: its boundaries cannot be trusted.
  __atomic_store_n(&meta_->data_tail, corrupt ? head : tail, __ATOMIC_RELEASE);
  if (corrupt) return *corrupt;
  return records;
}

Result<RingBuffer> RingBuffer::map(int fd, size_t data_pages, bool overwrite) {
  if (data_pages == 0 || (data_pages & (data_pages - 1)) != 0)
    return Error{"ring buffer needs a power of two data pages, not " + std::to_string(data_pages), EINVAL};
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t length = (data_pages + 1) * page;
  // Without PROT_WRITE the kernel treats the ring as overwritable (nobody moves data_tail).
  void* base = ::mmap(nullptr, length, overwrite ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Error::from_errno("mmap " + std::to_string(data_pages) + " pages of a perf ring buffer");
  auto* meta = static_cast<perf_event_mmap_page*>(base);
  // Kernels since 4.1 say where the data area is; older ones put it right after the page.
  size_t data_offset = meta->data_offset ? static_cast<size_t>(meta->data_offset) : page;
  size_t data_size = meta->data_size ? static_cast<size_t>(meta->data_size) : data_pages * page;
  return RingBuffer(base, length, RingBufferView(meta, static_cast<uint8_t*>(base) + data_offset, data_size, overwrite));
}

RingBuffer::RingBuffer(RingBuffer&& other) noexcept
    : base_(other.base_), length_(other.length_), view_(std::move(other.view_)) {
  other.base_ = nullptr;
  other.length_ = 0;
}

RingBuffer& RingBuffer::operator=(RingBuffer&& other) noexcept {
  if (this != &other) {
    unmap();
    base_ = other.base_;
    length_ = other.length_;
    view_ = std::move(other.view_);
    other.base_ = nullptr;
    other.length_ = 0;
  }
  return *this;
}

RingBuffer::~RingBuffer() { unmap(); }

void RingBuffer::unmap() {
  if (base_) ::munmap(base_, length_);
  base_ = nullptr;
}

}  // namespace vperf::perf
