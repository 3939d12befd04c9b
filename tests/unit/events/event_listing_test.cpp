#include "events/event_listing.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <sstream>

#include "support/fake_event_fs.h"

namespace vperf::events {
namespace {

class EventListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::add_typical_pmus(sysfs_);
    test::add_typical_tracepoints(tracefs_);
  }
  EventCatalog catalog() const {
    EventCatalogConfig config;
    config.sysfs_pmu_root = sysfs_.root();
    config.tracefs_root = tracefs_.root();
    return EventCatalog::load(config);
  }
  std::vector<std::string> names(std::string_view filter, const ListingOptions& options = {}) const {
    std::vector<std::string> out;
    for (const ListedEvent& e : list_events(catalog(), filter, options).events) out.push_back(e.name);
    return out;
  }
  test::TempTree sysfs_;
  test::TempTree tracefs_;
};

TEST_F(EventListingTest, GroupsInPerfOrder) {
  ListingResult all = list_events(catalog(), "");
  std::vector<ListGroup> order;
  for (const ListedEvent& e : all.events)
    if (order.empty() || order.back() != e.group) order.push_back(e.group);
  EXPECT_EQ(order, (std::vector<ListGroup>{ListGroup::Hardware, ListGroup::Software, ListGroup::Tool,
                                           ListGroup::HardwareCache, ListGroup::KernelPmu, ListGroup::RawDescriptor,
                                           ListGroup::Breakpoint, ListGroup::Tracepoint}));
  EXPECT_EQ(all.events.size(), 10u + 12 + 3 + 32 + 8 + 2 + 1 + 7);
}

TEST_F(EventListingTest, SoftwareSortedLikePerf) {
  EXPECT_EQ(names("sw"), (std::vector<std::string>{"alignment-faults", "bpf-output", "cgroup-switches", "context-switches",
                                                   "cpu-clock", "cpu-migrations", "dummy", "emulation-faults",
                                                   "major-faults", "minor-faults", "page-faults", "task-clock",
                                                   // the tool events follow in perf's own order, as in perf list sw
                                                   "duration_time", "user_time", "system_time"}));
  EXPECT_EQ(names("software"), names("sw"));
}

TEST_F(EventListingTest, TextMatchesPerfLayout) {
  std::ostringstream out;
  print_listing(out, list_events(catalog(), "context-switches"));
  EXPECT_EQ(out.str(), "  context-switches OR cs                             [Software event]\n");
  std::ostringstream pmu;
  print_listing(pmu, list_events(catalog(), "msr"));
  EXPECT_EQ(pmu.str(),
            "  msr/smi/                                           [Kernel PMU event]\n"
            "  msr/tsc/                                           [Kernel PMU event]\n");
  std::ostringstream raw;
  ListingResult all = list_events(catalog(), "");
  ListingResult raw_only;
  for (const ListedEvent& e : all.events)
    if (e.group == ListGroup::RawDescriptor || e.group == ListGroup::Breakpoint) raw_only.events.push_back(e);
  print_listing(raw, raw_only);
  EXPECT_EQ(raw.str(),
            "  rNNN                                               [Raw hardware event descriptor]\n"
            "  cpu/t1=v1[,t2=v2,t3 ...]/modifier                  [Raw hardware event descriptor]\n"
            "  mem:<addr>[/len][:access]                          [Hardware breakpoint]\n");
}

TEST_F(EventListingTest, LongNamesKeepOneSpace) {
  ListingResult long_name;
  long_name.events.push_back(ListedEvent{std::string(60, 'x'), {}, ListGroup::Tracepoint, "", "", ""});
  std::ostringstream out;
  print_listing(out, long_name);
  EXPECT_EQ(out.str(), "  " + std::string(60, 'x') + " [Tracepoint event]\n");
}

TEST_F(EventListingTest, FiltersByKeywordGlobAndSubstring) {
  EXPECT_EQ(names("sched:*"), (std::vector<std::string>{"sched:sched_process_exec", "sched:sched_switch", "sched:sched_wakeup"}));
  EXPECT_EQ(names("tracepoint").size(), 7u);
  EXPECT_EQ(names("pmu"), (std::vector<std::string>{"cpu/cpu-cycles/", "cpu/mem-loads/", "cpu/ref-cycles/", "msr/smi/",
                                                    "msr/tsc/", "power/energy-psys/", "uncore_imc_0/cas_count_read/",
                                                    "uncore_imc_1/cas_count_read/"}));
  EXPECT_EQ(names("hw").size(), 10u);
  EXPECT_EQ(names("hardware"), names("hw"));
  // "cache" is the cache-group keyword, as in perf.
  EXPECT_EQ(names("cache").size(), 32u);
  EXPECT_EQ(names("hwcache"), names("cache"));
  // A plain word matches as a substring of names and aliases.
  EXPECT_EQ(names("cycles"), (std::vector<std::string>{"bus-cycles", "cpu-cycles", "ref-cycles", "stalled-cycles-backend",
                                                       "stalled-cycles-frontend", "cpu/cpu-cycles/", "cpu/ref-cycles/"}));
  EXPECT_EQ(names("cs"), (std::vector<std::string>{"context-switches"}));
  EXPECT_TRUE(names("no-such-thing").empty());
}

TEST_F(EventListingTest, HardwareSupportProbeHidesEvents) {
  ListingOptions options;
  options.hardware_event_supported = [](uint32_t type, uint64_t config) {
    return type == PERF_TYPE_HARDWARE && config == PERF_COUNT_HW_INSTRUCTIONS;
  };
  EXPECT_EQ(names("hw", options), (std::vector<std::string>{"instructions"}));
  EXPECT_TRUE(names("cache", options).empty());
  EXPECT_EQ(names("sw", options).size(), 12u + 3) << "software and tool events are never probed";
}

TEST_F(EventListingTest, JsonCarriesEncodings) {
  boost::json::value json = listing_json(list_events(catalog(), "energy-psys"));
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.as_array().size(), 1u);
  const boost::json::object& psys = json.as_array()[0].as_object();
  EXPECT_EQ(psys.at("name").as_string(), "power/energy-psys/");
  EXPECT_EQ(psys.at("group").as_string(), "Kernel PMU event");
  EXPECT_EQ(psys.at("pmu").as_string(), "power");
  EXPECT_EQ(psys.at("encoding").as_string(), "type=9,config=0x5");
  EXPECT_EQ(psys.at("description").as_string(), "event=0x05 (unit: Joules, scale: 2.3283064365386962890625e-10)");

  boost::json::value cs = listing_json(list_events(catalog(), "context-switches"));
  const boost::json::object& obj = cs.as_array()[0].as_object();
  EXPECT_EQ(obj.at("aliases").as_array().size(), 1u);
  EXPECT_EQ(obj.at("aliases").as_array()[0].as_string(), "cs");
  EXPECT_EQ(obj.at("encoding").as_string(), "type=1,config=0x3");

  boost::json::value tp = listing_json(list_events(catalog(), "sched:sched_switch"));
  EXPECT_EQ(tp.as_array()[0].as_object().at("encoding").as_string(), "type=2,config=0x174");
}

}  // namespace
}  // namespace vperf::events
