#include "symbols/jit_map.h"

#include <gtest/gtest.h>

#include "support/fake_event_fs.h"

namespace vperf::symbols {
namespace {

TEST(JitMap, ParsesStartSizeAndNamesWithSpaces) {
  auto t = parse_jit_map(
      "7f0000001000 40 LazyCompile:~foo bar.js:10\n"
      "7f0000001040 0x20 Builtin:ArgumentsAdaptor\n"
      "garbage line\n"
      "7f0000002000 zz bad size\n"
      "\n");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.find(0x7f0000001010)->name, "LazyCompile:~foo bar.js:10");
  EXPECT_EQ(t.find(0x7f000000105f)->name, "Builtin:ArgumentsAdaptor");
  EXPECT_EQ(t.find(0x7f0000001060), nullptr);
}

TEST(JitMap, LoadsPerfPidMapFromADirectory) {
  test::TempTree tree;
  tree.write("perf-4242.map", "1000 10 jitted\n");
  EXPECT_EQ(jit_map_path(tree.root(), 4242), tree.root() / "perf-4242.map");
  auto t = load_jit_map(jit_map_path(tree.root(), 4242));
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(t->find(0x1008)->name, "jitted");
  EXPECT_FALSE(load_jit_map(jit_map_path(tree.root(), 1)).ok());
}

}  // namespace
}  // namespace vperf::symbols
