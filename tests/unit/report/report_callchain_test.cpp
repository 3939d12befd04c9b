// The call-graph prefix trees of perf report: the same tree as a plain map-of-children trie
// for any mix of chains, and adding stays linear in the frames added however wide a node fans
// out (counted probes of the child index, not time).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "report/report_callchain.h"

namespace vperf::report {
namespace {

// The reference: a trie whose children are found in a std::map.
struct TrieNode {
  uint64_t hit = 0, cumul = 0;
  std::map<uint32_t, std::unique_ptr<TrieNode>> children;
};

void add_to_trie(TrieNode& root, const std::vector<uint32_t>& chain, uint64_t period) {
  TrieNode* at = &root;
  at->cumul += period;
  for (uint32_t function : chain) {
    auto& next = at->children[function];
    if (!next) next = std::make_unique<TrieNode>();
    at = next.get();
    at->cumul += period;
  }
  at->hit += period;
}

// Compares the forest's subtree at `node` with the trie's, child by child.
void expect_same(const CallchainForest& forest, uint32_t node, const TrieNode& trie) {
  EXPECT_EQ(forest.node(node).hit, trie.hit);
  EXPECT_EQ(forest.node(node).cumul, trie.cumul);
  size_t children = 0;
  for (uint32_t c = forest.node(node).first_child; c != CallchainForest::kNone; c = forest.node(c).next_sibling) {
    ++children;
    auto it = trie.children.find(forest.node(c).function);
    ASSERT_NE(it, trie.children.end()) << "a child the reference does not have: " << forest.node(c).function;
    expect_same(forest, c, *it->second);
  }
  EXPECT_EQ(children, trie.children.size()) << "a function appears twice among one node's children, or one is missing";
}

TEST(CallchainForest, BuildsTheSameTreesAsAPlainTrie) {
  std::mt19937 random(7);
  CallchainForest forest;
  std::vector<uint32_t> trees;
  std::vector<TrieNode> tries(5);
  for (size_t t = 0; t < tries.size(); ++t) trees.push_back(forest.new_tree());
  // Narrow alphabets near the root and wide ones below, so that some nodes have one child and
  // some hundreds, and chains end at every depth.
  for (int i = 0; i < 20000; ++i) {
    const size_t t = random() % trees.size();
    std::vector<uint32_t> chain(random() % 12);
    for (size_t depth = 0; depth < chain.size(); ++depth) chain[depth] = static_cast<uint32_t>(random() % (depth < 3 ? 3 : 400));
    const uint64_t period = 1 + random() % 1000;
    forest.add(trees[t], chain, period);
    add_to_trie(tries[t], chain, period);
  }
  for (size_t t = 0; t < trees.size(); ++t) expect_same(forest, trees[t], tries[t]);
}

// A million distinct siblings under one node, each added twice: the second time must find the
// child made the first time. A walk of the sibling list would look at ~10^12 nodes; the index
// looks at a few slots per frame.
TEST(CallchainForest, AMillionSiblingsAreAddedInLinearTime) {
  constexpr uint32_t kSiblings = 1'000'000;
  CallchainForest forest;
  const uint32_t tree = forest.new_tree();
  for (int round = 0; round < 2; ++round)
    for (uint32_t function = 0; function < kSiblings; ++function) {
      const uint32_t chain[] = {7, function};  // one caller, then the fan-out
      forest.add(tree, chain, 1);
    }
  EXPECT_EQ(forest.size(), 2u + kSiblings) << "the root, the caller, a node per sibling";
  EXPECT_EQ(forest.node(tree).cumul, 2u * kSiblings);
  const uint32_t caller = forest.node(tree).first_child;
  EXPECT_EQ(forest.node(caller).cumul, 2u * kSiblings);
  for (uint32_t c = forest.node(caller).first_child; c != CallchainForest::kNone; c = forest.node(c).next_sibling)
    ASSERT_EQ(forest.node(c).hit, 2u) << "sibling " << forest.node(c).function << " was made twice or not found";
  // At most half full, linear probing averages under 3 slots per lookup; 8 per frame added is
  // generous and still 10^5 times below the sibling walk.
  EXPECT_LT(forest.index_probes(), 8ull * 2 * kSiblings);
}

}  // namespace
}  // namespace vperf::report
