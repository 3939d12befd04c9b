#include "report/stack_profile.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <sstream>

namespace vperf::report {
namespace {

Frame user(std::string name) { return Frame{std::move(name), FrameKind::User}; }
Frame kernel(std::string name) { return Frame{std::move(name), FrameKind::Kernel}; }

Stack stack_of(std::initializer_list<std::string> names) {
  Stack s;
  for (const auto& n : names) s.push_back(user(n));
  return s;
}

// "name:total/self[children]" for compact comparisons.
std::string shape(const FlameNode& node) {
  std::ostringstream out;
  out << node.name << ':' << node.total << '/' << node.self;
  if (!node.children.empty()) {
    out << '[';
    for (size_t i = 0; i < node.children.size(); ++i) out << (i ? " " : "") << shape(node.children[i]);
    out << ']';
  }
  return out.str();
}

TEST(StackProfile, AddsCountsOfEqualStacksAndIgnoresZero) {
  StackProfile p;
  p.add(stack_of({"a", "b"}), 3);
  p.add(stack_of({"a", "b"}), 2);
  p.add(stack_of({"a"}));
  p.add(stack_of({"c"}), 0);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(p.total(), 6u);
  EXPECT_EQ(p.count(stack_of({"a", "b"})), 5u);
  EXPECT_EQ(p.count(stack_of({"c"})), 0u);
}

// Stacks are kept as ids of frames kept once; they still come out in Frame order (name, then
// kind) stack by stack, as a std::map<Stack, count> orders them, with the counts summed.
TEST(StackProfile, StacksComeInTheOrderOfAMapOfStacks) {
  uint64_t state = 99;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
  StackProfile p;
  std::map<Stack, uint64_t> model;
  for (int i = 0; i < 3000; ++i) {
    Stack stack;
    for (uint64_t depth = next() % 6; depth > 0; --depth)
      stack.push_back(Frame{"f" + std::to_string(next() % 5), next() % 3 == 0 ? FrameKind::Kernel : FrameKind::User});
    const uint64_t count = 1 + next() % 4;
    p.add(stack, count);
    model[stack] += count;
  }
  const auto stacks = p.stacks();
  ASSERT_EQ(stacks.size(), model.size());
  size_t i = 0;
  for (const auto& [stack, count] : model) {
    EXPECT_EQ(stacks[i].first.to_stack(), stack) << "stack " << i;
    EXPECT_EQ(stacks[i].second, count);
    EXPECT_EQ(p.count(stack), count);
    ++i;
  }
}

TEST(StackProfile, KindIsPartOfTheFrame) {
  StackProfile p;
  p.add(Stack{user("f")}, 1);
  p.add(Stack{kernel("f")}, 1);
  EXPECT_EQ(p.size(), 2u);
}

TEST(StackProfile, MergeAddsEveryStack) {
  StackProfile a, b;
  a.add(stack_of({"x", "y"}), 2);
  b.add(stack_of({"x", "y"}), 3);
  b.add(stack_of({"z"}), 4);
  a.merge(b);
  EXPECT_EQ(a.total(), 9u);
  EXPECT_EQ(a.count(stack_of({"x", "y"})), 5u);
  EXPECT_EQ(a.count(stack_of({"z"})), 4u);
}

TEST(ProcessLabel, FollowsStackcollapsePerl) {
  EXPECT_EQ(process_label("V8 WorkerThread", ProcessLabel::Comm), "V8_WorkerThread");
  EXPECT_EQ(process_label("java", ProcessLabel::CommPid, 24636), "java-24636");
  EXPECT_EQ(process_label("java", ProcessLabel::CommPidTid, 24636, 25607), "java-24636/25607");
  EXPECT_EQ(process_frame("bash").kind, FrameKind::Process);
}

TEST(FrameLabel, AnnotatesOnlyWhenAskedAndParsesBack) {
  EXPECT_EQ(frame_label(kernel("do_sys_open"), {}), "do_sys_open");
  EXPECT_EQ(frame_label(kernel("do_sys_open"), {.kernel = true}), "do_sys_open_[k]");
  EXPECT_EQ(frame_label(Frame{"vmx_vcpu_run", FrameKind::GuestKernel}, {.kernel = true}), "vmx_vcpu_run_[k]");
  EXPECT_EQ(frame_label(Frame{"Interpreter", FrameKind::Jit}, Annotations::all()), "Interpreter_[j]");
  EXPECT_EQ(frame_label(Frame{"Interpreter_[j]", FrameKind::Jit}, Annotations::all()), "Interpreter_[j]");
  EXPECT_EQ(frame_label(Frame{"inl", FrameKind::Inlined}, Annotations::all()), "inl_[i]");
  EXPECT_EQ(frame_label(user("main"), Annotations::all()), "main");

  EXPECT_EQ(frame_from_label("do_sys_open_[k]"), kernel("do_sys_open"));
  EXPECT_EQ(frame_from_label("x_[j]"), (Frame{"x", FrameKind::Jit}));
  EXPECT_EQ(frame_from_label("x_[i]"), (Frame{"x", FrameKind::Inlined}));
  EXPECT_EQ(frame_from_label("x_[w]"), user("x_[w]"));
  EXPECT_EQ(frame_from_label("[unknown]"), user("[unknown]"));
}

TEST(FlameTree, MergesCommonPrefixesWithSelfAndTotal) {
  StackProfile p;
  p.add(stack_of({"a", "b"}), 3);
  p.add(stack_of({"a", "c"}), 2);
  p.add(stack_of({"a"}), 1);
  p.add(stack_of({"d"}), 4);
  FlameTree tree = build_flame_tree(p);
  EXPECT_EQ(shape(tree.root), "all:10/0[a:6/1[b:3/3 c:2/2] d:4/4]");
  EXPECT_FALSE(tree.differential);
  EXPECT_EQ(tree.root.node_count(), 5u);
  EXPECT_EQ(tree.root.depth(), 2);
}

TEST(FlameTree, ChildrenAreInFlamegraphPlOrderNotInsertionOrder) {
  StackProfile p;
  p.add(stack_of({"main", "zeta"}), 1);
  p.add(stack_of({"main", "Alpha"}), 1);
  p.add(stack_of({"main", "alpha"}), 1);
  p.add(stack_of({"main", "_start"}), 1);
  FlameTree tree = build_flame_tree(p);
  // Bytewise: 'A' < '_' < 'a' < 'z'.
  EXPECT_EQ(shape(tree.root), "all:4/0[main:4/0[Alpha:1/1 _start:1/1 alpha:1/1 zeta:1/1]]");
}

TEST(FlameTree, SplitsANodeWhereFlamegraphPlDoes) {
  // flamegraph.pl sorts whole lines: "x;foo 1" < "x;foo.cold 1" < "x;foo;bar 1" ('.' < ';'),
  // so foo is drawn twice, on both sides of foo.cold.
  StackProfile p;
  p.add(stack_of({"x", "foo"}), 1);
  p.add(stack_of({"x", "foo.cold"}), 2);
  p.add(stack_of({"x", "foo", "bar"}), 3);
  FlameTree tree = build_flame_tree(p);
  EXPECT_EQ(shape(tree.root), "all:6/0[x:6/0[foo:1/1 foo.cold:2/2 foo:3/0[bar:3/3]]]");
}

TEST(FlameTree, OrdersByAnnotatedLabelsWhenAsked) {
  StackProfile p;
  p.add(Stack{user("f"), kernel("a_x")}, 1);
  p.add(Stack{user("f"), kernel("a")}, 1);
  // Plain labels: "f;a 1" < "f;a_x 1" (' ' is below every name character).
  EXPECT_EQ(shape(build_flame_tree(p).root), "all:2/0[f:2/0[a:1/1 a_x:1/1]]");
  p.add(Stack{user("f"), kernel("a_Z")}, 1);
  // 'Z' (0x5a) < '[' (0x5b): with annotations a_Z_[k] sorts before a_[k].
  EXPECT_EQ(shape(build_flame_tree(p).root), "all:3/0[f:3/0[a:1/1 a_Z:1/1 a_x:1/1]]");
  EXPECT_EQ(shape(build_flame_tree(p, {.annotations = {.kernel = true}}).root),
            "all:3/0[f:3/0[a_Z:1/1 a:1/1 a_x:1/1]]");
}

TEST(FlameTree, DifferentFramesWithOneLabelOrderByTheirCountsText) {
  // Unannotated, kernel "a" and user "a" spell the same "f;a": the lines differ only in their
  // counts, compared as text ("f;a 12" < "f;a 3"), so the frame seen second stays second.
  StackProfile p;
  p.add(Stack{user("f"), user("a")}, 3);
  p.add(Stack{user("f"), kernel("a")}, 12);
  p.add(Stack{user("f"), user("a;b")}, 1);  // "f;a;b 1": ' ' < ';', after both
  EXPECT_EQ(shape(build_flame_tree(p).root), "all:16/0[f:16/0[a:12/12 a:3/3 a;b:1/1]]");
  // A line that goes on past another's last frame compares its ';' there, not its next name:
  // "f;a 12" < "f;a;\tz 1" although '\t' < ' '.
  p.add(Stack{user("f"), kernel("a"), user("\tz")}, 1);
  EXPECT_EQ(shape(build_flame_tree(p).root), "all:17/0[f:17/0[a:12/12 a:3/3 a:1/0[\tz:1/1] a;b:1/1]]");
}

TEST(FlameTree, ReversedMergesFromTheLeaves) {
  StackProfile p;
  p.add(stack_of({"main", "a", "malloc"}), 2);
  p.add(stack_of({"main", "b", "malloc"}), 3);
  FlameTree tree = build_flame_tree(p, {.reversed = true});
  EXPECT_EQ(shape(tree.root), "all:5/0[malloc:5/0[a:2/0[main:2/2] b:3/0[main:3/3]]]");
}

TEST(FlameTree, EmptyStackCountsAtTheRoot) {
  StackProfile p;
  p.add(Stack{}, 2);
  p.add(stack_of({"a"}), 1);
  EXPECT_EQ(shape(build_flame_tree(p).root), "all:3/2[a:1/1]");
  EXPECT_EQ(shape(build_flame_tree(StackProfile{}).root), "all:0/0");
}

TEST(DiffFlameTree, WidthsFromAfterDeltasAtLeaves) {
  StackProfile before, after;
  before.add(stack_of({"a", "grew"}), 1);
  before.add(stack_of({"a", "shrank"}), 9);
  before.add(stack_of({"a", "gone"}), 4);
  after.add(stack_of({"a", "grew"}), 6);
  after.add(stack_of({"a", "shrank"}), 2);
  after.add(stack_of({"a", "new"}), 3);
  FlameTree tree = build_diff_flame_tree(before, after);
  EXPECT_TRUE(tree.differential);
  EXPECT_EQ(tree.max_delta, 7);  // |2 - 9|
  // "gone" takes no width and is dropped.
  EXPECT_EQ(shape(tree.root), "all:11/0[a:11/0[grew:6/6 new:3/3 shrank:2/2]]");
  const auto& a = tree.root.children[0];
  EXPECT_EQ(a.delta, 0);
  EXPECT_EQ(a.children[0].delta, 5);
  EXPECT_EQ(a.children[1].delta, 3);
  EXPECT_EQ(a.children[2].delta, -7);
}

TEST(DiffFlameTree, MaxDeltaIsAtLeastOne) {
  StackProfile same;
  same.add(stack_of({"a"}), 5);
  EXPECT_EQ(build_diff_flame_tree(same, same).max_delta, 1);
}

}  // namespace
}  // namespace vperf::report
