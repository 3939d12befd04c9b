#include "events/event_spec.h"

#include <gtest/gtest.h>
#include <linux/hw_breakpoint.h>

#include "core/error.h"

namespace vperf::events {
namespace {

EventSpec only_event(std::string_view input) {
  auto groups = parse_event_list(input);
  EXPECT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups.at(0).members.size(), 1u);
  return groups.at(0).members.at(0);
}

// The message of the usage error `input` throws, or "" when it parses.
std::string parse_error(std::string_view input) {
  try {
    parse_event_list(input);
  } catch (const UserError& e) {
    EXPECT_EQ(e.exit_code(), 2) << input;
    EXPECT_FALSE(e.hint().empty()) << input;
    return e.what();
  }
  return "";
}

TEST(EventSpec, BuiltinWithCombinedModifiers) {
  EventSpec spec = only_event("cycles:ukpp");
  EXPECT_EQ(spec.kind, SpecKind::Builtin);
  EXPECT_EQ(spec.name, "cycles");
  EXPECT_EQ(spec.text, "cycles:ukpp");
  EXPECT_TRUE(spec.modifiers.user);
  EXPECT_TRUE(spec.modifiers.kernel);
  EXPECT_FALSE(spec.modifiers.hypervisor);
  EXPECT_EQ(spec.modifiers.precise, 2);
}

TEST(EventSpec, EveryModifierLetter) {
  // perf 6.1's lexer: modifier_event [ukhpPGHSDIWeb]+
  EventSpec spec = only_event("cs:ukhGHpppSDIWePb");
  Modifiers m = spec.modifiers;
  EXPECT_TRUE(m.user && m.kernel && m.hypervisor && m.guest && m.host && m.sample_read && m.pinned);
  EXPECT_TRUE(m.exclude_idle && m.weak && m.exclusive && m.precise_max && m.bpf_counter);
  EXPECT_EQ(m.precise, 3);
  EXPECT_EQ(modifiers_text(m), "ukhGHpppSDIWePb");
  EXPECT_TRUE(parse_event_list("{cycles,instructions}:W").front().modifiers.weak);
  EXPECT_THROW(parse_event_list("cs:WW"), UserError) << "a repeated letter is a syntax error, as in perf";
}

TEST(EventSpec, CacheEventIsBuiltin) {
  EventSpec spec = only_event("L1-dcache-load-misses:k");
  EXPECT_EQ(spec.kind, SpecKind::Builtin);
  EXPECT_EQ(spec.name, "L1-dcache-load-misses");
  EXPECT_TRUE(spec.modifiers.kernel);
}

TEST(EventSpec, RawEvent) {
  EventSpec spec = only_event("r13c:k");
  EXPECT_EQ(spec.kind, SpecKind::Raw);
  EXPECT_EQ(spec.raw_config, 0x13cu);
  EXPECT_TRUE(spec.modifiers.kernel);
  EXPECT_EQ(only_event("rFFFFFFFFFFFFFFFF").raw_config, ~uint64_t{0});
}

TEST(EventSpec, RawTooWide) {
  EXPECT_NE(parse_error("r1ffffffffffffffff").find("64 bits"), std::string::npos);
}

// perf's mem:ADDR[/LEN][:ACCESS]: numbers as perf's lexer reads them, the access letters once
// each, and the name perf gives the event (its text before the '/').
TEST(EventSpec, BreakpointWithLengthAndAccess) {
  EventSpec spec = only_event("mem:0x404020:w");
  EXPECT_EQ(spec.kind, SpecKind::Breakpoint);
  EXPECT_EQ(spec.bp_addr, 0x404020u);
  EXPECT_EQ(spec.bp_len, 0u);
  EXPECT_EQ(spec.bp_type, uint32_t{HW_BREAKPOINT_W});
  EXPECT_EQ(spec.name, "mem:0x404020:w");
  std::vector<GroupSpec> two = parse_event_list("mem:4096/8:rw,cycles");
  ASSERT_EQ(two.size(), 2u) << "the '/' of a breakpoint opens no terms: the ',' still separates";
  EXPECT_EQ(two[0].members[0].bp_addr, 4096u);
  EXPECT_EQ(two[0].members[0].bp_len, 8u);
  EXPECT_EQ(two[0].members[0].bp_type, uint32_t{HW_BREAKPOINT_R | HW_BREAKPOINT_W});
  EXPECT_EQ(two[0].members[0].name, "mem:4096");
  EXPECT_EQ(two[1].members[0].name, "cycles");
  EXPECT_EQ(only_event("mem:0x401000:xr").bp_type, uint32_t{HW_BREAKPOINT_X | HW_BREAKPOINT_R});
  EXPECT_EQ(only_event("mem:0x10").bp_type, 0u) << "no access written: the catalog's default";
  for (const char* bad : {"mem:", "mem:0x", "mem:0xzz", "mem:12a", "mem:0x10:rr", "mem:0x10:q", "mem:0x10:", "mem:0x10/0",
                          "mem:0x10/:w", "mem:0x10:rwxr"})
    EXPECT_NE(parse_error(bad).find("breakpoint"), std::string::npos) << bad << ": " << parse_error(bad);
}

TEST(EventSpec, RefCyclesIsNotRaw) {
  EXPECT_EQ(only_event("ref-cycles").kind, SpecKind::Builtin);
  EXPECT_EQ(only_event("rxyz").kind, SpecKind::Name);
}

TEST(EventSpec, PmuTermsWithCommasDoNotSplit) {
  auto groups = parse_event_list("cpu/event=0x0e,umask=0x01,inv,cmask=0x01/,cycles");
  ASSERT_EQ(groups.size(), 2u);
  const EventSpec& spec = groups[0].members[0];
  EXPECT_EQ(spec.kind, SpecKind::PmuTerms);
  EXPECT_EQ(spec.pmu, "cpu");
  ASSERT_EQ(spec.terms.size(), 4u);
  EXPECT_EQ(spec.terms[0].key, "event");
  EXPECT_EQ(spec.terms[0].value, "0x0e");
  EXPECT_EQ(spec.terms[0].position, 5u);
  EXPECT_EQ(spec.terms[2].key, "inv");
  EXPECT_FALSE(spec.terms[2].value.has_value());
  EXPECT_EQ(spec.terms[3].value, "0x01");
  EXPECT_TRUE(spec.modifiers.empty());
  EXPECT_EQ(groups[1].members[0].name, "cycles");
}

TEST(EventSpec, PmuAliasesAndModifiers) {
  EventSpec tsc = only_event("msr/tsc/u");
  EXPECT_EQ(tsc.pmu, "msr");
  ASSERT_EQ(tsc.terms.size(), 1u);
  EXPECT_EQ(tsc.terms[0].key, "tsc");
  EXPECT_TRUE(tsc.modifiers.user);
  EventSpec psys = only_event("power/energy-psys/");
  EXPECT_EQ(psys.terms[0].key, "energy-psys");
  EventSpec uncore = only_event("uncore_imc_0/event=0x04,umask=0x03/");
  EXPECT_EQ(uncore.pmu, "uncore_imc_0");
  EventSpec named = only_event("cpu/config=0x1234,config1=0x5,name=foo/");
  EXPECT_EQ(named.terms[2].key, "name");
  EXPECT_EQ(named.terms[2].value, "foo");
}

TEST(EventSpec, PmuErrors) {
  EXPECT_NE(parse_error("cpu/event=1").find("missing closing '/'"), std::string::npos);
  EXPECT_NE(parse_error("msr/tsc/:u").find("unexpected ':'"), std::string::npos);
  EXPECT_NE(parse_error("cpu/event=1,,umask=2/").find("empty term"), std::string::npos);
  EXPECT_NE(parse_error("cpu/event=/").find("missing value"), std::string::npos);
  EXPECT_NE(parse_error("/event=1/").find("missing PMU name"), std::string::npos);
  EXPECT_NE(parse_error("cpu/event=1/x").find("bad event modifier 'x'"), std::string::npos);
  EXPECT_NE(parse_error("cpu/event=0x3c,event=0x3d/").find("term 'event' given twice"), std::string::npos);
}

// perf's EVENT/TERMS/ on builtins and tracepoints (probe events are tracepoints): the name
// before the '/' is the event, not a PMU, and perf takes the modifiers with or without ':'.
TEST(EventSpec, NamedEventsWithTerms) {
  EventSpec probe = only_event("probe_libc:inet_pton/max-stack=3/");
  EXPECT_EQ(probe.kind, SpecKind::Name);
  EXPECT_EQ(probe.shape, NameShape::Colon);
  EXPECT_EQ(probe.name, "probe_libc:inet_pton");
  ASSERT_EQ(probe.terms.size(), 1u);
  EXPECT_EQ(probe.terms[0].key, "max-stack");
  EXPECT_EQ(probe.terms[0].value, "3");
  EventSpec clock = only_event("cpu-clock/period=100000/u");
  EXPECT_EQ(clock.kind, SpecKind::Builtin);
  EXPECT_EQ(clock.name, "cpu-clock");
  EXPECT_TRUE(clock.modifiers.user);
  EXPECT_TRUE(only_event("sched:sched_switch/max-stack=3/:k").modifiers.kernel);
  EXPECT_EQ(parse_event_list("sched:sched_switch/call-graph=fp,max-stack=2/,cs").at(1).members.at(0).name, "cs");
  EXPECT_NE(parse_error("cpu-clock/period=1/:u").find("unexpected ':'"), std::string::npos) << "perf's syntax error too";
  EXPECT_NE(parse_error("sched:/max-stack=3/").find("is not an event name"), std::string::npos);
  EXPECT_NE(parse_error("sched:sched_switch/max-stack=3").find("missing closing '/'"), std::string::npos);
}

TEST(EventSpec, GroupsCarryModifiersAndMembers) {
  auto groups = parse_event_list("{cycles,instructions}:u,cs");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(groups[0].braced);
  EXPECT_EQ(groups[0].text, "{cycles,instructions}:u");
  ASSERT_EQ(groups[0].members.size(), 2u);
  EXPECT_TRUE(groups[0].modifiers.user);
  EXPECT_TRUE(groups[0].members[0].modifiers.empty());
  EXPECT_FALSE(groups[1].braced);
  EXPECT_EQ(groups[1].members[0].position, 25u);
}

TEST(EventSpec, GroupWithPmuTermsInside) {
  auto groups = parse_event_list("{cpu/event=0x3c,umask=0/, msr/tsc/}");
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].members.size(), 2u);
  EXPECT_EQ(groups[0].members[1].pmu, "msr");
}

