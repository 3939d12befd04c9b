#include "tracing/probe_definition.h"

#include <gtest/gtest.h>

namespace vperf::tracing {
namespace {

ProbeDefinition parsed(std::string_view text) {
  Result<ProbeDefinition> def = parse_probe_definition(text);
  if (!def) throw std::runtime_error(def.error().describe());
  return std::move(def).value();
}

// The forms of perf probe's own manual (perf-probe.txt, PROBE SYNTAX and EXAMPLES).
TEST(ProbeDefinition, FunctionsWithTheirPlaces) {
  ProbeDefinition plain = parsed("vfs_read");
  EXPECT_EQ(plain.function, "vfs_read");
  EXPECT_TRUE(plain.file.empty());
  EXPECT_FALSE(plain.line || plain.offset || plain.return_probe);

  ProbeDefinition ret = parsed("do_sys_open%return $retval");
  EXPECT_EQ(ret.function, "do_sys_open");
  EXPECT_TRUE(ret.return_probe);
  ASSERT_EQ(ret.arguments.size(), 1u);
  EXPECT_EQ(ret.arguments[0].expression, "$retval");
  EXPECT_TRUE(ret.arguments[0].variable.empty());

  // perf reads a missing relative line as 0 (strtoul of nothing): FUNC's own line.
  ProbeDefinition empty_line = parsed("getname_flags: pathname=filename:ustring");
  EXPECT_EQ(empty_line.function, "getname_flags");
  EXPECT_EQ(empty_line.line, 0u);
  ASSERT_EQ(empty_line.arguments.size(), 1u);

  ProbeDefinition relative = parsed("schedule:10");
  EXPECT_EQ(relative.function, "schedule");
  EXPECT_EQ(relative.line, 10u);

  ProbeDefinition in_file = parsed("vfs_read@fs/read_write.c:5");
  EXPECT_EQ(in_file.function, "vfs_read");
  EXPECT_EQ(in_file.file, "fs/read_write.c");
  EXPECT_EQ(in_file.line, 5u);

  // A clone's name keeps its dots: '+' makes the point a function.
  ProbeDefinition clone = parsed("foo.isra.0+0x10");
  EXPECT_EQ(clone.function, "foo.isra.0");
  EXPECT_EQ(clone.offset, 0x10u);

  ProbeDefinition lazy = parsed("vfs_read;count*;x file");
  EXPECT_EQ(lazy.function, "vfs_read");
  EXPECT_EQ(lazy.lazy_pattern, "count*;x");  // to the end of the point, ';' included
  ASSERT_EQ(lazy.arguments.size(), 1u);  // words after the point are arguments

  // perf's rule, not a guess: a point is a file only with a '.' before ':' or ';' and none of
  // "+@%", so these are functions (resolving them fails later, as in perf).
  EXPECT_EQ(parsed("a.c").function, "a.c");
  EXPECT_EQ(parsed("main.c+4").function, "main.c");
  EXPECT_EQ(parsed("vfs_read;x:3").lazy_pattern, "x:3");

  ProbeDefinition address = parsed("0x4a5f0");
  EXPECT_EQ(address.address, 0x4a5f0u);
}

TEST(ProbeDefinition, SourceFilePoints) {
  ProbeDefinition line = parsed("kernel/sched/core.c:1234");
  EXPECT_TRUE(line.function.empty());
  EXPECT_EQ(line.file, "kernel/sched/core.c");
  EXPECT_EQ(line.line, 1234u);

  ProbeDefinition pattern = parsed("fs/read_write.c;rw_verify_area*;x");
  EXPECT_EQ(pattern.file, "fs/read_write.c");
  EXPECT_EQ(pattern.lazy_pattern, "rw_verify_area*;x");  // ';' after the first is the pattern's
}

TEST(ProbeDefinition, EventAndGroupNames) {
  ProbeDefinition named = parsed("myprobe=do_sys_open dfd filename");
  EXPECT_TRUE(named.group.empty());
  EXPECT_EQ(named.event, "myprobe");
  EXPECT_EQ(named.function, "do_sys_open");
  ASSERT_EQ(named.arguments.size(), 2u);
  EXPECT_EQ(named.arguments[1].variable, "filename");

  ProbeDefinition grouped = parsed("probe_libc:malloc=malloc size=%di:u64");
  EXPECT_EQ(grouped.group, "probe_libc");
  EXPECT_EQ(grouped.event, "malloc");
  ASSERT_EQ(grouped.arguments.size(), 1u);
  EXPECT_EQ(grouped.arguments[0].name, "size");
  EXPECT_EQ(grouped.arguments[0].expression, "%di");
  EXPECT_EQ(grouped.arguments[0].type, "u64");
}

TEST(ProbeDefinition, ArgumentsWithFieldsTypesAndUserMemory) {
  ProbeDefinition def =
      parsed("tcp_sendmsg state=sk->__sk_common.skc_state arr[2] +0($retval):string buf@user:string flags:b4@2/32 @jiffies");
  ASSERT_EQ(def.arguments.size(), 6u);
  const ProbeArgument& state = def.arguments[0];
  EXPECT_EQ(state.name, "state");
  EXPECT_EQ(state.variable, "sk");
  EXPECT_EQ(state.fields, (std::vector<std::string>{"->__sk_common", ".skc_state"}));
  EXPECT_EQ(def.arguments[1].variable, "arr");
  EXPECT_EQ(def.arguments[1].fields, std::vector<std::string>{"[2]"});
  EXPECT_EQ(def.arguments[2].expression, "+0($retval)");
  EXPECT_EQ(def.arguments[2].type, "string");
  EXPECT_TRUE(def.arguments[2].variable.empty());
  EXPECT_TRUE(def.arguments[3].user_access);
  EXPECT_EQ(def.arguments[3].expression, "buf");
  EXPECT_EQ(def.arguments[3].type, "string");
  EXPECT_EQ(def.arguments[4].type, "b4@2/32");
  EXPECT_EQ(def.arguments[5].expression, "@jiffies");
}

// perf's exclusions and malformed points: one Error each, saying what is wrong.
TEST(ProbeDefinition, WhatPerfRefusesIsAnError) {
  for (const char* bad : {"", "   ", "vfs_read:1+4", "vfs_read:3;x", "f%entry", "f@a.c@b.c", "a.c:x",
                          "f:3%return", "f+8%return", "2bad=f", "grp-x:ev=f", "f;", "f:abc", "f+zz", "0xzz", "=f",
                          "f x:u7", "f x:", "f 9y=x", "f a->", "f a[", "f a[x]", "f a..b"}) {
    Result<ProbeDefinition> def = parse_probe_definition(bad);
    EXPECT_FALSE(def.ok()) << "'" << bad << "' parsed";
    if (!def) {
      EXPECT_NE(def.error().describe().find("probe definition"), std::string::npos) << def.error().describe();
    }
  }
}

// Numbers past what they count are refused, never wrapped: an offset past 2^64 - 1, a line
// past 2^31 - 1 (perf's and DWARF's int), a range whose +NUM ends past it, a file's line 0,
// a bitfield type whose bits do not fit its container.
TEST(ProbeDefinition, NumbersPastTheirRangeAreRefused) {
  EXPECT_EQ(*parsed("f+18446744073709551615").offset, UINT64_MAX);  // a number: the function's size refuses it
  EXPECT_EQ(*parsed("f:2147483647").line, 2147483647u);
  for (const char* bad : {"f+18446744073709551616", "f+0x10000000000000000", "f:2147483648", "f:99999999999999999999", "a.c:4294967297",
                          "f x:b65@0/64", "f x:b8@1/8", "f x:b0@0/8", "f x:b4@0/12", "f x:b18446744073709551615@1/64"}) {
    Result<ProbeDefinition> def = parse_probe_definition(bad);
    EXPECT_FALSE(def.ok()) << "'" << bad << "' parsed";
  }
  EXPECT_EQ(*parse_line_range("f:1-2147483646")->end, 2147483646u);
  EXPECT_FALSE(parse_line_range("f:1-2147483647")->end.has_value());  // perf's open range, written out
  EXPECT_FALSE(parse_line_range("f:2+2147483646")->end.has_value());
  for (const char* bad : {"f:2+2147483647", "f:1-2147483648", "f:4294967296", "f:1+18446744073709551615", "a.c:0", "a.c:0-3"}) {
    Result<LineRange> range = parse_line_range(bad);
    EXPECT_FALSE(range.ok()) << "'" << bad << "' parsed to " << range->start << "-" << range->end.value_or(0);
  }
  EXPECT_EQ(parse_line_range("f:0-3")->start, 0u);  // a function's line 0 is its declaration
}

// Words split at any white space, as perf's argv_split: a newline in a definition separates two
// arguments and never stays inside one (uprobe_events would read the rest as another command);
// other control characters are refused, and the error quotes them escaped, on one line.
TEST(ProbeDefinition, WhiteSpaceSeparatesWordsAndControlCharactersAreRefused) {
  const ProbeDefinition def = parsed("f+4\t%di\n-x\r\n%si");
  ASSERT_EQ(def.arguments.size(), 3u);
  EXPECT_EQ(def.arguments[0].expression, "%di");
  EXPECT_EQ(def.arguments[1].expression, "-x");
  EXPECT_EQ(def.arguments[2].expression, "%si");
  for (const char* bad : {"f %di\x01", "f\x7f", "f +0(%si)\x1b:string"}) {
    Result<ProbeDefinition> refused = parse_probe_definition(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().message.find_first_of("\n\x01\x7f\x1b"), std::string::npos) << refused.error().message;
  }
  EXPECT_EQ(parse_probe_definition("f %di\x01").error().message, "probe definition 'f %di\\x01': it holds a control character (\\x01)");
  EXPECT_FALSE(parse_line_range("f\n:1").ok());
}

TEST(ProbeDefinition, EventNamesAreCIdentifiers) {
  EXPECT_TRUE(is_probe_event_name("probe_libc"));
  EXPECT_TRUE(is_probe_event_name("_x1"));
  EXPECT_FALSE(is_probe_event_name("1x"));
  EXPECT_FALSE(is_probe_event_name("a-b"));
  EXPECT_FALSE(is_probe_event_name(""));
}

// "@NAME[+-N]" becomes "@+OFFSET" from the lookup, nested in fetches too; "@+0x10" stays; an
// unknown name or a bad addend is the Error.
TEST(RewriteSymbolFetches, SymbolsBecomeFileOffsetsAndTheRestStays) {
  std::vector<std::pair<std::string, int64_t>> asked;
  auto lookup = [&](const std::string& name, int64_t addend) -> Result<uint64_t> {
    asked.emplace_back(name, addend);
    if (name == "missing") return Error{"no data symbol missing"};
    return 0x4000 + static_cast<uint64_t>(addend);
  };
  EXPECT_EQ(*rewrite_symbol_fetches("@counter", lookup), "@+0x4000");
  EXPECT_EQ(*rewrite_symbol_fetches("+8(@gs+8)", lookup), "+8(@+0x4008)");
  EXPECT_EQ(*rewrite_symbol_fetches("@table-0x10", lookup), "@+0x3ff0");
  EXPECT_EQ(*rewrite_symbol_fetches("@+0x10", lookup), "@+0x10");
  EXPECT_EQ(*rewrite_symbol_fetches("%di", lookup), "%di");
  EXPECT_EQ(asked, (std::vector<std::pair<std::string, int64_t>>{{"counter", 0}, {"gs", 8}, {"table", -16}}));
  EXPECT_EQ(rewrite_symbol_fetches("@missing", lookup).error().message, "no data symbol missing");
  EXPECT_FALSE(rewrite_symbol_fetches("@gs+zz", lookup).ok());
}

}  // namespace
}  // namespace vperf::tracing
