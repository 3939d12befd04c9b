#include "report/stack_profile.h"

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <functional>

namespace vperf::report {

std::string_view frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::Process: return "process";
    case FrameKind::User: return "user";
    case FrameKind::Kernel: return "kernel";
    case FrameKind::GuestUser: return "guest-user";
    case FrameKind::GuestKernel: return "guest-kernel";
    case FrameKind::Jit: return "jit";
    case FrameKind::Inlined: return "inlined";
    case FrameKind::Unknown: return "unknown";
  }
  return "unknown";
}

bool is_kernel(FrameKind kind) { return kind == FrameKind::Kernel || kind == FrameKind::GuestKernel; }

std::string process_label(std::string_view comm, ProcessLabel label, int pid, int tid) {
  std::string out(comm);
  switch (label) {
    case ProcessLabel::Comm: break;
    case ProcessLabel::CommPid: out += "-" + std::to_string(pid); break;
    case ProcessLabel::CommPidTid: out += "-" + std::to_string(pid) + "/" + std::to_string(tid); break;
  }
  std::replace(out.begin(), out.end(), ' ', '_');
  return out;
}

Frame process_frame(std::string_view comm, ProcessLabel label, int pid, int tid) {
  return Frame{process_label(comm, label, pid, tid), FrameKind::Process};
}

namespace {

uint64_t mix(uint64_t h, uint64_t word) {
  h ^= word * 0x9e3779b97f4a7c15ULL;
  return ((h << 31) | (h >> 33)) * 0xc2b2ae3d27d4eb4fULL;
}

uint64_t frame_hash(const Frame& frame) { return mix(std::hash<std::string>()(frame.name), static_cast<uint64_t>(frame.kind)); }

uint64_t stack_hash(std::span<const uint32_t> ids) {
  uint64_t h = ids.size();
  for (uint32_t id : ids) h = mix(h, id);
  return h;
}

}  // namespace

uint32_t StackProfile::find_frame(const Frame& frame) const {
  return frame_ids_.find(frame_hash(frame), [&](uint32_t known) { return frames_[known] == frame; });
}

uint32_t StackProfile::frame_id(const Frame& frame) {
  const auto [id, added] = frame_ids_.find_or_insert(frame_hash(frame), [&](uint32_t known) { return frames_[known] == frame; },
                                                    static_cast<uint32_t>(frames_.size()));
  if (added) frames_.push_back(frame);
  return id;
}

uint32_t StackProfile::find_stack(uint64_t hash, std::span<const uint32_t> ids) const {
  return stack_ids_.find(hash, [&](uint32_t known) {
    const Entry& e = entries_[known];
    return e.size == ids.size() && std::equal(ids.begin(), ids.end(), stack_frames_.begin() + e.first);
  });
}

template <class Frames>
void StackProfile::add_frames(const Frames& stack, uint64_t count) {
  if (count == 0) return;
  ids_.clear();
  for (const Frame& frame : stack) ids_.push_back(frame_id(frame));
  add_ids(ids_, count);
}

void StackProfile::add_ids(std::span<const uint32_t> frame_ids, uint64_t count) {
  if (count == 0) return;
  const uint64_t hash = stack_hash(frame_ids);
  uint32_t id = find_stack(hash, frame_ids);
  if (id == core::HashedIds::kNone) {
    id = static_cast<uint32_t>(entries_.size());
    stack_ids_.insert(hash, id);
    entries_.push_back(Entry{static_cast<uint32_t>(stack_frames_.size()), static_cast<uint32_t>(frame_ids.size()), 0});
    stack_frames_.insert(stack_frames_.end(), frame_ids.begin(), frame_ids.end());
  }
  entries_[id].count += count;
  total_ += count;
}

template <class Frames>
uint64_t StackProfile::count_frames(const Frames& stack) const {
  std::vector<uint32_t> ids;
  for (const Frame& frame : stack) {
    const uint32_t id = find_frame(frame);
    if (id == core::HashedIds::kNone) return 0;
    ids.push_back(id);
  }
  const uint32_t found = find_stack(stack_hash(ids), ids);
  return found == core::HashedIds::kNone ? 0 : entries_[found].count;
}

void StackProfile::add(const Stack& stack, uint64_t count) { add_frames(stack, count); }
void StackProfile::add(const StackView& stack, uint64_t count) { add_frames(stack, count); }
uint64_t StackProfile::count(const Stack& stack) const { return count_frames(stack); }
uint64_t StackProfile::count(const StackView& stack) const { return count_frames(stack); }

void StackProfile::merge(const StackProfile& other) {
  for (const Entry& e : other.entries_) add(other.view(e), e.count);
}