TEST(EventSpec, GroupErrors) {
  EXPECT_NE(parse_error("{cycles,{cs}}").find("nested group"), std::string::npos);
  EXPECT_NE(parse_error("{cycles").find("missing '}'"), std::string::npos);
  EXPECT_NE(parse_error("{}").find("empty group"), std::string::npos);
  EXPECT_NE(parse_error("{cycles,}").find("',' before '}'"), std::string::npos);
  EXPECT_NE(parse_error("{cycles}:q").find("bad event modifier 'q'"), std::string::npos);
  EXPECT_NE(parse_error("{cycles}x").find("unexpected 'x'"), std::string::npos);
}

TEST(EventSpec, ListErrors) {
  EXPECT_NE(parse_error("").find("empty event list"), std::string::npos);
  EXPECT_NE(parse_error("cycles,").find("trailing ','"), std::string::npos);
  EXPECT_NE(parse_error("cycles,,cs").find("empty event"), std::string::npos);
  EXPECT_NE(parse_error("cyc$les").find("unexpected '$'"), std::string::npos);
  EXPECT_NE(parse_error(std::string("cy\x01")).find("byte 0x1"), std::string::npos);
}

TEST(EventSpec, BadModifierNamesTokenAndPosition) {
  EXPECT_EQ(parse_error("cycles:x"), "bad event modifier 'x' in 'cycles:x' (position 8)");
  EXPECT_EQ(parse_error("cs,cycles:ux"), "bad event modifier 'x' in 'cycles:ux' (position 12)");
  EXPECT_NE(parse_error("cycles:pppp").find("too many 'p'"), std::string::npos);
  EXPECT_NE(parse_error("cycles:").find("empty event modifier"), std::string::npos);
  EXPECT_NE(parse_error("r13c:z").find("bad event modifier 'z'"), std::string::npos);
}

