#pragma once
// Call graphs under perf report's entries: one prefix tree of call chains per entry, merged by
// function as perf's callchain_node tree is (CCKEY_FUNCTION: same symbol of the same dso, else
// same address; the Profile's functions), and printed as perf's --stdio graph text:
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
#include <span>
#include <string>
#include <vector>

#include "core/chunked_vector.h"
#include "core/hashed_ids.h"
#include "report/profile.h"
#include "report/report_options.h"

namespace vperf::report {

// The branch each Profile function is in a call graph, by function id: perf matches call-graph
// entries (callchain.c's match_chain) by symbol, but an inlined one by name alone and against
// any entry, so one name inlined into two functions or two DSOs, and the out-of-line function
// of that name, are one branch, shown as the first function (lowest id) of that name. Every
// other function is a branch of its own.
std::vector<uint32_t> call_graph_branches(const Profile& profile);

// The trees of every entry of one event, in one node pool.
//
// A node's child for a function is found through one hash index of (parent, function) over the
// whole pool, so adding a frame costs the same however many siblings it has: real programs'
// stacks fan out widely (frame-pointer walks through code built without frame pointers pick up
// junk return addresses; --sort comm,dso puts a whole process's stacks under one entry), and a
// walk of the sibling list made a report quadratic in them. The sibling list stays for printing.
class CallchainForest {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t new_tree();
  // Merges functions into branches from here on (call_graph_branches(), by function id; it must
  // outlive the adds): a node is then found by its function's branch and shown as the first
  // function added there, as perf's node keeps the entry that made it.
  void merge_by(const std::vector<uint32_t>* branch_of) { branch_of_ = branch_of; }
  // Adds one chain (Profile function ids in display order: root first for caller graphs) with
  // its period.
  void add(uint32_t tree, std::span<const uint32_t> functions, uint64_t period);
  size_t size() const { return nodes_.size(); }
  // Slots of the child index looked at so far, by every add(): what a test counts to show that
  // adding is linear in the frames added, whatever the fan-out.
  uint64_t index_probes() const { return index_.probes(); }

  struct Node {
    uint32_t function = kNone;  // a Profile function
    uint32_t parent = kNone;
    uint32_t first_child = kNone;
    uint32_t next_sibling = kNone;
    uint64_t hit = 0;    // chains that end here
    uint64_t cumul = 0;  // chains through here (hit included)
  };
  // In chunks: a doubling vector of a million nodes copied them at each growth into fresh
  // pages (each faulted in), a tenth of a large report's page faults.
  using Nodes = core::ChunkedVector<Node, 12>;
  const Node& node(uint32_t index) const { return nodes_[index]; }
  // The children of `index` whose cumul reaches min_hit, heaviest first (ties: perf's order).
  std::vector<uint32_t> sorted_children(uint32_t index, uint64_t min_hit, const Profile& profile) const;
  // The run starting at `index`: it and the single children below it where no chain ended.
  std::vector<uint32_t> run(uint32_t index) const;

 private:
  uint32_t child(uint32_t parent, uint32_t function);
  uint32_t branch(uint32_t function) const { return branch_of_ ? (*branch_of_)[function] : function; }

  Nodes nodes_;
  const std::vector<uint32_t>* branch_of_ = nullptr;
  // Children beyond their parent's first, by (parent, branch): the first child is checked
  // directly, which is all narrow stacks ever need, and goes into the index when a sibling
  // comes.
  core::HashedIds index_;
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
                      const Profile& profile, const CallGraphPrint& how);

}  // namespace vperf::report