std::vector<std::pair<StackView, uint64_t>> StackProfile::stacks() const {
  std::vector<uint32_t> order(entries_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  // Frame order, stack by stack: the order a std::map<Stack, ...> keeps. Ids compare equal
  // frames without reading them.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Entry &x = entries_[a], &y = entries_[b];
    const size_t n = std::min(x.size, y.size);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t fx = stack_frames_[x.first + i], fy = stack_frames_[y.first + i];
      if (fx != fy) return frames_[fx] < frames_[fy];
    }
    return x.size < y.size;
  });
  std::vector<std::pair<StackView, uint64_t>> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.emplace_back(view(entries_[i]), entries_[i].count);
  return out;
}

bool operator==(const StackProfile& a, const StackProfile& b) {
  if (a.total_ != b.total_ || a.entries_.size() != b.entries_.size()) return false;
  for (const StackProfile::Entry& e : a.entries_)
    if (b.count(a.view(e)) != e.count) return false;
  return true;
}

namespace {

constexpr std::string_view kKernelSuffix = "_[k]";
constexpr std::string_view kJitSuffix = "_[j]";
constexpr std::string_view kInlinedSuffix = "_[i]";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

namespace {

// The annotation a frame's label ends with.
std::string_view label_suffix(std::string_view name, FrameKind kind, Annotations annotations) {
  if (annotations.kernel && is_kernel(kind)) return kKernelSuffix;
  if (annotations.jit && kind == FrameKind::Jit && !ends_with(name, kJitSuffix)) return kJitSuffix;
  if (annotations.inlined && kind == FrameKind::Inlined && !ends_with(name, kInlinedSuffix)) return kInlinedSuffix;
  return {};
}

}  // namespace

void append_frame_label(std::string& out, std::string_view name, FrameKind kind, Annotations annotations) {
  out += name;
  out += label_suffix(name, kind, annotations);
}

std::string frame_label(const Frame& frame, Annotations annotations) {
  std::string label;
  append_frame_label(label, frame.name, frame.kind, annotations);
  return label;
}

Frame frame_from_label(std::string_view label) {
  auto strip = [&](std::string_view suffix, FrameKind kind) {
    return Frame{std::string(label.substr(0, label.size() - suffix.size())), kind};
  };
  if (ends_with(label, kKernelSuffix)) return strip(kKernelSuffix, FrameKind::Kernel);
  if (ends_with(label, kJitSuffix)) return strip(kJitSuffix, FrameKind::Jit);
  if (ends_with(label, kInlinedSuffix)) return strip(kInlinedSuffix, FrameKind::Inlined);
  return Frame{std::string(label), FrameKind::User};
}

size_t FlameNode::node_count() const {
  size_t n = 1;
  for (const auto& child : children) n += child.node_count();
  return n;
}

int FlameNode::depth() const {
  int d = 0;
  for (const auto& child : children) d = std::max(d, child.depth() + 1);
  return d;
}

namespace {

// One folded line as flamegraph.pl sees it: the frames' labels joined by ';', then the counts.
// The text is never made: lines are ordered as their texts would be, byte by byte, but the
// comparison skips the frames two lines share (most of a deep stack) without reading them.
struct Line {
  std::vector<const Frame*> frames;   // root first (leaf first with --reverse)
  std::string counts;                 // " 12" (or " 10 12" for diffs)
  uint64_t width = 0;                 // the count that takes space (after's, for diffs)
  int64_t delta = 0;
};

template <class Frames>  // a Stack or a StackView
Line make_line(const Frames& stack, const FlameTreeOptions& options) {
  Line line;
  line.frames.reserve(stack.size());
  for (const auto& frame : stack) line.frames.push_back(&frame);
  if (options.reversed) std::reverse(line.frames.begin(), line.frames.end());
  return line;
}

// The bytes of a line's text, a piece (a name, an annotation, a ';', the counts) at a time.
class LineText {
 public:
  // From the end of the first `shared` frames' labels, which the other line has too: the ';'
  // (or the counts) after them.
  LineText(const Line& line, size_t shared, Annotations annotations)
      : line_(line), annotations_(annotations), frame_(shared == 0 ? 0 : shared - 1), part_(shared == 0 ? 0 : 2) {
    load();
  }
  // What is left of the current piece; empty only past the end of the text.
  std::string_view rest() {
    while (piece_.empty() && advance()) {
    }
    return piece_;
  }
  void skip(size_t n) { piece_.remove_prefix(n); }

 private:
  // The pieces of frame k: 0 its name, 1 its annotation, 2 the ';' or, after the last frame, the counts.
  void load() {
    if (frame_ >= line_.frames.size()) {
      part_ = 2;
      piece_ = line_.counts;
      return;
    }
    const Frame& f = *line_.frames[frame_];
    piece_ = part_ == 0 ? std::string_view(f.name)
           : part_ == 1 ? label_suffix(f.name, f.kind, annotations_)
           : frame_ + 1 < line_.frames.size() ? std::string_view(";") : std::string_view(line_.counts);
  }
  bool advance() {
    if (frame_ >= line_.frames.size() || (part_ == 2 && frame_ + 1 == line_.frames.size())) return false;
    if (++part_ == 3) {
      part_ = 0;
      ++frame_;
    }
    load();
    return true;
  }

