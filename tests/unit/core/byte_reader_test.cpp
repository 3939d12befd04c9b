#include "core/byte_reader.h"

#include <gtest/gtest.h>

#include <vector>

namespace vperf {
namespace {

std::vector<uint8_t> bytes_of(std::initializer_list<int> v) {
  std::vector<uint8_t> out;
  for (int b : v) out.push_back(static_cast<uint8_t>(b));
  return out;
}

TEST(ByteReader, ReadsNativeEndianScalarsInOrder) {
  auto data = bytes_of({1, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 8, 7, 6, 5, 4, 3, 2, 1});
  ByteReader r(data);
  EXPECT_EQ(*r.u8(), 1);
  EXPECT_EQ(*r.u16(), 0x1234);
  EXPECT_EQ(*r.u32(), 0x12345678u);
  EXPECT_EQ(*r.u64(), 0x0102030405060708ull);
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(r.position(), data.size());
}

TEST(ByteReader, UnalignedReadsWork) {
  std::vector<uint8_t> data(17, 0);
  data[1] = 0xff;
  ByteReader r(data);
  ASSERT_TRUE(r.skip(1));
  EXPECT_EQ(*r.u64(), 0xffu);
}

TEST(ByteReader, ShortReadFailsWithoutMovingAndNamesWhatAndWhere) {
  auto data = bytes_of({1, 2, 3});
  ByteReader r(data, 0x100);
  ASSERT_TRUE(r.u8());
  auto v = r.u32("sample pid");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message, "truncated sample pid at offset 0x101: need 4 bytes, 2 left");
  EXPECT_EQ(r.position(), 1u);
  EXPECT_EQ(*r.u16(), 0x0302);
}

TEST(ByteReader, EmptyInputFailsEveryRead) {
  ByteReader r;
  EXPECT_FALSE(r.u8().ok());
  EXPECT_FALSE(r.u64().ok());
  EXPECT_FALSE(r.bytes(1).ok());
  EXPECT_TRUE(r.bytes(0).ok());
  EXPECT_FALSE(r.c_string().ok());
  EXPECT_FALSE(r.c_string_field(1).ok());
  EXPECT_TRUE(r.at_end());
}

TEST(ByteReader, BytesAndSkipAreBounded) {
  auto data = bytes_of({1, 2, 3, 4});
  ByteReader r(data);
  auto b = r.bytes(3);
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)[2], 3);
  EXPECT_FALSE(r.skip(2).ok());
  EXPECT_TRUE(r.skip(1).ok());
  EXPECT_FALSE(r.bytes(SIZE_MAX).ok());
}

TEST(ByteReader, SubReaderKeepsAbsoluteOffsets) {
  auto data = bytes_of({0, 0, 0, 0, 9, 8, 7});
  ByteReader r(data, 1000);
  ASSERT_TRUE(r.skip(4));
  auto sub = r.sub(2, "inner");
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->size(), 2u);
  EXPECT_EQ(sub->offset(), 1004u);
  EXPECT_EQ(*sub->u8(), 9);
  EXPECT_FALSE(sub->u16().ok());  // bounded by the sub-reader, not the outer input
  EXPECT_EQ(r.position(), 6u);
  EXPECT_FALSE(r.sub(2).ok());
}

TEST(ByteReader, SubAtChecksOverflowingRanges) {
  auto data = bytes_of({1, 2, 3, 4});
  ByteReader r(data);
  EXPECT_TRUE(r.sub_at(4, 0).ok());
  EXPECT_TRUE(r.sub_at(1, 3).ok());
  EXPECT_FALSE(r.sub_at(1, 4).ok());
  EXPECT_FALSE(r.sub_at(5, 0).ok());
  EXPECT_FALSE(r.sub_at(2, UINT64_MAX).ok());
  EXPECT_FALSE(r.sub_at(UINT64_MAX, 2).ok());
}

TEST(ByteReader, SeekWithinBounds) {
  auto data = bytes_of({1, 2});
  ByteReader r(data);
  EXPECT_TRUE(r.seek(2));
  EXPECT_TRUE(r.at_end());
  EXPECT_FALSE(r.seek(3).ok());
  ASSERT_TRUE(r.seek(1));
  EXPECT_EQ(*r.u8(), 2);
}

TEST(ByteReader, CStringFieldNeedsItsNulInsideTheField) {
  std::vector<uint8_t> data{'a', 'b', 0, 'x', 'c', 'd', 'e', 'f'};
  ByteReader r(data);
  auto s = r.c_string_field(4);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, "ab");
  EXPECT_EQ(r.position(), 4u);
  EXPECT_FALSE(r.c_string_field(4).ok());  // "cdef" has no NUL
  EXPECT_EQ(r.position(), 4u);
  EXPECT_FALSE(r.c_string_field(5).ok());  // longer than what is left
}

TEST(ByteReader, CStringStopsAtNulOrFails) {
  std::vector<uint8_t> data{'h', 'i', 0, 'n', 'o'};
  ByteReader r(data);
  EXPECT_EQ(*r.c_string(), "hi");
  EXPECT_EQ(r.position(), 3u);
  EXPECT_FALSE(r.c_string().ok());
  EXPECT_EQ(r.position(), 3u);
}

TEST(ByteReader, ReadStruct) {
  struct Pair {
    uint32_t a;
    uint16_t b;
  };
  std::vector<uint8_t> data(sizeof(Pair), 0);
  data[0] = 7;
  ByteReader r(data);
  auto p = r.read_struct<Pair>("pair");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->a, 7u);
  EXPECT_FALSE(r.read_struct<Pair>("pair").ok());
}

}  // namespace
}  // namespace vperf
