#include "events/sysfs_pmu.h"

#include <gtest/gtest.h>

#include "support/capability.h"
#include "support/fake_event_fs.h"

namespace vperf::events {
namespace {

TEST(SysfsPmu, ParsesFormatTerms) {
  auto event = parse_format_term("event", "config:0-7\n");
  ASSERT_TRUE(event) << event.error().describe();
  EXPECT_EQ(event->field, "config");
  ASSERT_EQ(event->bits.size(), 1u);
  EXPECT_EQ(event->bits[0].low, 0);
  EXPECT_EQ(event->bits[0].high, 7);
  EXPECT_EQ(term_width(*event), 8);

  auto split_term = parse_format_term("umask", "config:8-15,32-35");
  ASSERT_TRUE(split_term);
  EXPECT_EQ(split_term->bits.size(), 2u);
  EXPECT_EQ(term_width(*split_term), 12);

  auto flag = parse_format_term("inv", "config:23");
  ASSERT_TRUE(flag);
  EXPECT_EQ(flag->bits[0].low, 23);
  EXPECT_EQ(flag->bits[0].high, 23);

  auto wide = parse_format_term("offcore_rsp", "config1:0-63");
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->field, "config1");
  EXPECT_EQ(term_width(*wide), 64);
}

TEST(SysfsPmu, FormatErrorsNameTheToken) {
  auto bad_range = parse_format_term("event", "config:7-0");
  ASSERT_FALSE(bad_range);
  EXPECT_NE(bad_range.error().message.find("'7-0'"), std::string::npos);
  EXPECT_FALSE(parse_format_term("event", "config:0-64"));
  EXPECT_FALSE(parse_format_term("event", "config:x"));
  EXPECT_FALSE(parse_format_term("event", "config:"));
  auto bad_field = parse_format_term("event", "config9:0-7");
  ASSERT_FALSE(bad_field);
  EXPECT_NE(bad_field.error().message.find("'config9'"), std::string::npos);
  EXPECT_FALSE(parse_format_term("event", "0-7"));
}

TEST(SysfsPmu, PlacesAndExtractsValues) {
  PmuFormatTerm umask = parse_format_term("umask", "config:8-15,32-35").value();
  auto placed = place_term_value(umask, 0xabc, PmuConfig{});
  ASSERT_TRUE(placed);
  EXPECT_EQ(placed->config, (uint64_t{0xbc} << 8) | (uint64_t{0xa} << 32));
  EXPECT_EQ(extract_term_value(umask, *placed), 0xabcu);

  // Later values replace earlier ones in the same bits and leave other bits alone.
  auto replaced = place_term_value(umask, 0x1, PmuConfig{0xff, 0, 0});
  ASSERT_TRUE(replaced);
  EXPECT_EQ(replaced->config, 0x1ffu);

  auto too_big = place_term_value(parse_format_term("event", "config:0-7").value(), 0x100, PmuConfig{});
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().message, "value 0x100 too big for term 'event' (8 bits)");

  auto full = place_term_value(parse_format_term("rsp", "config1:0-63").value(), ~uint64_t{0}, PmuConfig{});
  ASSERT_TRUE(full);
  EXPECT_EQ(full->config1, ~uint64_t{0});
}

TEST(SysfsPmu, LoadsFakeTree) {
  test::TempTree tree;
  test::add_typical_pmus(tree);
  auto power = load_sysfs_pmu(tree.root(), "power");
  ASSERT_TRUE(power) << power.error().describe();
  EXPECT_EQ(power->type, 9u);
  ASSERT_EQ(power->events.size(), 1u);  // .scale and .unit are companions, not aliases
  EXPECT_EQ(power->events[0].name, "energy-psys");
  EXPECT_EQ(power->events[0].terms, "event=0x05");
  EXPECT_EQ(power->events[0].unit, "Joules");
  EXPECT_EQ(power->events[0].scale, "2.3283064365386962890625e-10");
  EXPECT_EQ(power->cpumask, "0");
  ASSERT_NE(power->find_term("event"), nullptr);
  EXPECT_EQ(power->find_term("umask"), nullptr);

  auto cpu = load_sysfs_pmu(tree.root(), "cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->caps.at("max_precise"), "3");
  EXPECT_EQ(cpu->find_event("mem-loads")->terms, "event=0xcd,umask=0x1,ldlat=3");
  EXPECT_EQ(cpu->find_term("ldlat")->field, "config1");
  EXPECT_TRUE(cpu->cpumask.empty());
}

TEST(SysfsPmu, LoadErrors) {
  test::TempTree tree;
  auto missing = load_sysfs_pmu(tree.root(), "nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().errno_value, ENOENT);
  tree.write("bad/type", "ten\n");
  EXPECT_FALSE(load_sysfs_pmu(tree.root(), "bad"));
  tree.write("badformat/type", "12\n");
  tree.write("badformat/format/event", "config:9-1\n");
  auto bad_format = load_sysfs_pmu(tree.root(), "badformat");
  ASSERT_FALSE(bad_format);
  EXPECT_NE(bad_format.error().message.find("PMU 'badformat'"), std::string::npos);
}

TEST(SysfsPmu, LoadAllSkipsUnreadableAndSorts) {
  test::TempTree tree;
  test::add_typical_pmus(tree);
  tree.write("broken/type", "not a number\n");
  auto pmus = load_sysfs_pmus(tree.root());
  std::vector<std::string> names;
  for (const auto& pmu : pmus) names.push_back(pmu.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "msr", "power", "software", "uncore_imc_0", "uncore_imc_1"}));
  EXPECT_TRUE(load_sysfs_pmus(tree.root() / "absent").empty());
}

TEST(SysfsPmu, RealSysfsHasSoftwareAndTracepointPmus) {
  VPERF_REQUIRE(std::filesystem::exists(kSysfsPmuRoot / "software"), "sysfs PMUs");
  auto pmus = load_sysfs_pmus();
  auto find = [&](const std::string& name) -> const SysfsPmu* {
    for (const auto& pmu : pmus)
      if (pmu.name == name) return &pmu;
    return nullptr;
  };
  ASSERT_NE(find("software"), nullptr);
  EXPECT_EQ(find("software")->type, 1u);  // PERF_TYPE_SOFTWARE
  ASSERT_NE(find("tracepoint"), nullptr);
  EXPECT_EQ(find("tracepoint")->type, 2u);
}

TEST(SysfsPmu, RealMsrPmuHasTsc) {
  VPERF_REQUIRE(std::filesystem::exists(kSysfsPmuRoot / "msr/events/tsc"), "the msr PMU");
  auto msr = load_sysfs_pmu(kSysfsPmuRoot, "msr");
  ASSERT_TRUE(msr) << msr.error().describe();
  ASSERT_NE(msr->find_event("tsc"), nullptr);
  EXPECT_EQ(msr->find_event("tsc")->terms, "event=0x00");
  ASSERT_NE(msr->find_term("event"), nullptr);
  EXPECT_EQ(msr->find_term("event")->field, "config");
}

TEST(SysfsPmu, RealPowerPmuHasUnits) {
  VPERF_REQUIRE(std::filesystem::exists(kSysfsPmuRoot / "power/events"), "the power (RAPL) PMU");
  auto power = load_sysfs_pmu(kSysfsPmuRoot, "power");
  ASSERT_TRUE(power) << power.error().describe();
  ASSERT_FALSE(power->events.empty());
  for (const auto& alias : power->events) {
    EXPECT_EQ(alias.unit, "Joules") << alias.name;
    EXPECT_FALSE(alias.scale.empty()) << alias.name;
  }
}

}  // namespace
}  // namespace vperf::events