// perf 6.1: "event syntax error: 'cycles:uu' ... Bad modifier"; only p repeats.
TEST(EventSpec, RepeatedModifiersAreRejectedAsPerfDoes) {
  EXPECT_EQ(parse_error("cycles:uu"), "event modifier 'u' repeated in 'cycles:uu' (position 9)");
  EXPECT_NE(parse_error("r13c:ukk").find("modifier 'k' repeated"), std::string::npos);
  EXPECT_NE(parse_error("msr/tsc/GG").find("modifier 'G' repeated"), std::string::npos);
  EXPECT_NE(parse_error("{cycles,instructions}:uku").find("modifier 'u' repeated"), std::string::npos);
  EXPECT_NE(parse_error("cycles:" + std::string(5000, 'u')).find("modifier 'u' repeated"), std::string::npos);
  EXPECT_NE(parse_error("cycles:" + std::string(5000, 'k')).find("repeated"), std::string::npos);
  EXPECT_EQ(only_event("cycles:ppp").modifiers.precise, 3);
  EXPECT_FALSE(parse_modifiers("uu"));
  EXPECT_TRUE(parse_modifiers("ukpp"));
}

TEST(EventSpec, TracepointShapes) {
  EventSpec tp = only_event("sched:sched_switch");
  EXPECT_EQ(tp.kind, SpecKind::Name);
  EXPECT_EQ(tp.shape, NameShape::Colon);
  EXPECT_FALSE(tp.modifier_suffix.has_value());
  EventSpec with_mods = only_event("sched:sched_switch:k");
  ASSERT_TRUE(with_mods.modifier_suffix.has_value());
  EXPECT_EQ(with_mods.modifier_suffix->base, "sched:sched_switch");
  EXPECT_TRUE(with_mods.modifier_suffix->modifiers.kernel);
  EXPECT_EQ(only_event("sched:*").shape, NameShape::Glob);
  EXPECT_EQ(only_event("syscalls:sys_enter_*").shape, NameShape::Glob);
}

