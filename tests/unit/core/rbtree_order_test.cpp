// core::rbtree_insertion_order: the order of a red-black tree built as Linux builds perf's
// histogram trees.
#include "core/rbtree_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace vperf::core {
namespace {

// Where the comparison is a strict weak order, the tree's order is a stable sort: ties go
// right, after the items inserted before them.
TEST(RbtreeOrder, AnOrderGivesAStableSort) {
  std::mt19937 random(7);
  std::vector<int> keys(2000);
  for (int& k : keys) k = static_cast<int>(random() % 50);
  const std::vector<uint32_t> order =
      rbtree_insertion_order(static_cast<uint32_t>(keys.size()), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  std::vector<uint32_t> sorted(keys.size());
  std::iota(sorted.begin(), sorted.end(), 0u);
  std::stable_sort(sorted.begin(), sorted.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  EXPECT_EQ(order, sorted);
}

// The tree stays balanced: inserting in order (the worst case for an unbalanced tree) costs
// at most 2 log2(n) comparisons an item.
TEST(RbtreeOrder, StaysBalanced) {
  constexpr uint32_t kItems = 1 << 14;
  uint64_t calls = 0;
  const std::vector<uint32_t> order = rbtree_insertion_order(kItems, [&](uint32_t a, uint32_t b) {
    ++calls;
    return a < b;
  });
  ASSERT_EQ(order.size(), kItems);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_LE(calls, uint64_t{kItems} * 2 * 14);
}

// Where it is not an order, the shape decides, as in perf: three items each "before" the one
// inserted before it end up reversed after the rotation (2, 1, 0); an item that is before the
// root but not before its left child lands between them.
TEST(RbtreeOrder, ANonOrderFollowsTheTreesShape) {
  EXPECT_EQ(rbtree_insertion_order(3, [](uint32_t a, uint32_t b) { return a > b; }), (std::vector<uint32_t>{2, 1, 0}));
  // 0 is the root, 1 goes left of it; 2 is before 0 but not before 1: right of 1.
  auto before = [](uint32_t a, uint32_t b) { return (a == 1 && b == 0) || (a == 2 && b == 0); };
  EXPECT_EQ(rbtree_insertion_order(3, before), (std::vector<uint32_t>{1, 2, 0}));
  // Rock, paper, scissors: 1 before 0, 2 before 1, 0 before 2. 1 goes left of 0; 2 is not
  // before 0, so it goes right of 0, never meeting 1.
  auto cyclic = [](uint32_t a, uint32_t b) { return (a == 1 && b == 0) || (a == 2 && b == 1) || (a == 0 && b == 2); };
  EXPECT_EQ(rbtree_insertion_order(3, cyclic), (std::vector<uint32_t>{1, 0, 2}));
}

}  // namespace
}  // namespace vperf::core
