#include "report/report_callchain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>

namespace vperf::report {

namespace {

// The name perf's call graph compares an inlined entry by: the inlined function's, or the
// symbol's ("" for an unresolved address).
std::string_view matched_name(const Profile& profile, const ProfileFunction& f) {
  if (f.inlined_name != 0) return profile.text(f.inlined_name);
  return f.symbol ? std::string_view(f.symbol->name) : std::string_view();
}

}  // namespace

std::vector<uint32_t> call_graph_branches(const Profile& profile) {
  const size_t n = profile.function_count();
  std::vector<uint32_t> branch(n);
  constexpr uint32_t kUnset = UINT32_MAX;
  std::unordered_map<std::string_view, uint32_t> first_of_name;  // the names some inlined function has
  for (uint32_t id = 0; id < n; ++id)
    if (profile.function(id).inlined_name != 0) first_of_name.try_emplace(profile.text(profile.function(id).inlined_name), kUnset);
  for (uint32_t id = 0; id < n; ++id) {
    branch[id] = id;
    const std::string_view name = matched_name(profile, profile.function(id));
    if (name.empty()) continue;
    auto it = first_of_name.find(name);
    if (it == first_of_name.end()) continue;
    if (it->second == kUnset) it->second = id;
    branch[id] = it->second;
  }
  return branch;
}

uint32_t CallchainForest::new_tree() {
  nodes_.push_back(Node{});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

namespace {

uint64_t child_key(uint32_t parent, uint32_t function) { return static_cast<uint64_t>(parent) << 32 | function; }

}  // namespace

uint32_t CallchainForest::child(uint32_t parent, uint32_t function) {
  const uint32_t first = nodes_[parent].first_child;
  if (first != kNone && nodes_[first].function == function) return first;
  const uint32_t wanted = branch(function);
  if (first != kNone && branch_of_ != nullptr && branch(nodes_[first].function) == wanted) return first;
  if (first != kNone) {
    const uint32_t found = index_.find(child_key(parent, wanted), [&](uint32_t id) {
      return nodes_[id].parent == parent && branch(nodes_[id].function) == wanted;
    });
    if (found != kNone) return found;
    // The first child loses its direct check to the new one: it goes into the index.
    index_.insert(child_key(parent, branch(nodes_[first].function)), first);
  }
  const uint32_t made = static_cast<uint32_t>(nodes_.size());
  Node n;
  n.function = function;
  n.parent = parent;
  n.next_sibling = first;
  nodes_.push_back(n);
  nodes_[parent].first_child = made;
  return made;
}

void CallchainForest::add(uint32_t tree, std::span<const uint32_t> functions, uint64_t period) {
  uint32_t at = tree;
  nodes_[at].cumul += period;
  for (uint32_t function : functions) {
    at = child(at, function);
    nodes_[at].cumul += period;
  }
  nodes_[at].hit += period;
}

namespace {

// perf's order of two sibling entries (callchain.c's match_chain): an inlined one compares by
// name with anything, others by DSO and address (order_key: signed, so the kernel's DSO, made
// first, sorts as perf's lowest DSO pointer). True when `existing` sorts before `added` in
// perf's tree of children, which runs from the greatest down.
bool perf_orders_first(const Profile& profile, uint32_t existing, uint32_t added) {
  const ProfileFunction& a = profile.function(existing);
  const ProfileFunction& b = profile.function(added);
  if ((a.inlined_name != 0 || b.inlined_name != 0) && a.symbol && b.symbol) return matched_name(profile, a) > matched_name(profile, b);
  return static_cast<int64_t>(a.order_key) > static_cast<int64_t>(b.order_key);
}

// Ties that involve an inlined function, in the order perf's binary tree of children gives them:
// each (in the order they were made) descends from the root, left when it sorts first. perf's
// comparison of names with addresses is no order, so sorting cannot reproduce it; runs this
// short (equal weights) are cheap to insert one by one.
void order_ties_as_perf(std::span<uint32_t> tie, const Profile& profile, const CallchainForest::Nodes& nodes) {
  std::sort(tie.begin(), tie.end());  // node ids: the order they were made
  struct TreeNode {
    uint32_t id;
    int left = -1, right = -1;
  };
  std::vector<TreeNode> tree;
  for (uint32_t id : tie) {
    tree.push_back(TreeNode{id});
    if (tree.size() == 1) continue;
    int at = 0;
    for (;;) {
      // perf: the new entry goes left when the existing one compares lower (LT), which is when
      // the new one sorts first.
      const bool left = perf_orders_first(profile, nodes[id].function, nodes[tree[static_cast<size_t>(at)].id].function);
      int& next = left ? tree[static_cast<size_t>(at)].left : tree[static_cast<size_t>(at)].right;
      if (next < 0) {
        next = static_cast<int>(tree.size() - 1);
        break;
      }
      at = next;
    }
  }
  size_t out = 0;
  std::vector<int> stack;
  for (int at = 0; at >= 0 || !stack.empty();) {
    while (at >= 0) {
      stack.push_back(at);
      at = tree[static_cast<size_t>(at)].left;
    }
    at = stack.back();
    stack.pop_back();
    tie[out++] = tree[static_cast<size_t>(at)].id;
    at = tree[static_cast<size_t>(at)].right;
  }
}

}  // namespace

std::vector<uint32_t> CallchainForest::sorted_children(uint32_t index, uint64_t min_hit, const Profile& profile) const {
  std::vector<uint32_t> kids;
  for (uint32_t c = nodes_[index].first_child; c != kNone; c = nodes_[c].next_sibling)
    if (nodes_[c].cumul >= min_hit) kids.push_back(c);
  // perf inserts equal weights after each other in its input tree's order, which runs from
  // the highest address down within a DSO, and puts the kernel's DSO (made first, so lowest in
  // perf's comparison of DSO pointers) after user space's: the order of the addresses taken as
  // signed, where kernel addresses are negative (a tie between _copy_to_user and
  // spin_leaf_hash under one interrupt frame lists spin_leaf_hash first in perf 6.1).
  std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
    if (nodes_[a].cumul != nodes_[b].cumul) return nodes_[a].cumul > nodes_[b].cumul;
    return static_cast<int64_t>(profile.function(nodes_[a].function).order_key) >
           static_cast<int64_t>(profile.function(nodes_[b].function).order_key);
  });
  if (!profile.has_inlined_functions()) return kids;
  // A tie with an inlined function in it: perf compares those by name (see perf_orders_first).
  constexpr size_t kLongestTieOrdered = 64;  // inserting is quadratic at worst
  for (size_t first = 0; first < kids.size();) {
    size_t end = first + 1;
    bool inlined = profile.function(nodes_[kids[first]].function).inlined_name != 0;
    while (end < kids.size() && nodes_[kids[end]].cumul == nodes_[kids[first]].cumul) {
      inlined |= profile.function(nodes_[kids[end]].function).inlined_name != 0;
      ++end;
    }
    if (inlined && end - first > 1 && end - first <= kLongestTieOrdered)
      order_ties_as_perf(std::span<uint32_t>(kids).subspan(first, end - first), profile, nodes_);
    first = end;
  }
  return kids;
}