TEST(EventSpec, LibpfmAndPerfmonShapes) {
  EventSpec pfm = only_event("INST_RETIRED:ANY_P");
  EXPECT_EQ(pfm.shape, NameShape::Colon);
  EXPECT_FALSE(pfm.modifier_suffix.has_value());  // "ANY_P" is not perf modifiers
  EventSpec qualified = only_event("ivb::L2_STORE_LOCK_RQSTS:HIT_M:u:c=1:i:e:precise=2");
  EXPECT_EQ(qualified.shape, NameShape::Qualified);
  EXPECT_EQ(qualified.name, "ivb::L2_STORE_LOCK_RQSTS:HIT_M:u:c=1:i:e:precise=2");
  EventSpec dotted = only_event("L2_STORE_LOCK_RQSTS.HIT_M");
  EXPECT_EQ(dotted.shape, NameShape::Dotted);
  EventSpec dotted_mods = only_event("L2_STORE_LOCK_RQSTS.HIT_M:upp");
  EXPECT_EQ(dotted_mods.shape, NameShape::Dotted);
  ASSERT_TRUE(dotted_mods.modifier_suffix.has_value());
  EXPECT_EQ(dotted_mods.modifier_suffix->base, "L2_STORE_LOCK_RQSTS.HIT_M");
  EXPECT_EQ(dotted_mods.modifier_suffix->modifiers.precise, 2);
  EXPECT_EQ(only_event("tsc").shape, NameShape::Word);
  // libpfm's own ":u" reads as perf modifiers too; the resolver asks the source first.
  EXPECT_TRUE(only_event("INST_RETIRED:ANY_P:u").modifier_suffix.has_value());
}

TEST(EventSpec, NameErrors) {
  EXPECT_NE(parse_error(":u").find("missing event name"), std::string::npos);
  EXPECT_NE(parse_error("ivb:::X").find("':::'"), std::string::npos);
  EXPECT_NE(parse_error("INST_RETIRED:").find("ends where a name should follow"), std::string::npos);
  EXPECT_NE(parse_error("sched:").find("ends where a name should follow"), std::string::npos);
  EXPECT_NE(parse_error("ivb::").find("ends where a name should follow"), std::string::npos);
}

TEST(EventSpec, WhitespaceAroundSeparators) {
  auto groups = parse_event_list("  cycles , { cs , faults }:u ");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].members.size(), 2u);
  EXPECT_TRUE(groups[1].modifiers.user);
  // Group modifiers must follow '}' directly, as in perf.
  EXPECT_NE(parse_error("{cs} :u").find("unexpected ':'"), std::string::npos);
}

TEST(EventSpec, ParseModifiersHelper) {
  EXPECT_EQ(parse_modifiers("uk")->kernel, true);
  EXPECT_FALSE(parse_modifiers("").has_value());
  EXPECT_FALSE(parse_modifiers("ANY_P").has_value());
  EXPECT_FALSE(parse_modifiers("pppp").has_value());
}

}  // namespace
}  // namespace vperf::events
