#include "report/folded_stacks.h"

#include <gtest/gtest.h>

namespace vperf::report {
namespace {

Frame user(std::string name) { return Frame{std::move(name), FrameKind::User}; }
Frame kernel(std::string name) { return Frame{std::move(name), FrameKind::Kernel}; }

TEST(FoldedText, ProcessFirstSortedBytewiseCountsLast) {
  StackProfile p;
  p.add(Stack{process_frame("swapper"), kernel("start_kernel"), kernel("rest_init"), kernel("cpu_idle")}, 7);
  p.add(Stack{process_frame("bash"), user("main"), user("zeta")}, 2);
  p.add(Stack{process_frame("bash"), user("main")}, 1);
  p.add(Stack{process_frame("bash"), user("main"), user("Alpha")}, 3);
  EXPECT_EQ(folded_text(p),
            "bash;main 1\n"
            "bash;main;Alpha 3\n"
            "bash;main;zeta 2\n"
            "swapper;start_kernel;rest_init;cpu_idle 7\n");
}

TEST(FoldedText, AnnotationsAsStackcollapsePerlOptions) {
  StackProfile p;
  p.add(Stack{process_frame("java"), Frame{"Interpreter", FrameKind::Jit}, Frame{"inl", FrameKind::Inlined},
              kernel("sys_write"), Frame{"[unknown]", FrameKind::Unknown}},
        5);
  EXPECT_EQ(folded_text(p), "java;Interpreter;inl;sys_write;[unknown] 5\n");
  EXPECT_EQ(folded_text(p, {.annotations = {.kernel = true}}), "java;Interpreter;inl;sys_write_[k];[unknown] 5\n");
  EXPECT_EQ(folded_text(p, {.annotations = {.kernel = true, .jit = true}}),
            "java;Interpreter_[j];inl;sys_write_[k];[unknown] 5\n");
  EXPECT_EQ(folded_text(p, {.annotations = Annotations::all()}),
            "java;Interpreter_[j];inl_[i];sys_write_[k];[unknown] 5\n");
}

// The flame graph reads its profile back without the text: it must be what parsing the text
// gives, whatever the names hold (separators, parameter lists that tidy away, quotes, line
// breaks, names that already end in an annotation, a java process's class names, names that
// tidy to nothing at a stack's end) and whatever the options.
TEST(FoldedText, ReadBackWithoutTheTextIsWhatParsingTheTextGives) {
  StackProfile p;
  p.add(Stack{process_frame("java"), user("Ljava/lang/Thread;.run"), Frame{"Interpreter", FrameKind::Jit}, kernel("sys_write")}, 3);
  p.add(Stack{process_frame("javac"), user("Lcom/x/Y;.f(I)V"), user("f(int)"), user("(anonymous namespace)::g()")}, 4);
  p.add(Stack{process_frame("a b"), user("f(int)"), user("f(long)"), user("it's \"quoted\"")}, 2);
  p.add(Stack{process_frame("a"), user("two\nlines;and;semis"), user("x_[k]"), Frame{"inl", FrameKind::Inlined}}, 5);
  p.add(Stack{process_frame("a"), user("main"), user("(params only)"), user("")}, 6);
  p.add(Stack{process_frame(""), user("")}, 1);
  p.add(Stack{process_frame("go"), user("net/http.(*Client).Do"), Frame{"[unknown]", FrameKind::Unknown}}, 7);
  p.add(Stack{process_frame("guest"), Frame{"gk", FrameKind::GuestKernel}, Frame{"gu", FrameKind::GuestUser}}, 8);
  for (bool tidy : {true, false}) {
    for (Annotations annotations : {Annotations{}, Annotations{.kernel = true}, Annotations{true, false, true}, Annotations::all()}) {
      const FoldedOptions options{.annotations = annotations, .tidy = tidy};
      SCOPED_TRACE(folded_text(p, options));
      Result<StackProfile> parsed = parse_folded(folded_text(p, options));
      ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
      const StackProfile read_back = folded_and_read_back(p, options);
      EXPECT_TRUE(read_back == *parsed);
      EXPECT_EQ(folded_text(read_back, {.annotations = annotations, .tidy = false}),
                folded_text(*parsed, {.annotations = annotations, .tidy = false}));
    }
  }
}

TEST(FoldedText, StacksThatPrintTheSameAreOneLine) {
  StackProfile p;
  p.add(Stack{process_frame("a"), user("f(int)")}, 1);
  p.add(Stack{process_frame("a"), user("f(long)")}, 2);
  EXPECT_EQ(folded_text(p), "a;f 3\n");
  EXPECT_EQ(folded_text(p, {.tidy = false}), "a;f(int) 1\na;f(long) 2\n");
}

TEST(TidyFrameName, MatchesStackcollapsePerl) {
  EXPECT_EQ(tidy_frame_name("foo(int, char const*)", false), "foo");
  EXPECT_EQ(tidy_frame_name("(anonymous namespace)::worker(int)", false), "(anonymous namespace)::worker");
  EXPECT_EQ(tidy_frame_name("net/http.(*Client).Do", false), "net/http.(*Client).Do");
  EXPECT_EQ(tidy_frame_name("RegExp:[&<>\"']", false), "RegExp:[&<>]");
  EXPECT_EQ(tidy_frame_name("a;b", false), "a:b");
  EXPECT_EQ(tidy_frame_name("Lorg/mozilla/javascript/MemberBox;.<init>(Ljava/lang/reflect/Method;)V", true),
            "org/mozilla/javascript/MemberBox:.<init>");
  EXPECT_EQ(tidy_frame_name("Lfoo", true), "Lfoo");
  EXPECT_EQ(tidy_frame_name("std::vector<int, std::allocator<int> >::push_back", false),
            "std::vector<int, std::allocator<int> >::push_back");
}

TEST(FoldedText, UntidiedNamesStillFold) {
  StackProfile p;
  p.add(Stack{process_frame("a"), user("x;y\nz")}, 1);
  EXPECT_EQ(folded_text(p, {.tidy = false}), "a;x:y z 1\n");
}

TEST(ParseFolded, RoundTripsWithAnnotations) {
  const std::string text =
      "bash;main;[unknown] 4\n"
      "bash;main;std::vector<int, std::allocator<int> >::push_back 3\n"
      "java;Interpreter_[j];inl_[i];sys_write_[k] 5\n"
      "swapper;start_kernel_[k];cpu_idle_[k] 1234567\n";
  auto parsed = parse_folded(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
  EXPECT_EQ(parsed->total(), 4u + 3 + 5 + 1234567);
  EXPECT_EQ(parsed->count(Stack{user("java"), Frame{"Interpreter", FrameKind::Jit},
                                Frame{"inl", FrameKind::Inlined}, kernel("sys_write")}),
            5u);
  EXPECT_EQ(folded_text(*parsed, {.annotations = Annotations::all(), .tidy = false}), text);
  // And the profile survives text and back.
  auto again = parse_folded(folded_text(*parsed, {.annotations = Annotations::all()}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *parsed);
}

TEST(ParseFolded, ReadsLinesAsFlamegraphPlDoes) {
  auto parsed = parse_folded("a;b  5\r\n\n  \na;b;\t7\nc 1.0\n 2\na;;b 1\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
  // The count's separator is one whitespace character; the stack keeps any other.
  EXPECT_EQ(parsed->count(Stack{user("a"), user("b ")}), 5u);
  // Trailing empty frames go, as perl's split drops them; inner ones stay.
  EXPECT_EQ(parsed->count(Stack{user("a"), user("b")}), 7u);
  EXPECT_EQ(parsed->count(Stack{user("a"), user(""), user("b")}), 1u);
  EXPECT_EQ(parsed->count(Stack{user("c")}), 1u);
  EXPECT_EQ(parsed->count(Stack{}), 2u);
}

TEST(ParseFolded, RejectsLinesWithoutAWholeCount) {
  auto no_count = parse_folded("a;b 1\na;b\n");
  ASSERT_FALSE(no_count.ok());
  EXPECT_EQ(no_count.error().message, "folded stacks line 2: no count at the end of \"a;b\"");
  EXPECT_FALSE(parse_folded("a;b5\n").ok());
  auto fraction = parse_folded("a 1.5\n");
  ASSERT_FALSE(fraction.ok());
  EXPECT_NE(fraction.error().message.find("line 1"), std::string::npos);
}

TEST(DiffFolded, WritesAndParsesTwoCounts) {
  StackProfile before, after;
  before.add(Stack{user("a"), user("b")}, 3);
  before.add(Stack{user("a"), user("gone")}, 1);
  after.add(Stack{user("a"), user("b")}, 5);
  after.add(Stack{user("a"), user("new")}, 2);
  const std::string text = diff_folded_text(before, after);
  EXPECT_EQ(text, "a;b 3 5\na;gone 1 0\na;new 0 2\n");
  auto parsed = parse_diff_folded(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
  EXPECT_EQ(parsed->before, before);
  EXPECT_EQ(parsed->after, after);
  EXPECT_FALSE(parse_diff_folded("a;b 3\n").ok());
}

}  // namespace
}  // namespace vperf::report
