#pragma once
// The order in which a red-black tree holds items inserted one by one: what perf's histograms
// are, sorted. perf inserts each entry into an rb-tree (Linux's lib/rbtree.c), going left of
// a node when its comparison says the entry comes first and right otherwise (ties go right),
// and prints the tree in order. Where the comparison is a strict weak order that is a stable
// sort; where it is not (perf's Children column puts a caller above its callee only when
// they tie within one thread), the order depends on the tree's shape, so the tree is built
// here as Linux balances it: the classic insertion fix-up (recolour on a red uncle, else one
// or two rotations), which fixes the shape for a given sequence of insertions.
#include <cstdint>
#include <vector>

namespace vperf::core {

namespace rbtree_detail {
inline constexpr uint32_t kNil = UINT32_MAX;
struct Node {
  uint32_t left = kNil, right = kNil, parent = kNil;
  bool red = true;
};
}  // namespace rbtree_detail

// Items 0 .. count-1 inserted in that order; `before(a, b)`: item a goes left of node b.
// Returns the items in order. O(count log count) calls of `before`.
template <class Before>
std::vector<uint32_t> rbtree_insertion_order(uint32_t count, Before before) {
  using rbtree_detail::kNil;
  std::vector<rbtree_detail::Node> n(count);
  uint32_t root = kNil;
  auto rotate_left = [&](uint32_t x) {  // x's right child takes its place
    const uint32_t y = n[x].right;
    n[x].right = n[y].left;
    if (n[y].left != kNil) n[n[y].left].parent = x;
    n[y].parent = n[x].parent;
    if (n[x].parent == kNil) root = y;
    else if (n[n[x].parent].left == x) n[n[x].parent].left = y;
    else n[n[x].parent].right = y;
    n[y].left = x;
    n[x].parent = y;
  };
  auto rotate_right = [&](uint32_t x) {  // x's left child takes its place
    const uint32_t y = n[x].left;
    n[x].left = n[y].right;
    if (n[y].right != kNil) n[n[y].right].parent = x;
    n[y].parent = n[x].parent;
    if (n[x].parent == kNil) root = y;
    else if (n[n[x].parent].right == x) n[n[x].parent].right = y;
    else n[n[x].parent].left = y;
    n[y].right = x;
    n[x].parent = y;
  };
  for (uint32_t item = 0; item < count; ++item) {
    uint32_t parent = kNil;
    bool go_left = false;
    for (uint32_t at = root; at != kNil; at = go_left ? n[at].left : n[at].right) {
      parent = at;
      go_left = before(item, at);
    }
    n[item].parent = parent;
    if (parent == kNil) root = item;
    else if (go_left) n[parent].left = item;
    else n[parent].right = item;
    // The fix-up: a red node under a red parent.
    uint32_t x = item;
    while (x != root && n[n[x].parent].red) {
      const uint32_t p = n[x].parent, g = n[p].parent;
      if (p == n[g].left) {
        const uint32_t uncle = n[g].right;
        if (uncle != kNil && n[uncle].red) {
          n[p].red = n[uncle].red = false;
          n[g].red = true;
          x = g;
          continue;
        }
        if (x == n[p].right) {
          x = p;
          rotate_left(x);
        }
        n[n[x].parent].red = false;
        n[g].red = true;
        rotate_right(g);
      } else {
        const uint32_t uncle = n[g].left;
        if (uncle != kNil && n[uncle].red) {
          n[p].red = n[uncle].red = false;
          n[g].red = true;
          x = g;
          continue;
        }
        if (x == n[p].left) {
          x = p;
          rotate_right(x);
        }
        n[n[x].parent].red = false;
        n[g].red = true;
        rotate_left(g);
      }
    }
    n[root].red = false;
  }
  std::vector<uint32_t> order;
  order.reserve(count);
  std::vector<uint32_t> stack;
  for (uint32_t at = root; at != kNil || !stack.empty();) {
    while (at != kNil) {
      stack.push_back(at);
      at = n[at].left;
    }
    at = stack.back();
    stack.pop_back();
    order.push_back(at);
    at = n[at].right;
  }
  return order;
}

}  // namespace vperf::core
