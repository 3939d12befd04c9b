#pragma once
// Call graphs under perf report's entries: one prefix tree of call chains per entry, merged by
// function as perf's callchain_node tree is (CCKEY_FUNCTION: same symbol of the same dso, else
// same address), and printed as perf's --stdio graph text:
//
//     |
//     ---spin_phase_outer
//        |
//        |--63.76%--spin_phase_hash
//        |          spin_leaf_hash
//        |
//         --33.07%--spin_phase_math
//                   spin_leaf_math
//
// perf keeps runs of frames without a branch in one node; here every frame is a node and a run
// is recovered when printing: it continues through nodes with exactly one child where no chain
// ended. That is the shape perf's tree has, since perf splits a node only where a chain
// diverges or ends. Branches whose share is below the threshold are left out, as perf does
// (graph: percent of the total; fractal: percent of the parent).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "report/interner.h"
#include "report/report_options.h"
#include "report/sample_replay.h"

namespace vperf::report {

// Call-chain frames interned: the same function (or unresolved address) gets the same id.
class FrameTable {
 public:
  uint32_t intern(const ChainFrame& frame);
  // As perf prints a callchain entry: the symbol, "name (inlined)", or "0x<ip>".
  std::string name(uint32_t id) const;
  // The address a frame is known by (the symbol's start, else the ip): perf's order among
  // branches of equal weight.
  uint64_t order_key(uint32_t id) const { return frames_[id].order_key; }
  size_t size() const { return frames_.size(); }

  // What a frame resolved to when first seen (the entry --children gives it).
  struct Frame {
    const symbols::Symbol* symbol = nullptr;
    const symbols::Dso* dso = nullptr;
    uint64_t ip = 0;
    uint64_t order_key = 0;
    char level = '.';
    std::string inlined_name;
  };
  const Frame& frame(uint32_t id) const { return frames_[id]; }

 private:
  struct Key {
    const void* object;  // the Symbol, else the Dso (or nullptr outside every map)
    uint64_t ip;         // 0 for a symbol
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.object) ^ (std::hash<uint64_t>()(k.ip) * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::vector<Frame> frames_;
  std::unordered_map<Key, uint32_t, KeyHash> by_key_;
  // Inlined frames by (the function they were inlined into, interned name): as perf's inline
  // symbols, the same function inlined into two others is two frames.
  Interner inlined_names_;
  std::map<std::pair<const void*, uint32_t>, uint32_t> by_inlined_;
};

// The trees of every entry of one event, in one node pool.
class CallchainForest {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t new_tree();
  // Adds one chain (frames in display order: root first for caller graphs) with its period.
  void add(uint32_t tree, std::span<const uint32_t> frames, uint64_t period);

  struct Node {
    uint32_t frame = kNone;
    uint32_t first_child = kNone;
    uint32_t next_sibling = kNone;
    uint64_t hit = 0;    // chains that end here
    uint64_t cumul = 0;  // chains through here (hit included)
  };
  const Node& node(uint32_t index) const { return nodes_[index]; }
  // The children of `index` whose cumul reaches min_hit, heaviest first (ties: perf's order).
  std::vector<uint32_t> sorted_children(uint32_t index, uint64_t min_hit, const FrameTable& frames) const;
  // The run starting at `index`: it and the single children below it where no chain ended.
  std::vector<uint32_t> run(uint32_t index) const;

 private:
  std::vector<Node> nodes_;
};

struct CallGraphPrint {
  CallGraphMode mode = CallGraphMode::Graph;
  double min_percent = 0.5;
  uint64_t total_period = 0;      // percentages are of this (perf: the unfiltered total)
  uint64_t threshold_total = 0;   // graph mode prunes below min_percent of this
  bool skip_entry_symbol = false; // --sort sym...: the single root's first frame is the entry
};

// perf's callchain__fprintf_graph for one entry's tree; `parent_period` is the entry's
// Children period (or Self without children). Appends nothing when every branch is pruned.
void print_call_graph(std::string& out, const CallchainForest& forest, uint32_t tree, uint64_t parent_period,
                      const FrameTable& frames, const CallGraphPrint& how);

}  // namespace vperf::report
