// core::HashedIds: things with equal hashes are told apart by the caller's equality test,
// every id inserted is found again after the table grows, and lookups stay a few slots each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/hashed_ids.h"

namespace vperf::core {
namespace {

TEST(HashedIds, EqualHashesAreToldApartByTheThingsThemselves) {
  std::vector<std::string> things = {"a", "b", "c", "d"};
  HashedIds ids;
  for (uint32_t id = 0; id < things.size(); ++id) ids.insert(42, id);  // one hash for all
  for (uint32_t id = 0; id < things.size(); ++id)
    EXPECT_EQ(ids.find(42, [&](uint32_t known) { return things[known] == things[id]; }), id);
  EXPECT_EQ(ids.find(42, [&](uint32_t known) { return things[known] == "e"; }), HashedIds::kNone);
  EXPECT_EQ(ids.find(43, [](uint32_t) { return true; }), HashedIds::kNone) << "another hash matches nothing";
}

TEST(HashedIds, EveryIdIsFoundAfterGrowingAndLookupsStayShort) {
  constexpr uint32_t kIds = 200000;
  HashedIds ids;
  // Hashes as weak as a caller's could be: consecutive integers times a power of two.
  for (uint32_t id = 0; id < kIds; ++id) ids.insert(uint64_t{id} << 20, id);
  EXPECT_EQ(ids.size(), kIds);
  for (uint32_t id = 0; id < kIds; ++id)
    ASSERT_EQ(ids.find(uint64_t{id} << 20, [&](uint32_t known) { return known == id; }), id);
  EXPECT_LT(ids.probes(), 4ull * kIds);
  ids.clear();
  EXPECT_EQ(ids.size(), 0u);
  EXPECT_EQ(ids.find(0, [](uint32_t) { return true; }), HashedIds::kNone);
}

}  // namespace
}  // namespace vperf::core
