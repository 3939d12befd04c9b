#include "perf/ring_buffer.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "events/attr_builder.h"
#include "perf/event_fd.h"

namespace vperf::perf {
namespace {

// A ring as the kernel would leave it: a metadata page and a small data area, written by
// hand, so wrapping and corruption are exact.
struct FakeRing {
  explicit FakeRing(size_t size) : data(size) { std::memset(&meta, 0, sizeof meta); }

  // Appends a record of `type` whose payload is `payload_words` u64s counting up from `first`.
  void write_record(uint32_t type, uint64_t first, size_t payload_words) {
    std::vector<uint8_t> bytes(sizeof(perf_event_header) + payload_words * 8);
    perf_event_header header{type, 0, static_cast<uint16_t>(bytes.size())};
    std::memcpy(bytes.data(), &header, sizeof header);
    for (size_t i = 0; i < payload_words; ++i) {
      uint64_t word = first + i;
      std::memcpy(bytes.data() + sizeof header + i * 8, &word, 8);
    }
    write_bytes(bytes);
  }
  void write_bytes(const std::vector<uint8_t>& bytes) {
    for (uint8_t b : bytes) data[(meta.data_head++) & (data.size() - 1)] = b;
  }
  RingBufferView view() { return RingBufferView(&meta, data.data(), data.size()); }

  // As the kernel writes an overwrite ring (write_backward): data_head counts down by the
  // record's size and the record goes at the new head, over the oldest bytes.
  void write_backward(uint32_t type, size_t payload_words) {
    std::vector<uint8_t> bytes(sizeof(perf_event_header) + payload_words * 8, 0xee);
    perf_event_header header{type, 0, static_cast<uint16_t>(bytes.size())};
    std::memcpy(bytes.data(), &header, sizeof header);
    meta.data_head -= bytes.size();
    for (size_t i = 0; i < bytes.size(); ++i) data[(meta.data_head + i) & (data.size() - 1)] = bytes[i];
  }
  RingBufferView overwrite_view() { return RingBufferView(&meta, data.data(), data.size(), true); }

  perf_event_mmap_page meta;
  std::vector<uint8_t> data;
};

uint64_t word_at(std::span<const uint8_t> record, size_t index) {
  uint64_t w;
  std::memcpy(&w, record.data() + sizeof(perf_event_header) + index * 8, 8);
  return w;
}

TEST(RingBufferView, HandsOutRecordsInOrderAndReleasesTheSpace) {
  FakeRing ring(256);
  ring.write_record(PERF_RECORD_SAMPLE, 100, 2);
  ring.write_record(PERF_RECORD_COMM, 200, 3);
  RingBufferView view = ring.view();
  std::vector<std::pair<uint32_t, uint64_t>> seen;
  Result<size_t> n = view.drain([&](std::span<const uint8_t> r) {
    perf_event_header h;
    std::memcpy(&h, r.data(), sizeof h);
    seen.emplace_back(h.type, word_at(r, 0));
  });
  ASSERT_TRUE(n.ok()) << n.error().describe();
  EXPECT_EQ(*n, 2u);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], std::make_pair(uint32_t{PERF_RECORD_COMM}, uint64_t{200}));
  EXPECT_EQ(ring.meta.data_tail, ring.meta.data_head);
  EXPECT_EQ(view.pending(), 0u);
}

TEST(RingBufferView, RebuildsARecordThatWrapsAroundTheEnd) {
  FakeRing ring(128);
  // Consume 96 bytes first so the next 40-byte record starts at 96 and ends at 8.
  ring.write_record(PERF_RECORD_SAMPLE, 1, 11);  // 8 + 88 = 96 bytes
  RingBufferView view = ring.view();
  ASSERT_TRUE(view.drain([](std::span<const uint8_t>) {}).ok());
  ring.write_record(PERF_RECORD_SAMPLE, 500, 4);  // 40 bytes: 32 before the end, 8 after
  std::vector<uint64_t> words;
  ASSERT_TRUE(view.drain([&](std::span<const uint8_t> r) {
                    ASSERT_EQ(r.size(), 40u);
                    for (size_t i = 0; i < 4; ++i) words.push_back(word_at(r, i));
                  }).ok());
  EXPECT_EQ(words, (std::vector<uint64_t>{500, 501, 502, 503}));
}

