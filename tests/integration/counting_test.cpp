// Counting on the real kernel: the event string goes through the resolver and AttrBuilder, the
// counters through CounterGroup, and a deterministic workload gives the exact count.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "events/attr_builder.h"
#include "events/event_catalog.h"
#include "perf/counter_group.h"
#include "support/capability.h"

namespace vperf {
namespace {

std::vector<perf_event_attr> attrs_for(const events::ResolvedGroup& group) {
  events::SampleSettings settings;  // counting this thread, started by hand, not at exec
  settings.inherit = false;
  std::vector<perf_event_attr> attrs;
  for (const events::ResolvedEvent& e : group.members) attrs.push_back(events::build_attr(e, settings));
  return attrs;
}

TEST(Counting, GetppidTracepointCountsExactly) {
  VPERF_REQUIRE(test::has_tracefs(), "tracefs");
  VPERF_REQUIRE(test::running_as_root(), "root (tracepoint counters at perf_event_paranoid 2)");
  events::EventCatalog catalog = events::EventCatalog::load(events::EventCatalogConfig{});
  std::vector<events::ResolvedGroup> groups = catalog.resolve("syscalls:sys_enter_getppid");
  ASSERT_EQ(groups.size(), 1u);
  std::vector<perf_event_attr> attrs = attrs_for(groups[0]);
  perf::KernelPerfEventOpener opener;
  auto counter = perf::CounterGroup::open(opener, attrs, perf::OpenTarget{});
  ASSERT_TRUE(counter.ok()) << counter.error().describe();
  constexpr int kCalls = 12345;
  ASSERT_TRUE(counter->enable().ok());
  for (int i = 0; i < kCalls; ++i) ::syscall(SYS_getppid);  // the libc wrapper could be cached
  ASSERT_TRUE(counter->disable().ok());
  auto readings = counter->read();
  ASSERT_TRUE(readings.ok()) << readings.error().describe();
  perf::ScaledCount count = perf::scale_count(readings->at(0));
  EXPECT_TRUE(count.counted);
  EXPECT_EQ(readings->at(0).value, static_cast<uint64_t>(kCalls));
  EXPECT_DOUBLE_EQ(count.running_percent, 100.0) << "a tracepoint is never multiplexed";
}

TEST(Counting, SoftwareGroupIsReadAsOne) {
  events::EventCatalog catalog = events::EventCatalog::load(events::EventCatalogConfig{});
  std::vector<events::ResolvedGroup> groups = catalog.resolve("{task-clock,page-faults}:u");
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].members.size(), 2u);
  perf::KernelPerfEventOpener opener;
  auto counter = perf::CounterGroup::open(opener, attrs_for(groups[0]), perf::OpenTarget{});
  ASSERT_TRUE(counter.ok()) << counter.error().describe();
  ASSERT_TRUE(counter->enable().ok());
  // Touch fresh pages: each first write is a page fault. A new anonymous mapping, not malloc:
  // malloc hands back memory an earlier test in this process freed, already faulted in.
  constexpr size_t kPages = 256;
  const size_t bytes = kPages * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  char* block = static_cast<char*>(mapped);
  for (size_t i = 0; i < kPages; ++i) block[i * (bytes / kPages)] = 1;
  ASSERT_TRUE(counter->disable().ok());
  ::munmap(mapped, bytes);
  auto readings = counter->read();
  ASSERT_TRUE(readings.ok()) << readings.error().describe();
  ASSERT_EQ(readings->size(), 2u);
  EXPECT_GT(readings->at(0).value, 0u) << "task-clock ns";
  EXPECT_GE(readings->at(1).value, kPages) << "every fresh page faults once";
  EXPECT_EQ(readings->at(0).time_enabled, readings->at(1).time_enabled) << "one read for the whole group";
}

}  // namespace
}  // namespace vperf
