// perf record -z's stream: records split across COMPRESSED payloads anywhere (mid-frame,
// mid-record) come out whole and in order; what a payload decompresses to is bounded; damage
// is an error, not a crash.
#include "data/compressed_records.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace vperf::data {
namespace {

// A record of `size` bytes (a multiple of 8, at least 8) whose body bytes are all `fill`.
std::vector<uint8_t> record(uint16_t size, uint8_t fill) {
  std::vector<uint8_t> r(size, fill);
  const uint32_t type = 9;
  std::memcpy(r.data(), &type, 4);
  std::memset(r.data() + 4, 0, 2);
  std::memcpy(r.data() + 6, &size, 2);
  return r;
}

std::vector<std::vector<uint8_t>> payloads_of(const std::vector<uint8_t>& records, size_t max_payload, int batches) {
  Result<RecordCompressor> compressor = RecordCompressor::open(1);
  EXPECT_TRUE(compressor.ok());
  std::vector<std::vector<uint8_t>> payloads;
  const size_t step = records.size() / static_cast<size_t>(batches);
  for (int b = 0; b < batches; ++b) {
    const size_t from = static_cast<size_t>(b) * step, to = b + 1 == batches ? records.size() : from + step;
    EXPECT_TRUE(compressor->compress(std::span(records).subspan(from, to - from), max_payload, [&](std::span<const uint8_t> p) {
      payloads.emplace_back(p.begin(), p.end());
      return Result<void>{};
    }));
  }
  return payloads;
}

TEST(CompressedRecords, AStreamSplitAnywhereGivesBackEveryRecordWhole) {
  std::vector<uint8_t> all;
  std::vector<std::vector<uint8_t>> expected;
  for (int i = 0; i < 300; ++i) {
    expected.push_back(record(static_cast<uint16_t>(8 * (1 + i % 40)), static_cast<uint8_t>(i)));
    all.insert(all.end(), expected.back().begin(), expected.back().end());
  }
  // Batches that end mid-record (the stream is flushed there), payloads of 13 bytes (every
  // payload ends mid-frame), and one payload per batch.
  for (size_t max_payload : {size_t{13}, size_t{1} << 16}) {
    SCOPED_TRACE(max_payload);
    std::vector<std::vector<uint8_t>> payloads = payloads_of(all, max_payload, 7);
    if (max_payload == 13) {
      EXPECT_GT(payloads.size(), 100u);
    }
    Result<CompressedRecords> reader = CompressedRecords::open();
    ASSERT_TRUE(reader.ok());
    std::vector<std::vector<uint8_t>> got;
    for (const std::vector<uint8_t>& p : payloads)
      ASSERT_TRUE(reader->feed(p, 1 << 20, [&](std::span<const uint8_t> r) { got.emplace_back(r.begin(), r.end()); }).ok());
    EXPECT_EQ(got, expected);
    EXPECT_EQ(reader->left_over(), 0u);
  }
}

TEST(CompressedRecords, APayloadThatDecompressesPastTheLimitIsAnError) {
  // 1 MiB of zeros in records compresses to a few hundred bytes.
  std::vector<uint8_t> all;
  for (int i = 0; i < 1024; ++i) {
    std::vector<uint8_t> r = record(1024, 0);
    all.insert(all.end(), r.begin(), r.end());
  }
  std::vector<std::vector<uint8_t>> payloads = payloads_of(all, 1 << 16, 1);
  ASSERT_EQ(payloads.size(), 1u);
  EXPECT_LT(payloads[0].size(), 4096u);
  Result<CompressedRecords> reader = CompressedRecords::open();
  ASSERT_TRUE(reader.ok());
  size_t records = 0;
  Result<void> fed = reader->feed(payloads[0], 64 * 1024, [&](std::span<const uint8_t>) { ++records; });
  ASSERT_FALSE(fed.ok());
  EXPECT_NE(fed.error().message.find("decompresses to more than 65536 bytes"), std::string::npos) << fed.error().message;
}

TEST(CompressedRecords, DamageIsAnError) {
  Result<CompressedRecords> garbage = CompressedRecords::open();
  ASSERT_TRUE(garbage.ok());
  const std::vector<uint8_t> not_zstd(32, 0xab);
  Result<void> fed = garbage->feed(not_zstd, 1 << 20, [](std::span<const uint8_t>) {});
  ASSERT_FALSE(fed.ok());
  EXPECT_NE(fed.error().message.find("does not decompress"), std::string::npos) << fed.error().message;

  // A record that states a size below its own header.
  std::vector<uint8_t> bad = record(16, 1);
  const uint16_t four = 4;
  std::memcpy(bad.data() + 6, &four, 2);
  std::vector<std::vector<uint8_t>> payloads = payloads_of(bad, 1 << 16, 1);
  Result<CompressedRecords> reader = CompressedRecords::open();
  ASSERT_TRUE(reader.ok());
  Result<void> small = reader->feed(payloads[0], 1 << 20, [](std::span<const uint8_t>) {});
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().message, "a decompressed record states a size of 4 bytes");
}

}  // namespace
}  // namespace vperf::data
