#include "events/builtin_events.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <algorithm>
#include <set>

namespace vperf::events {
namespace {

uint64_t cache(uint64_t id, uint64_t op, uint64_t result) { return id | (op << 8) | (result << 16); }

TEST(BuiltinEvents, HardwareTableMatchesUapi) {
  auto hw = hardware_events();
  ASSERT_EQ(hw.size(), 10u);
  EXPECT_EQ(hw[0], (BuiltinEvent{"cpu-cycles", "cycles", BuiltinKind::Hardware, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES}));
  EXPECT_EQ(hw[4].name, "branch-instructions");
  EXPECT_EQ(hw[4].alias, "branches");
  EXPECT_EQ(hw[7].alias, "idle-cycles-frontend");
  EXPECT_EQ(hw[9].name, "ref-cycles");
  EXPECT_EQ(hw[9].config, uint64_t{PERF_COUNT_HW_REF_CPU_CYCLES});
  for (size_t i = 0; i < hw.size(); ++i) EXPECT_EQ(hw[i].config, i) << hw[i].name;
}

TEST(BuiltinEvents, SoftwareTableMatchesUapi) {
  auto sw = software_events();
  ASSERT_EQ(sw.size(), 12u);
  for (size_t i = 0; i < sw.size(); ++i) {
    EXPECT_EQ(sw[i].config, i) << sw[i].name;
    EXPECT_EQ(sw[i].type, uint32_t{PERF_TYPE_SOFTWARE});
  }
  EXPECT_EQ(sw[3].name, "context-switches");
  EXPECT_EQ(sw[3].alias, "cs");
  EXPECT_EQ(sw[11].name, "cgroup-switches");
}

TEST(BuiltinEvents, CacheCombinationsFollowValidityTable) {
  auto events = hardware_cache_events();
  // L1D, LL, DTLB, NODE: 3 ops; L1I: 2; ITLB, BPU: 1; each with access and miss.
  EXPECT_EQ(events.size(), (3u * 4 + 2 + 1 + 1) * 2);
  std::set<std::string> names;
  for (const auto& e : events) names.insert(e.name);
  EXPECT_EQ(names.size(), events.size());
  for (const char* name : {"L1-dcache-loads", "L1-dcache-load-misses", "L1-dcache-stores", "L1-icache-prefetch-misses",
                           "LLC-loads", "LLC-store-misses", "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses",
                           "branch-loads", "branch-load-misses", "node-prefetches"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_FALSE(names.count("iTLB-stores"));
  EXPECT_FALSE(names.count("L1-icache-stores"));
  EXPECT_FALSE(names.count("branch-stores"));
}

TEST(BuiltinEvents, FindsNamesAndAliases) {
  EXPECT_EQ(find_builtin_event("cycles")->name, "cpu-cycles");
  EXPECT_EQ(find_builtin_event("cs")->config, uint64_t{PERF_COUNT_SW_CONTEXT_SWITCHES});
  EXPECT_EQ(find_builtin_event("faults")->name, "page-faults");
  EXPECT_EQ(find_builtin_event("branches")->kind, BuiltinKind::Hardware);
  EXPECT_EQ(find_builtin_event("branch-misses")->kind, BuiltinKind::Hardware);
  EXPECT_FALSE(find_builtin_event("Cycles").has_value());
  EXPECT_FALSE(find_builtin_event("cyclse").has_value());
  EXPECT_FALSE(find_builtin_event("").has_value());
}

TEST(BuiltinEvents, CacheEncodingsAndSpellings) {
  EXPECT_EQ(find_builtin_event("L1-dcache-load-misses")->config,
            cache(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS));
  EXPECT_EQ(find_builtin_event("LLC-loads")->config, cache(PERF_COUNT_HW_CACHE_LL, 0, 0));
  EXPECT_EQ(find_builtin_event("LLC-misses")->config, 0x10002u);  // op defaults to load, as `perf stat -vv` shows
  EXPECT_EQ(find_builtin_event("L1-dcache")->config, 0u);
  EXPECT_EQ(find_builtin_event("dTLB-store-misses")->config,
            cache(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS));
  EXPECT_EQ(find_builtin_event("branch-loads")->config, cache(PERF_COUNT_HW_CACHE_BPU, 0, 0));
  EXPECT_EQ(find_builtin_event("l1d-misses-load")->name, "L1-dcache-load-misses");
  EXPECT_EQ(find_builtin_event("Data-TLB-speculative-read-miss")->config,
            cache(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS));
  EXPECT_EQ(find_builtin_event("node-stores")->config, cache(PERF_COUNT_HW_CACHE_NODE, 1, 0));
  EXPECT_EQ(find_builtin_event("L1-icache-prefetches")->type, uint32_t{PERF_TYPE_HW_CACHE});
}

TEST(BuiltinEvents, RejectsInvalidCacheCombinations) {
  EXPECT_FALSE(find_builtin_event("iTLB-stores"));
  EXPECT_FALSE(find_builtin_event("L1-icache-store-misses"));
  EXPECT_FALSE(find_builtin_event("LLC-load-load"));
  EXPECT_FALSE(find_builtin_event("LLC-misses-misses"));
  EXPECT_FALSE(find_builtin_event("LLC-load-misses-x"));
  EXPECT_FALSE(find_builtin_event("LLC-"));
  EXPECT_FALSE(find_builtin_event("L1D:REPLACEMENT"));  // libpfm4's name, not perf's
}

TEST(BuiltinEvents, EveryListedNameResolvesToItself) {
  for (const auto& list : {hardware_events(), software_events(), hardware_cache_events()})
    for (const BuiltinEvent& event : list) {
      auto found = find_builtin_event(event.name);
      ASSERT_TRUE(found) << event.name;
      EXPECT_EQ(*found, event);
      if (!event.alias.empty()) {
        EXPECT_EQ(find_builtin_event(event.alias)->name, event.name);
      }
    }
  auto names = builtin_event_names();
  EXPECT_EQ(names.size(), 10u + 4 + 12 + 3 + 3 + 32) << "hardware, their aliases, software, their aliases, tools, caches";
}

}  // namespace
}  // namespace vperf::events
