#include "events/attr_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <linux/perf_event.h>

namespace vperf::events {
namespace {

ResolvedEvent software(uint64_t config, Modifiers own = {}, Modifiers group = {}, GroupRole role = GroupRole::Alone) {
  ResolvedEvent e;
  e.name = "test";
  e.pmu = "software";
  e.type = PERF_TYPE_SOFTWARE;
  e.config = config;
  e.modifiers = own;
  e.group_modifiers = group;
  e.group_role = role;
  return e;
}

Modifiers mods(std::string_view letters) {
  Modifiers m;
  for (char c : letters) {
    switch (c) {
      case 'u': m.user = true; break;
      case 'k': m.kernel = true; break;
      case 'h': m.hypervisor = true; break;
      case 'G': m.guest = true; break;
      case 'H': m.host = true; break;
      case 'p': ++m.precise; break;
      case 'S': m.sample_read = true; break;
      case 'D': m.pinned = true; break;
      case 'I': m.exclude_idle = true; break;
      case 'e': m.exclusive = true; break;
      case 'P': m.precise_max = true; break;
      case 'b': m.bpf_counter = true; break;
      default: ADD_FAILURE() << "bad letter " << c;
    }
  }
  return m;
}

// exclude_{user,kernel,hv,guest,host} as a string of 0/1, e.g. "01110".
std::string excludes(const ResolvedEvent& e) {
  PrivilegeBits b = privilege_bits(e);
  std::string out;
  for (bool bit : {b.exclude_user, b.exclude_kernel, b.exclude_hv, b.exclude_guest, b.exclude_host}) out += bit ? '1' : '0';
  return out;
}


TEST(AttrBuilder, BasicFields) {
  ResolvedEvent e = software(PERF_COUNT_SW_CONTEXT_SWITCHES);
  e.config1 = 0x11;
  e.config2 = 0x22;
  perf_event_attr attr = build_attr(e, perf_stat_settings());
  EXPECT_EQ(attr.size, sizeof(perf_event_attr));
  EXPECT_EQ(attr.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(attr.config, uint64_t{PERF_COUNT_SW_CONTEXT_SWITCHES});
  EXPECT_EQ(attr.config1, 0x11u);
  EXPECT_EQ(attr.config2, 0x22u);
  EXPECT_EQ(attr.sample_type, uint64_t{PERF_SAMPLE_IDENTIFIER});
  EXPECT_EQ(attr.read_format, uint64_t{PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING});
  EXPECT_EQ(attr.disabled, 1u);
  EXPECT_EQ(attr.inherit, 1u);
  EXPECT_EQ(attr.enable_on_exec, 1u);
  EXPECT_EQ(attr.pinned, 0u);
  EXPECT_EQ(attr.precise_ip, 0u);
  EXPECT_EQ(attr.freq, 0u);
  EXPECT_EQ(attr.sample_period, 0u);
}

// Each expectation is what `perf stat -vv -e cs:<mods>` printed with perf 6.1.
TEST(AttrBuilder, PerfPrivilegeRules) {
  EXPECT_EQ(excludes(software(3)), "00010");             // cs
  EXPECT_EQ(excludes(software(3, mods("u"))), "01110");  // cs:u
  EXPECT_EQ(excludes(software(3, mods("k"))), "10100");  // cs:k
  EXPECT_EQ(excludes(software(3, mods("h"))), "11000");  // cs:h
  EXPECT_EQ(excludes(software(3, mods("uk"))), "00110"); // cs:uk
  EXPECT_EQ(excludes(software(3, mods("p"))), "00010");  // cs:p
  EXPECT_EQ(excludes(software(3, mods("D"))), "00000");  // cs:D
  EXPECT_EQ(excludes(software(3, mods("S"))), "00000");  // cs:S
  EXPECT_EQ(excludes(software(3, mods("G"))), "00001");  // cs:G
  EXPECT_EQ(excludes(software(3, mods("H"))), "00010");  // cs:H
  EXPECT_EQ(excludes(software(3, mods("GH"))), "00000"); // cpu-clock:GH
  EXPECT_EQ(excludes(software(3, mods("Gu"))), "01101"); // cs:Gu
  EXPECT_EQ(excludes(software(3, mods("Hk"))), "10110"); // cs:Hk
}

// `perf stat -vv -e '{cs...,faults...}:mods'`.
TEST(AttrBuilder, GroupModifiersApplyAfterMembers) {
  EXPECT_EQ(excludes(software(3, {}, mods("k"), GroupRole::Leader)), "10110");          // {cs,faults}:k
  EXPECT_EQ(excludes(software(3, mods("k"), mods("u"), GroupRole::Leader)), "00110");   // {cs:k,..}:u -> cs
  EXPECT_EQ(excludes(software(2, {}, mods("u"), GroupRole::Member)), "01110");          // {cs:k,faults}:u -> faults
  EXPECT_EQ(excludes(software(3, mods("G"), mods("u"), GroupRole::Leader)), "01101");   // {cs:G,faults}:u -> cs
  EXPECT_EQ(excludes(software(3, mods("p"), mods("k"), GroupRole::Leader)), "10110");   // {cs:p,faults}:k -> cs
}

TEST(AttrBuilder, LibpfmPrivilegeLevelsStandUnlessPerfNamesLevels) {
  ResolvedEvent pfm = software(3);
  pfm.exclude_kernel = pfm.exclude_hv = true;  // "INST_RETIRED:ANY_P:u"
  EXPECT_EQ(excludes(pfm), "01110");
  pfm.modifiers = mods("p");
  EXPECT_EQ(excludes(pfm), "01110");
  pfm.modifiers = mods("k");
  EXPECT_EQ(excludes(pfm), "10100");
  pfm.modifiers = {};
  pfm.group_modifiers = mods("k");  // the kernel is added to what libpfm chose
  EXPECT_EQ(excludes(pfm), "00110");
}

TEST(AttrBuilder, PreciseAddsGroupLevelsAndClamps) {
  EXPECT_EQ(build_attr(software(0, mods("ppp")), {}).precise_ip, 3u);
  EXPECT_EQ(build_attr(software(0, mods("p"), mods("p"), GroupRole::Leader), {}).precise_ip, 2u);
  EXPECT_EQ(build_attr(software(0, mods("ppp"), mods("pp"), GroupRole::Leader), {}).precise_ip, 3u);
}

TEST(AttrBuilder, IdleExclusiveAndMaximumPrecision) {
  EXPECT_TRUE(build_attr(software(0, mods("I")), {}).exclude_idle);
  EXPECT_FALSE(build_attr(software(0), {}).exclude_idle);
  EXPECT_TRUE(build_attr(software(0, {}, mods("I"), GroupRole::Member), {}).exclude_idle) << "a group's I reaches every member";
  EXPECT_TRUE(build_attr(software(0, mods("e")), {}).exclusive);
  EXPECT_TRUE(build_attr(software(0, {}, mods("e"), GroupRole::Leader), {}).exclusive);
  EXPECT_FALSE(build_attr(software(0, {}, mods("e"), GroupRole::Member), {}).exclusive) << "the leader holds the PMU for the group";
  EXPECT_EQ(build_attr(software(0, mods("P")), {}).precise_ip, 3u) << "no known maximum: perf's top level";
  ResolvedEvent pebs2 = software(0, mods("P"));
  pebs2.max_precise = 2;
  EXPECT_EQ(build_attr(pebs2, {}).precise_ip, 2u) << "the PMU's max_precise";
  perf_event_attr bpf = build_attr(software(0, mods("b")), {}), plain = build_attr(software(0), {});
  // perf 6.1 (perf stat -vv -e task-clock:b): any modifier leaves exclude_guest to the letters.
  EXPECT_FALSE(bpf.exclude_guest);
  plain.exclude_guest = 0;
  EXPECT_EQ(std::memcmp(&bpf, &plain, sizeof bpf), 0) << "b counts with an ordinary counter";
}

TEST(AttrBuilder, GroupRolesAndReadFormat) {
  SampleSettings s = perf_stat_settings();
  perf_event_attr leader = build_attr(software(3, {}, {}, GroupRole::Leader), s);
  perf_event_attr member = build_attr(software(2, {}, {}, GroupRole::Member), s);
  const uint64_t group_format =
      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_GROUP;
  EXPECT_EQ(leader.read_format, group_format);
  EXPECT_EQ(member.read_format, group_format);
  EXPECT_EQ(leader.disabled, 1u);
  EXPECT_EQ(member.disabled, 0u);
  EXPECT_EQ(leader.enable_on_exec, 1u);
  EXPECT_EQ(member.enable_on_exec, 0u);
  EXPECT_EQ(member.inherit, 1u);

  s.read_id = true;
  EXPECT_EQ(build_attr(software(3), s).read_format,
            uint64_t{PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID});
  s.start_disabled = false;
  s.inherit = false;
  s.enable_on_exec = false;
  perf_event_attr plain = build_attr(software(3), s);
  EXPECT_EQ(plain.disabled, 0u);
  EXPECT_EQ(plain.inherit, 0u);
  EXPECT_EQ(plain.enable_on_exec, 0u);
}

TEST(AttrBuilder, PinnedFollowsPerf) {
  EXPECT_EQ(build_attr(software(3, mods("D")), {}).pinned, 1u);
  EXPECT_EQ(build_attr(software(3, {}, mods("D"), GroupRole::Leader), {}).pinned, 1u);
  EXPECT_EQ(build_attr(software(2, {}, mods("D"), GroupRole::Member), {}).pinned, 0u);   // {cs:u,faults}:D
  EXPECT_EQ(build_attr(software(2, mods("D"), {}, GroupRole::Member), {}).pinned, 1u);   // {cs,faults:D}
}

TEST(AttrBuilder, SamplingPeriodAndFrequency) {
  SampleSettings s;
  s.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  s.sample_period = 100000;
  perf_event_attr by_period = build_attr(software(0), s);
  EXPECT_EQ(by_period.sample_period, 100000u);
  EXPECT_EQ(by_period.freq, 0u);
  EXPECT_EQ(by_period.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID});
  s.sample_frequency = 4000;
  perf_event_attr by_freq = build_attr(software(0), s);
  EXPECT_EQ(by_freq.freq, 1u);
  EXPECT_EQ(by_freq.sample_freq, 4000u);
}

TEST(AttrBuilder, SampleReadGroup) {
  SampleSettings s;
  s.sample_type = PERF_SAMPLE_IP;
  s.sample_frequency = 4000;
  perf_event_attr leader = build_attr(software(3, {}, mods("S"), GroupRole::Leader), s);
  perf_event_attr member = build_attr(software(2, {}, mods("S"), GroupRole::Member), s);
  EXPECT_EQ(leader.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_READ});
  EXPECT_TRUE(leader.read_format & PERF_FORMAT_GROUP);
  EXPECT_TRUE(leader.read_format & PERF_FORMAT_ID);
  EXPECT_EQ(leader.freq, 1u);
  EXPECT_EQ(member.freq, 0u);
  EXPECT_EQ(member.sample_freq, 0u);
  // Counting (perf stat) ignores S.
  perf_event_attr counting = build_attr(software(3, mods("S")), SampleSettings{});
  EXPECT_EQ(counting.sample_type, 0u);
  EXPECT_EQ(counting.read_format & PERF_FORMAT_GROUP, 0u);
}

}  // namespace
}  // namespace vperf::events
