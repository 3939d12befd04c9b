#include "data/ordered_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace vperf::data {
namespace {

// What a queue delivered: "time@offset" per record (and the bytes it held, if any).
struct Delivered {
  std::vector<std::string> records;
  bool operator()(const OrderedRecords::Entry& e, std::span<const uint8_t> held) {
    std::string line = std::to_string(e.time) + "@" + std::to_string(e.offset);
    if (!held.empty()) line += "=" + std::string(held.begin(), held.end());
    EXPECT_EQ(held.empty() ? e.size : held.size(), e.size);
    records.push_back(line);
    return true;
  }
};

OrderedRecords::Entry at(uint64_t time, uint64_t offset, uint32_t size = 8) { return {time, offset, size, 0}; }

TEST(OrderedRecords, ARoundReleasesUpToTheNewestTimeOfTheRoundBefore) {
  OrderedRecords q(false);
  Delivered out;
  q.push(at(10, 0));
  q.push(at(30, 8));
  q.finish_round(out);  // nothing is older than the round before the first
  EXPECT_TRUE(out.records.empty());
  q.push(at(20, 16));
  q.push(at(40, 24));
  q.push(at(25, 32));
  q.finish_round(out);  // up to 30, the first round's newest
  EXPECT_EQ(out.records, (std::vector<std::string>{"10@0", "20@16", "25@32", "30@8"}));
  q.finish(out);
  EXPECT_EQ(out.records.back(), "40@24");
  EXPECT_EQ(q.unordered(), 0u);
}

TEST(OrderedRecords, TiesKeepTheirArrivalOrderAcrossRunsAndRounds) {
  OrderedRecords q(false);
  Delivered out;
  // Three CPUs' runs, each in time order, with equal times between them and a time kept over
  // from one round to the next.
  for (uint64_t t : {5, 7, 7, 9}) q.push(at(t, 100 + t));
  for (uint64_t t : {6, 7, 9}) q.push(at(t, 200 + t));
  for (uint64_t t : {7, 8}) q.push(at(t, 300 + t));
  q.finish_round(out);
  q.push(at(9, 400));
  q.push(at(7, 407));
  q.finish_round(out);
  q.finish(out);
  EXPECT_EQ(out.records, (std::vector<std::string>{"5@105", "6@206", "7@107", "7@107", "7@207", "7@307", "7@407",
                                                   "8@308", "9@109", "9@209", "9@400"}));
}

// The queue against the rule spelled out by hand: random rounds of several sorted runs each.
TEST(OrderedRecords, ManyRoundsComeOutAsPerfsRuleSays) {
  uint64_t state = 99;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
  OrderedRecords q(false);
  Delivered out;
  std::vector<OrderedRecords::Entry> waiting;
  std::vector<std::string> expected;
  uint64_t limit = 0, newest = 0, offset = 0, base = 0;
  auto release = [&](uint64_t up_to) {
    std::stable_sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
    auto end = std::find_if(waiting.begin(), waiting.end(), [&](const auto& e) { return e.time > up_to; });
    for (auto it = waiting.begin(); it != end; ++it)
      expected.push_back(std::to_string(it->time) + "@" + std::to_string(it->offset));
    waiting.erase(waiting.begin(), end);
  };
  for (int round = 0; round < 50; ++round) {
    for (uint64_t run = 1 + next() % 7; run > 0; --run) {
      uint64_t time = base + next() % 80;
      for (uint64_t n = next() % 200; n > 0; --n, time += next() % 3) {
        q.push(at(time, offset));
        waiting.push_back(at(time, offset));
        newest = std::max(newest, time);
        offset += 8;
      }
    }
    q.finish_round(out);
    release(limit);
    limit = newest;
    base += 60;  // rounds overlap: some records are older than ones already delivered
  }
  q.finish(out);
  release(UINT64_MAX);
  ASSERT_GT(expected.size(), 5000u);
  EXPECT_EQ(out.records, expected);
  EXPECT_GT(q.unordered(), 0u);
}

TEST(OrderedRecords, HeldBytesComeBackWithTheirRecordAndSlotsAreReused) {
  OrderedRecords q(true);
  Delivered out;
  auto bytes = [](std::string s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  q.push(at(3, 0, 3), bytes("ccc"));
  q.push(at(1, 3, 1), bytes("a"));
  q.push(at(2, 4, 2), bytes("bb"));
  q.finish_round(out);
  q.finish_round(out);
  EXPECT_EQ(out.records, (std::vector<std::string>{"1@3=a", "2@4=bb", "3@0=ccc"}));
  q.push(at(5, 6, 4), bytes("dddd"));
  q.finish(out);
  EXPECT_EQ(out.records.back(), "5@6=dddd");
}

TEST(OrderedRecords, AStopDeliversNothingMore) {
  OrderedRecords q(false);
  std::vector<uint64_t> times;
  auto stop_at_two = [&](const OrderedRecords::Entry& e, std::span<const uint8_t>) {
    times.push_back(e.time);
    return times.size() < 2;
  };
  for (uint64_t t : {4, 1, 3, 2}) q.push(at(t, t));
  q.finish(stop_at_two);
  EXPECT_TRUE(q.stopped());
  q.push(at(9, 9));
  q.finish(stop_at_two);
  EXPECT_EQ(times, (std::vector<uint64_t>{1, 2}));
}

TEST(OrderedRecords, LowestOffsetIsTheQueuedRecordsLowestOrTheBound) {
  OrderedRecords q(false);
  EXPECT_EQ(q.lowest_offset(500), 500u);
  q.push(at(10, 300));
  q.push(at(5, 200));
  EXPECT_EQ(q.lowest_offset(500), 200u);
  EXPECT_EQ(q.lowest_offset(100), 100u);
}

}  // namespace
}  // namespace vperf::data
