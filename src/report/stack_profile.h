#pragma once
// The input of folded stacks and flame graphs: call stacks that are already symbolized, each
// with a count (samples, or the sum of their periods). Nothing here knows perf.data.
//
//  - A Stack is root first: [comm, main, f, g] means g was running, called from f, from main.
//    stackcollapse-perf.pl puts the process name first; vperf does the same with a frame of
//    kind Process (see process_label()), so "comm;main;f;g 12" is one folded line.
//  - StackProfile maps each distinct stack to its count; counts of equal stacks add up. Its
//    frames are kept once each (StackView reads a stack in place).
//  - FlameNode is the prefix tree flamegraph.pl draws: one node per frame box, children in
//    the order flamegraph.pl lays them out from left to right.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hashed_ids.h"

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

// One distinct stack of a StackProfile, read in place: its frames, root first.
class StackView {
 public:
  class iterator {
   public:
    using value_type = Frame;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const uint32_t* id, const Frame* frames) : id_(id), frames_(frames) {}
    const Frame& operator*() const { return frames_[*id_]; }
    const Frame* operator->() const { return &frames_[*id_]; }
    iterator& operator++() {
      ++id_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++id_;
      return before;
    }
    bool operator==(const iterator& other) const { return id_ == other.id_; }

   private:
    const uint32_t* id_ = nullptr;
    const Frame* frames_ = nullptr;
  };

  StackView(std::span<const uint32_t> ids, const Frame* frames) : ids_(ids), frames_(frames) {}
  iterator begin() const { return {ids_.data(), frames_}; }
  iterator end() const { return {ids_.data() + ids_.size(), frames_}; }
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const Frame& operator[](size_t i) const { return frames_[ids_[i]]; }
  const Frame& front() const { return frames_[ids_.front()]; }
  const Frame& back() const { return frames_[ids_.back()]; }
  Stack to_stack() const { return Stack(begin(), end()); }
  // The frames' ids in their profile (StackProfile::frame).
  std::span<const uint32_t> ids() const { return ids_; }

 private:
  std::span<const uint32_t> ids_;
  const Frame* frames_;
};

// Each distinct frame is kept once and a stack is the ids of its frames: a profile's stacks
// share most of their frames, and a stack of strings each was what a flame graph's memory
// grew with.
class StackProfile {
 public:
  // Adds count to stack's count. A count of 0 adds nothing (no entry either).
  void add(const Stack& stack, uint64_t count = 1);
  void add(const StackView& stack, uint64_t count = 1);
  // The same by frame ids: a caller naming many stacks of few frames keeps each frame's id
  // (frame_id) instead of hashing its name at every stack it is in.
  uint32_t frame_id(const Frame& frame);
  void add_ids(std::span<const uint32_t> frame_ids, uint64_t count);
  // Adds every stack of other.
  void merge(const StackProfile& other);

  uint64_t total() const { return total_; }
  size_t size() const { return entries_.size(); }
  // The distinct frames, by the ids StackView::ids gives.
  size_t frame_count() const { return frames_.size(); }
  const Frame& frame(uint32_t id) const { return frames_[id]; }
  bool empty() const { return entries_.empty(); }
  // Count of one stack (0 if absent).
  uint64_t count(const Stack& stack) const;
  uint64_t count(const StackView& stack) const;
  // Distinct stacks in Frame order (name, then kind), each with its count (> 0). The views
  // are valid until the profile changes.
  std::vector<std::pair<StackView, uint64_t>> stacks() const;
  // Each distinct stack with its count, in the order they were first added: for a reader the
  // order does not matter to (it skips stacks()'s sort).
  template <class Visit>
  void for_each_stack(Visit&& visit) const {
    for (const Entry& e : entries_) visit(view(e), e.count);
  }

  friend bool operator==(const StackProfile& a, const StackProfile& b);

 private:
  struct Entry {
    uint32_t first = 0;  // in stack_frames_
    uint32_t size = 0;
    uint64_t count = 0;
  };
  template <class Frames>
  void add_frames(const Frames& stack, uint64_t count);
  template <class Frames>
  uint64_t count_frames(const Frames& stack) const;
  uint32_t find_frame(const Frame& frame) const;  // core::HashedIds::kNone when absent
  uint32_t find_stack(uint64_t hash, std::span<const uint32_t> ids) const;
  StackView view(const Entry& e) const {
    return StackView(std::span<const uint32_t>(stack_frames_).subspan(e.first, e.size), frames_.data());
  }

  std::vector<Frame> frames_;
  core::HashedIds frame_ids_;
  std::vector<uint32_t> stack_frames_;
  std::vector<Entry> entries_;
  core::HashedIds stack_ids_;
  std::vector<uint32_t> ids_;  // add's scratch
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
// The same label appended to `out` (no string of its own: folding and drawing make one per frame).
void append_frame_label(std::string& out, std::string_view name, FrameKind kind, Annotations annotations);
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
