#pragma once
// The input of folded stacks and flame graphs: call stacks that are already symbolized, each
// with a count (samples, or the sum of their periods). Nothing here knows perf.data.
//
//  - A Stack is root first: [comm, main, f, g] means g was running, called from f, from main.
//    stackcollapse-perf.pl puts the process name first; vperf does the same with a frame of
//    kind Process (see process_label()), so "comm;main;f;g 12" is one folded line.
//  - StackProfile maps each distinct stack to its count; counts of equal stacks add up.
//  - FlameNode is the prefix tree flamegraph.pl draws: one node per frame box, children in
//    the order flamegraph.pl lays them out from left to right.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::report {

enum class FrameKind : uint8_t {
  Process,      // the comm (and maybe pid/tid) at the root of a stack
  User,         // a user-space function of the host
  Kernel,       // the host kernel or one of its modules
  GuestUser,    // user space inside a KVM guest
  GuestKernel,  // a guest's kernel
  Jit,          // JIT-compiled code (perf-PID.map)
  Inlined,      // a function inlined into its caller (from debug info)
  Unknown,      // no symbol: the name is "[unknown]" or "[dso]"
};

std::string_view frame_kind_name(FrameKind kind);
bool is_kernel(FrameKind kind);  // Kernel or GuestKernel

struct Frame {
  std::string name;
  FrameKind kind = FrameKind::User;

  friend auto operator<=>(const Frame&, const Frame&) = default;
};

using Stack = std::vector<Frame>;  // root first

// The root frame stackcollapse-perf.pl puts first: the comm with spaces made '_', and with
// --pid "comm-PID", with --tid "comm-PID/TID".
enum class ProcessLabel { Comm, CommPid, CommPidTid };
std::string process_label(std::string_view comm, ProcessLabel label, int pid = 0, int tid = 0);
Frame process_frame(std::string_view comm, ProcessLabel label = ProcessLabel::Comm, int pid = 0, int tid = 0);

class StackProfile {
 public:
  // Adds count to stack's count. A count of 0 adds nothing (no entry either).
  void add(const Stack& stack, uint64_t count = 1);
  void add(Stack&& stack, uint64_t count = 1);
  // Adds every stack of other.
  void merge(const StackProfile& other);

  uint64_t total() const { return total_; }
  size_t size() const { return stacks_.size(); }
  bool empty() const { return stacks_.empty(); }
  // Count of one stack (0 if absent).
  uint64_t count(const Stack& stack) const;
  // Distinct stacks in Frame order (name, then kind), each with its count (> 0).
  const std::map<Stack, uint64_t>& stacks() const { return stacks_; }

  friend bool operator==(const StackProfile&, const StackProfile&) = default;

 private:
  std::map<Stack, uint64_t> stacks_;
  uint64_t total_ = 0;
};

// The annotations stackcollapse-perf.pl can append to a frame's name: "_[k]" for kernel
// frames (its --kernel), "_[j]" for JIT frames (--jit; --all is both), "_[i]" for inlined
// frames. flamegraph.pl's java/js/perl palettes colour by them and strip them from what it
// shows. All are off by default, as in stackcollapse-perf.pl.
struct Annotations {
  bool kernel = false;
  bool jit = false;
  bool inlined = false;

  static Annotations all() { return {true, true, true}; }
};

// A frame's name as a folded line spells it: the name plus the annotation its kind asks for.
std::string frame_label(const Frame& frame, Annotations annotations);
// Splits an annotated name back: "foo_[k]" -> {foo, Kernel}, "_[j]" Jit, "_[i]" Inlined;
// anything else is a User frame with the name unchanged.
Frame frame_from_label(std::string_view label);

// One box of a flame graph. The root is named "all" and holds every count.
struct FlameNode {
  std::string name;
  FrameKind kind = FrameKind::Unknown;
  uint64_t self = 0;   // counts of stacks that end here
  uint64_t total = 0;  // self + the children's totals (the box's width)
  // Differential graphs only: for the stacks that end here, count in `after` minus count in
  // `before` (flamegraph.pl colours a box by this, its delta of the stack's leaf).
  int64_t delta = 0;
  std::vector<FlameNode> children;  // left to right

  size_t node_count() const;  // this node and all below it
  int depth() const;          // 0 for a leaf
};

struct FlameTreeOptions {
  // The labels the stacks were sorted by: flamegraph.pl sorts folded lines, so to lay frames
  // out as it does for stackcollapse-perf.pl --kernel output, pass {.kernel = true}.
  Annotations annotations{};
  // flamegraph.pl --reverse: every stack leaf first, so the graph merges from the leaves.
  bool reversed = false;
};

struct FlameTree {
  FlameNode root;
  // flamegraph.pl's maxdelta: the largest |after - before| of any stack, at least 1. Set only
  // for differential trees; colours scale by it.
  int64_t max_delta = 0;
  bool differential = false;
};

// The tree flamegraph.pl builds from folded input. It sorts the folded lines as strings and
// merges each stack with the one before it, so siblings appear in byte order of
// "label;..." and a name that another sibling extends with a byte below ';' (e.g. "foo" and
// "foo.cold") can appear twice under one parent, exactly as flamegraph.pl draws it.
FlameTree build_flame_tree(const StackProfile& profile, const FlameTreeOptions& options = {});
// A differential tree, as difffolded.pl + flamegraph.pl draw it: widths are the counts of
// `after`, each leaf's delta is after - before. Stacks only in `before` take no width. (One
// departure: flamegraph.pl keys boxes by "name;depth;end", so the zero-width box of a stack
// only in `before` can overwrite a real box that ends at the same place, which then vanishes
// from its graph; here every box with a width is kept.)
FlameTree build_diff_flame_tree(const StackProfile& before, const StackProfile& after,
                                const FlameTreeOptions& options = {});

}  // namespace vperf::report