  const Line& line_;
  Annotations annotations_;
  size_t frame_;
  int part_;
  std::string_view piece_;
};

// std::string's order of the two texts (bytes as unsigned char), then the frames' kinds.
// The texts are compared a common stretch of two pieces at a time (memcmp: unsigned bytes).
bool line_less(const Line& a, const Line& b, Annotations annotations) {
  size_t same = 0;  // the same frame has the same label
  const size_t shorter = std::min(a.frames.size(), b.frames.size());
  while (same < shorter && a.frames[same] == b.frames[same]) ++same;
  LineText text_a(a, same, annotations), text_b(b, same, annotations);
  for (;;) {
    const std::string_view x = text_a.rest(), y = text_b.rest();
    if (x.empty() || y.empty()) {
      if (!x.empty() || !y.empty()) return x.empty();
      break;
    }
    const size_t n = std::min(x.size(), y.size());
    if (const int order = std::memcmp(x.data(), y.data(), n); order != 0) return order < 0;
    text_a.skip(n);
    text_b.skip(n);
  }
  return std::lexicographical_compare(a.frames.begin(), a.frames.end(), b.frames.begin(), b.frames.end(),
                                      [](const Frame* x, const Frame* y) { return x->kind < y->kind; });
}

void drop_empty(FlameNode& node) {
  std::erase_if(node.children, [](const FlameNode& child) { return child.total == 0; });
  for (auto& child : node.children) drop_empty(child);
}

// flamegraph.pl's flow(): each line shares the frames it has in common with the previous
// line's path and opens new boxes for the rest.
FlameTree merge_lines(const std::vector<Line>& lines, Annotations annotations) {
  // Sorted through pointers: a Line is a vector and a string, which a swap would copy.
  std::vector<const Line*> sorted;
  sorted.reserve(lines.size());
  for (const Line& line : lines) sorted.push_back(&line);
  std::sort(sorted.begin(), sorted.end(),
            [annotations](const Line* a, const Line* b) { return line_less(*a, *b, annotations); });
  FlameTree tree;
  tree.root.name = "all";
  std::vector<FlameNode*> path{&tree.root};
  for (const Line* line_in_order : sorted) {
    const Line& line = *line_in_order;
    size_t same = 0;
    while (same < line.frames.size() && same + 1 < path.size() &&
           path[same + 1]->name == line.frames[same]->name && path[same + 1]->kind == line.frames[same]->kind) {
      ++same;
    }
    path.resize(same + 1);
    for (size_t i = same; i < line.frames.size(); ++i) {
      FlameNode& parent = *path.back();
      parent.children.push_back(FlameNode{line.frames[i]->name, line.frames[i]->kind, 0, 0, 0, {}});
      path.push_back(&parent.children.back());
    }
    for (FlameNode* node : path) node->total += line.width;
    path.back()->self += line.width;
    path.back()->delta += line.delta;
  }
  drop_empty(tree.root);
  return tree;
}

}  // namespace

FlameTree build_flame_tree(const StackProfile& profile, const FlameTreeOptions& options) {
  std::vector<Line> lines;
  lines.reserve(profile.size());
  profile.for_each_stack([&](const StackView& stack, uint64_t count) {  // merge_lines sorts them
    Line line = make_line(stack, options);
    line.counts = ' ' + std::to_string(count);
    line.width = count;
    lines.push_back(std::move(line));
  });
  return merge_lines(lines, options.annotations);
}

FlameTree build_diff_flame_tree(const StackProfile& before, const StackProfile& after,
                                const FlameTreeOptions& options) {
  std::map<Stack, std::pair<uint64_t, uint64_t>> both;
  for (const auto& [stack, count] : before.stacks()) both[stack.to_stack()].first = count;
  for (const auto& [stack, count] : after.stacks()) both[stack.to_stack()].second = count;
  std::vector<Line> lines;
  lines.reserve(both.size());
  int64_t max_delta = 1;
  for (const auto& [stack, counts] : both) {
    Line line = make_line(stack, options);
    line.counts = ' ' + std::to_string(counts.first) + ' ' + std::to_string(counts.second);
    line.width = counts.second;
    line.delta = static_cast<int64_t>(counts.second) - static_cast<int64_t>(counts.first);
    max_delta = std::max(max_delta, std::abs(line.delta));
    lines.push_back(std::move(line));
  }
  FlameTree tree = merge_lines(lines, options.annotations);
  tree.differential = true;
  tree.max_delta = max_delta;
  return tree;
}

}  // namespace vperf::report