std::vector<uint32_t> CallchainForest::run(uint32_t index) const {
  std::vector<uint32_t> run{index};
  uint32_t at = index;
  while (nodes_[at].hit == 0 && nodes_[at].first_child != kNone && nodes_[nodes_[at].first_child].next_sibling == kNone) {
    at = nodes_[at].first_child;
    run.push_back(at);
  }
  return run;
}

namespace {

constexpr const char* kMargin = "            ";  // perf's callchain left margin: 12 spaces

class GraphPrinter {
 public:
  GraphPrinter(std::string& out, const CallchainForest& forest, const Profile& profile, const CallGraphPrint& how)
      : out_(out), forest_(forest), profile_(profile), how_(how) {}

  uint64_t min_hit_under(uint32_t node) const {
    if (how_.mode == CallGraphMode::Fractal) {
      const auto& n = forest_.node(node);
      return static_cast<uint64_t>(std::ceil(static_cast<double>(n.cumul - n.hit) * how_.min_percent / 100.0));
    }
    return static_cast<uint64_t>(static_cast<double>(how_.threshold_total) * (how_.min_percent / 100.0));
  }
  std::vector<uint32_t> children(uint32_t node) const { return forest_.sorted_children(node, min_hit_under(node), profile_); }

  void margin(int left) {
    out_ += kMargin;
    out_.append(static_cast<size_t>(left), ' ');
  }
  void graph_line(int depth, uint64_t mask, int left) {
    margin(left);
    for (int i = 0; i < depth; ++i) out_ += (mask & (1ULL << i)) ? "|          " : "           ";
    out_ += '\n';
  }
  void percent(uint64_t hits, uint64_t total) {
    char buf[32];
    double pct = total ? static_cast<double>(hits) * 100.0 / static_cast<double>(total) : 0.0;
    std::snprintf(buf, sizeof buf, "%.2f%%", pct);
    out_ += buf;
  }
  void frame_line(uint64_t cumul, const std::string& name, int depth, uint64_t mask, bool first, uint64_t total, int left) {
    margin(left);
    for (int i = 0; i < depth; ++i) {
      out_ += (mask & (1ULL << i)) ? '|' : ' ';
      if (first && i == depth - 1) {
        out_ += "--";
        percent(cumul, total);
        out_ += "--";
      } else {
        out_ += "          ";
      }
    }
    out_ += name;
    out_ += '\n';
  }