TEST(RingBufferView, AHeaderThatStraddlesTheEndIsReadWhole) {
  FakeRing ring(64);
  ring.write_record(PERF_RECORD_SAMPLE, 1, 6);  // 56 bytes: the next header starts at 56 (4 bytes to the end... 8)
  RingBufferView view = ring.view();
  ASSERT_TRUE(view.drain([](std::span<const uint8_t>) {}).ok());
  ring.meta.data_head += 4;  // shift so the next header crosses the end
  ring.meta.data_tail += 4;
  ring.write_record(PERF_RECORD_LOST, 9, 2);
  size_t count = 0;
  ASSERT_TRUE(view.drain([&](std::span<const uint8_t> r) {
                    perf_event_header h;
                    std::memcpy(&h, r.data(), sizeof h);
                    EXPECT_EQ(h.type, uint32_t{PERF_RECORD_LOST});
                    EXPECT_EQ(word_at(r, 1), 10u);
                    ++count;
                  }).ok());
  EXPECT_EQ(count, 1u);
}

TEST(RingBufferView, ACorruptHeaderStopsWithAnErrorInsteadOfLooping) {
  FakeRing ring(128);
  ring.write_record(PERF_RECORD_SAMPLE, 1, 1);
  ring.write_bytes(std::vector<uint8_t>(8, 0));  // a header of size 0
  RingBufferView view = ring.view();
  size_t good = 0;
  Result<size_t> n = view.drain([&](std::span<const uint8_t>) { ++good; });
  EXPECT_FALSE(n.ok());
  EXPECT_EQ(good, 1u);
  EXPECT_EQ(ring.meta.data_tail, ring.meta.data_head) << "nothing after corruption is trusted";
}

// An overwrite ring's snapshot: the newest records that fit, oldest first; the next snapshot
// only what came after; a record the newest overwrote in part is left out; a ring that did not
// fill gives what was written; data_tail is never written (the mapping is read-only).
TEST(RingBufferView, OverwriteSnapshotsHoldTheNewestWholeRecordsOldestFirst) {
  auto types = [](RingBufferView& view) {
    std::vector<uint32_t> out;
    EXPECT_TRUE(view.drain([&](std::span<const uint8_t> r) {
      perf_event_header h;
      std::memcpy(&h, r.data(), sizeof h);
      out.push_back(h.type);
    }).ok());
    return out;
  };
  FakeRing even(64);  // 16-byte records: four fit
  for (uint32_t type = 1; type <= 6; ++type) even.write_backward(type, 1);
  RingBufferView view = even.overwrite_view();
  EXPECT_EQ(types(view), (std::vector<uint32_t>{3, 4, 5, 6}));
  even.write_backward(7, 1);
  even.write_backward(8, 1);
  EXPECT_EQ(types(view), (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(types(view), std::vector<uint32_t>{});
  EXPECT_EQ(even.meta.data_tail, 0u);

  FakeRing uneven(64);  // 24-byte records: the third-newest is cut by the ring's end
  for (uint32_t type = 1; type <= 3; ++type) uneven.write_backward(type, 2);
  RingBufferView cut = uneven.overwrite_view();
  EXPECT_EQ(types(cut), (std::vector<uint32_t>{2, 3}));

  FakeRing partly(64);  // never filled
  partly.write_backward(9, 1);
  RingBufferView fresh = partly.overwrite_view();
  EXPECT_EQ(types(fresh), std::vector<uint32_t>{9});
}

TEST(RingBuffer, MapsARealSoftwareEventAndReadsItsSamples) {
  // cpu-clock sampling of this thread every 1 ms exists on every kernel, PMU or not.
  perf_event_attr attr = events::blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
  attr.sample_period = 1000000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  KernelPerfEventOpener opener;
  Result<EventFd> fd = opener.open(attr, OpenTarget{0, -1, -1, PERF_FLAG_FD_CLOEXEC});
  ASSERT_TRUE(fd.ok()) << fd.error().describe();
  Result<RingBuffer> ring = RingBuffer::map(fd->get(), 8);
  ASSERT_TRUE(ring.ok()) << ring.error().describe();
  ASSERT_TRUE(fd->enable().ok());
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 200000000 && ring->pending() < 20 * 24; ++i) sink = sink + i * i;
  ASSERT_TRUE(fd->disable().ok());
  size_t samples = 0;
  pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
  ASSERT_TRUE(ring->drain([&](std::span<const uint8_t> r) {
                    perf_event_header h;
                    std::memcpy(&h, r.data(), sizeof h);
                    if (h.type != PERF_RECORD_SAMPLE) return;
                    uint32_t pid_tid[2];
                    std::memcpy(pid_tid, r.data() + sizeof h + 8, 8);
                    EXPECT_EQ(static_cast<pid_t>(pid_tid[1]), me);
                    ++samples;
                  }).ok());
  EXPECT_GE(samples, 10u);
  EXPECT_EQ(RingBuffer::map(fd->get(), 3).ok(), false) << "data pages must be a power of two";
}

}  // namespace
}  // namespace vperf::perf