  // perf's __callchain__fprintf_graph.
  void level(const std::vector<uint32_t>& kids, uint64_t total, int depth, uint64_t mask, int left) {
    uint64_t remaining = total;
    uint64_t new_mask = mask;
    for (size_t k = 0; k < kids.size(); ++k) {
      const auto& child = forest_.node(kids[k]);
      remaining -= child.cumul;
      if (k + 1 == kids.size() && (how_.mode != CallGraphMode::Fractal || remaining == 0))
        new_mask &= ~(1ULL << (depth - 1));
      graph_line(depth, mask, left);
      std::vector<uint32_t> run = forest_.run(kids[k]);
      for (size_t i = 0; i < run.size(); ++i)
        frame_line(child.cumul, profile_.function_label(forest_.node(run[i]).function), depth, new_mask, i == 0, total, left);
      const auto& last = forest_.node(run.back());
      uint64_t new_total = how_.mode == CallGraphMode::Fractal ? last.cumul - last.hit : total;
      level(children(run.back()), new_total, depth + 1, new_mask | (1ULL << depth), left);
    }
    if (how_.mode == CallGraphMode::Fractal && remaining != 0 && remaining != total) {
      new_mask &= ~(1ULL << (depth - 1));
      frame_line(remaining, "[...]", depth, new_mask, true, total, left);
    }
  }

 private:
  std::string& out_;
  const CallchainForest& forest_;
  const Profile& profile_;
  const CallGraphPrint& how_;
};

// perf's callchain__fprintf_flat and callchain__fprintf_folded over its sort_chain_flat list:
// every node where chains end (hit) with at least the threshold's hits, taken in a post-order
// walk of perf's input tree (children from the highest address down, as sorted_children's
// ties), then ordered by hit, heaviest first, equal ones in walk order.
void print_chains(std::string& out, const CallchainForest& forest, uint32_t tree, const Profile& profile,
                  const CallGraphPrint& how) {
  const uint64_t min_hit = static_cast<uint64_t>(static_cast<double>(how.threshold_total) * (how.min_percent / 100.0));
  std::vector<uint32_t> ends;
  std::vector<std::pair<uint32_t, bool>> stack{{tree, false}};  // node, children pushed
  while (!stack.empty()) {
    auto [at, expanded] = stack.back();
    if (expanded) {
      stack.pop_back();
      const CallchainForest::Node& node = forest.node(at);
      if (at != tree && node.hit && node.hit >= min_hit) ends.push_back(at);
      continue;
    }
    stack.back().second = true;
    std::vector<uint32_t> kids;
    for (uint32_t c = forest.node(at).first_child; c != CallchainForest::kNone; c = forest.node(c).next_sibling) kids.push_back(c);
    std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
      return static_cast<int64_t>(profile.function(forest.node(a).function).order_key) >
             static_cast<int64_t>(profile.function(forest.node(b).function).order_key);
    });
    for (auto kid = kids.rbegin(); kid != kids.rend(); ++kid) stack.emplace_back(*kid, false);  // first kid walked first
  }
  std::stable_sort(ends.begin(), ends.end(), [&](uint32_t a, uint32_t b) { return forest.node(a).hit > forest.node(b).hit; });
  const bool folded = how.mode == CallGraphMode::Folded;
  std::vector<uint32_t> path;
  for (uint32_t end : ends) {
    path.clear();
    for (uint32_t at = end; at != tree; at = forest.node(at).parent) path.push_back(at);
    // Folded shows the chains that end here (hit), flat all that pass through (cumul).
    const uint64_t value = folded ? forest.node(end).hit : forest.node(end).cumul;
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.2f%%",
                  how.total_period ? static_cast<double>(value) * 100.0 / static_cast<double>(how.total_period) : 0.0);
    if (folded) {
      out += percent;
      out += ' ';
      for (auto at = path.rbegin(); at != path.rend(); ++at) {
        if (at != path.rbegin()) out += ';';
        out += profile.function_label(forest.node(*at).function);
      }
      out += '\n';
    } else {
      out += "           ";
      out += percent;
      out += '\n';
      for (auto at = path.rbegin(); at != path.rend(); ++at) {
        out += "                ";
        out += profile.function_label(forest.node(*at).function);
        out += '\n';
      }
      out += '\n';
    }
  }
}

}  // namespace

void print_call_graph(std::string& out, const CallchainForest& forest, uint32_t tree, uint64_t parent_period,
                      const Profile& profile, const CallGraphPrint& how) {
  if (how.mode == CallGraphMode::None) return;
  if (how.mode == CallGraphMode::Flat || how.mode == CallGraphMode::Folded) return print_chains(out, forest, tree, profile, how);
  size_t start = out.size();
  GraphPrinter printer(out, forest, profile, how);
  int left = 0;
  std::vector<uint32_t> roots = printer.children(tree);
  // One root carrying the whole entry: printed without a percentage, one column less.
  if (roots.size() == 1 && forest.node(roots[0]).cumul == parent_period) {
    std::vector<uint32_t> run = forest.run(roots[0]);
    bool printed = false;
    for (size_t i = 0; i < run.size(); ++i) {
      if (i == 0 && how.skip_entry_symbol) continue;
      if (!printed) {
        out += kMargin;
        out += "|\n";
        out += kMargin;
        out += "---";
        left += 3;
        printed = true;
      } else {
        printer.margin(left);
      }
      out += profile.function_label(forest.node(run[i]).function);
      out += '\n';
    }
    roots = printer.children(run.back());
  }
  uint64_t total = how.total_period;
  if (how.mode == CallGraphMode::Fractal) total = parent_period;
  printer.level(roots, total, 1, 1, left);
  if (out.size() != start) out += '\n';
}

}  // namespace vperf::report
