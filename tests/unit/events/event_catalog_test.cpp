#include "events/event_catalog.h"

#include <gtest/gtest.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "core/error.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/fake_named_source.h"

namespace vperf::events {
namespace {

class EventCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::add_typical_pmus(sysfs_);
    test::add_typical_tracepoints(tracefs_);
  }

  EventCatalog catalog(std::vector<const NamedEventSource*> sources = {}) const {
    EventCatalogConfig config;
    config.sysfs_pmu_root = sysfs_.root();
    config.tracefs_root = tracefs_.root();
    config.named_sources = std::move(sources);
    return EventCatalog::load(config);
  }

  ResolvedEvent one(std::string_view text, std::vector<const NamedEventSource*> sources = {}) const {
    auto groups = catalog(std::move(sources)).resolve(text);
    EXPECT_EQ(groups.size(), 1u) << text;
    EXPECT_EQ(groups.at(0).members.size(), 1u) << text;
    return groups.at(0).members.at(0);
  }

  // The UserError's "what (hint: ...)" for `text`, or "" when it resolves.
  std::string failure(std::string_view text, std::vector<const NamedEventSource*> sources = {}) const {
    try {
      catalog(std::move(sources)).resolve(text);
    } catch (const UserError& e) {
      EXPECT_EQ(e.exit_code(), 2);
      return std::string(e.what()) + " (hint: " + e.hint() + ")";
    }
    return "";
  }

  test::TempTree sysfs_;
  test::TempTree tracefs_;
};

TEST_F(EventCatalogTest, Builtins) {
  ResolvedEvent cycles = one("cycles:u");
  EXPECT_EQ(cycles.type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(cycles.config, uint64_t{PERF_COUNT_HW_CPU_CYCLES});
  EXPECT_EQ(cycles.pmu, "cpu");
  EXPECT_EQ(cycles.origin, EventOrigin::Builtin);
  EXPECT_TRUE(cycles.modifiers.user);
  EXPECT_EQ(cycles.max_precise, 3);  // from cpu/caps/max_precise
  ResolvedEvent cs = one("cs");
  EXPECT_EQ(cs.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(cs.pmu, "software");
  EXPECT_FALSE(cs.max_precise.has_value());
  ResolvedEvent llc = one("LLC-load-misses");
  EXPECT_EQ(llc.type, uint32_t{PERF_TYPE_HW_CACHE});
  EXPECT_EQ(llc.config, 0x10002u);
}

TEST_F(EventCatalogTest, Raw) {
  ResolvedEvent raw = one("r13c:k");
  EXPECT_EQ(raw.type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(raw.config, 0x13cu);
  EXPECT_EQ(raw.name, "r13c");
  EXPECT_EQ(raw.origin, EventOrigin::Raw);
  EXPECT_TRUE(raw.modifiers.kernel);
}

// As perf 6.1's attrs for the same strings (perf evlist -v): read and write by default, a length
// of 4 for data and 8 for code unless written.
TEST_F(EventCatalogTest, BreakpointsAsPerfEncodesThem) {
  ResolvedEvent rw = one("mem:0x404020");
  EXPECT_EQ(rw.type, uint32_t{PERF_TYPE_BREAKPOINT});
  EXPECT_EQ(rw.bp_type, uint32_t{HW_BREAKPOINT_R | HW_BREAKPOINT_W});
  EXPECT_EQ(rw.config1, 0x404020u);  // bp_addr
  EXPECT_EQ(rw.config2, 4u);         // bp_len
  EXPECT_EQ(rw.origin, EventOrigin::Breakpoint);
  EXPECT_EQ(rw.written, "mem:0x404020");
  ResolvedEvent code = one("mem:0x401000:x");
  EXPECT_EQ(code.bp_type, uint32_t{HW_BREAKPOINT_X});
  EXPECT_EQ(code.config2, 8u);
  ResolvedEvent sized = one("mem:0x404020/2:w");
  EXPECT_EQ(sized.config2, 2u);
  EXPECT_EQ(sized.written, "mem:0x404020");
  EXPECT_EQ(sized.name, "mem:0x404020");
}

TEST_F(EventCatalogTest, PmuTermsUseFormatBits) {
  ResolvedEvent e = one("cpu/event=0x0e,umask=0x01,inv,cmask=0x01/u");
  EXPECT_EQ(e.type, 4u);
  EXPECT_EQ(e.config, 0x0eu | (0x01u << 8) | (1u << 23) | (0x01u << 24));
  EXPECT_EQ(e.name, "cpu/event=0x0e,umask=0x01,inv,cmask=0x01/");
  EXPECT_EQ(e.origin, EventOrigin::SysfsPmu);
  EXPECT_TRUE(e.modifiers.user);
  ResolvedEvent offcore = one("cpu/event=0xb7,umask=0x1,offcore_rsp=0x10003c0244/");
  EXPECT_EQ(offcore.config, 0x1b7u);
  EXPECT_EQ(offcore.config1, 0x10003c0244u);
}

TEST_F(EventCatalogTest, GenericTermsAndName) {
  ResolvedEvent e = one("cpu/config=0x1234,config1=5,config2=0x6,name=foo/");
  EXPECT_EQ(e.config, 0x1234u);
  EXPECT_EQ(e.config1, 5u);
  EXPECT_EQ(e.config2, 6u);
  EXPECT_EQ(e.name, "foo");
  // Later terms override earlier ones, as in perf ("msr/tsc,event=1/" is config 1).
  EXPECT_EQ(one("msr/tsc,event=1/").config, 1u);
}

// perf's per-event settings on named events, as perf 6.1 takes them (perf evlist -v of
// `perf record -e ...` for each): a builtin keeps its written name, a tracepoint its own, and a
// tracepoint takes only the call-chain and inherit terms.
TEST_F(EventCatalogTest, NamedEventsTakePerfsPerEventSettings) {
  ResolvedEvent clock = one("cpu-clock/period=100000,max-stack=3/u");
  EXPECT_EQ(clock.type, uint32_t{PERF_TYPE_SOFTWARE});
  ASSERT_TRUE(clock.settings.rate.has_value());
  EXPECT_FALSE(clock.settings.rate->frequency);
  EXPECT_EQ(clock.settings.rate->value, 100000u);
  EXPECT_EQ(clock.settings.max_stack, 3);
  EXPECT_TRUE(clock.modifiers.user);
  EXPECT_EQ(clock.written, "cpu-clock/period=100000,max-stack=3/u");
  // The last of period= and freq= holds.
  ResolvedEvent both = one("cpu-clock/period=1,freq=100/");
  EXPECT_TRUE(both.settings.rate->frequency);
  EXPECT_EQ(both.settings.rate->value, 100u);
  ResolvedEvent named = one("cpu-clock/time=0,name=foo,no-inherit,call-graph=dwarf,stack-size=4095/");
  EXPECT_EQ(named.written, "foo");
  EXPECT_EQ(named.settings.time, false);
  EXPECT_EQ(named.settings.inherit, false);
  EXPECT_EQ(named.settings.call_graph, CallGraph::Dwarf);
  EXPECT_EQ(named.settings.stack_size, 4096u) << "rounded up to whole words";
  EXPECT_EQ(one("cpu-clock/config=2/").config, 2u);

  ResolvedEvent tp = one("sched:sched_switch/max-stack=3,call-graph=fp/:k");
  EXPECT_EQ(tp.origin, EventOrigin::Tracepoint);
  EXPECT_EQ(tp.written, "sched:sched_switch");
  EXPECT_EQ(tp.settings.max_stack, 3);
  EXPECT_EQ(tp.settings.call_graph, CallGraph::FramePointer);
  EXPECT_TRUE(tp.modifiers.kernel);
  EXPECT_EQ(one("sched:sched_switch/no-inherit/k").settings.inherit, false);

  EXPECT_EQ(failure("sched:sched_switch/period=3/"),
            "unknown term 'period' for tracepoint 'sched:sched_switch' in 'sched:sched_switch/period=3/' (hint: a tracepoint "
            "samples every hit; its terms are call-graph, stack-size, max-stack, inherit, no-inherit)");
  EXPECT_NE(failure("sched:sched_switch/name=sw/").find("unknown term 'name'"), std::string::npos);
  EXPECT_NE(failure("cpu-clock/umask=1/").find("unknown term 'umask' for event 'cpu-clock'"), std::string::npos);
  EXPECT_NE(failure("cpu-clock/period=0/").find("bad value '0' for term 'period'"), std::string::npos);
  EXPECT_NE(failure("cpu-clock/call-graph=lbr/").find("last branch records"), std::string::npos);
  EXPECT_NE(failure("cpu-clock/call-graph=x/").find("call-graph=fp, dwarf or no"), std::string::npos);
  EXPECT_NE(failure("cpu-clock/inherit=1/").find("takes no value"), std::string::npos);
  EXPECT_NE(failure("sched:nope/max-stack=3/").find("unknown event 'sched:nope'"), std::string::npos);
}

// An Intel perfmon name no table of this machine has (an AMD or Arm host, a VM without a model):
// said to be Intel's, with the way to name a model.
TEST_F(EventCatalogTest, AnIntelNameWithoutItsTableNamesTheModelOption) {
  EXPECT_EQ(failure("INST_RETIRED.ANY_P"),
            "unknown event 'INST_RETIRED.ANY_P': it reads as an Intel perfmon name, and no event table of this machine has it "
            "(hint: Intel's names belong to a CPU model's table: name the model, e.g. vperf encode --model skx INST_RETIRED.ANY_P; "
            "run 'vperf list' for this machine's events)");
}

// The same settings among a PMU's terms.
TEST_F(EventCatalogTest, PmuTermsTakeTheSettingsToo) {
  ResolvedEvent e = one("cpu/event=0x3c,freq=999,call-graph=no/");
  EXPECT_EQ(e.config, 0x3cu);
  EXPECT_TRUE(e.settings.rate->frequency);
  EXPECT_EQ(e.settings.rate->value, 999u);
  EXPECT_EQ(e.settings.call_graph, CallGraph::None);
}

TEST_F(EventCatalogTest, AliasesExpandTheirTerms) {
  ResolvedEvent tsc = one("msr/tsc/");
  EXPECT_EQ(tsc.type, 10u);
  EXPECT_EQ(tsc.config, 0u);
  EXPECT_EQ(one("msr/smi/").config, 4u);
  ResolvedEvent psys = one("power/energy-psys/");
  EXPECT_EQ(psys.type, 9u);
  EXPECT_EQ(psys.config, 5u);
  EXPECT_EQ(psys.cpumask, "0");
  EXPECT_TRUE(tsc.cpumask.empty());
  ResolvedEvent loads = one("cpu/mem-loads/pp");
  EXPECT_EQ(loads.config, 0x1cdu);
  EXPECT_EQ(loads.config1, 3u);
  EXPECT_EQ(loads.modifiers.precise, 2);
}

TEST_F(EventCatalogTest, BareAliasOnEveryPmuThatHasIt) {
  ResolvedEvent tsc = one("tsc");
  EXPECT_EQ(tsc.name, "msr/tsc/");
  EXPECT_EQ(tsc.type, 10u);
  auto groups = catalog().resolve("cas_count_read:u");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members[0].pmu, "uncore_imc_0");
  EXPECT_EQ(groups[1].members[0].type, 21u);
  EXPECT_EQ(groups[1].members[0].config, 0x304u);
  EXPECT_TRUE(groups[1].members[0].modifiers.user);
}

TEST_F(EventCatalogTest, UncoreInstancesByPrefix) {
  auto groups = catalog().resolve("uncore_imc/event=0x04,umask=0x03/");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members[0].name, "uncore_imc_0/event=0x04,umask=0x03/");
  EXPECT_EQ(groups[1].members[0].name, "uncore_imc_1/event=0x04,umask=0x03/");
  EXPECT_EQ(catalog().resolve("imc/event=0x04/").size(), 2u);
  EXPECT_EQ(one("uncore_imc_0/event=0x04,umask=0x03/").type, 20u);
}

TEST_F(EventCatalogTest, PmuErrors) {
  EXPECT_EQ(failure("msr/foo/"),
            "unknown term 'foo' for PMU 'msr' in 'msr/foo/' (hint: valid terms: event, config, config1, config2, name, period, "
            "freq, time, inherit, no-inherit, call-graph, stack-size, max-stack; "
            "events: smi, tsc)");
  EXPECT_NE(failure("cpu/event=0x100/").find("value 0x100 too big for term 'event' (8 bits)"), std::string::npos);
  EXPECT_NE(failure("cpu/event=zz/").find("bad value 'zz' for term 'event'"), std::string::npos);
  EXPECT_NE(failure("cpu/config/").find("term 'config' needs a value"), std::string::npos);
  std::string unknown_pmu = failure("mrs/tsc/");
  EXPECT_NE(unknown_pmu.find("unknown PMU 'mrs'"), std::string::npos);
  EXPECT_NE(unknown_pmu.find("did you mean msr?"), std::string::npos);
  EventCatalog no_core({}, TracepointCatalog{}, {});
  try {
    no_core.resolve("cpu/event=0x3c/");
    FAIL() << "resolved without a cpu PMU";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown PMU 'cpu' in 'cpu/event=0x3c/'");
    EXPECT_NE(e.hint().find("no core PMU"), std::string::npos);
  }
}

TEST_F(EventCatalogTest, Tracepoints) {
  ResolvedEvent sw = one("sched:sched_switch");
  EXPECT_EQ(sw.type, uint32_t{PERF_TYPE_TRACEPOINT});
  EXPECT_EQ(sw.config, 372u);
  EXPECT_EQ(sw.pmu, "tracepoint");
  EXPECT_EQ(sw.origin, EventOrigin::Tracepoint);
  ResolvedEvent with_mods = one("sched:sched_switch:k");
  EXPECT_EQ(with_mods.config, 372u);
  EXPECT_TRUE(with_mods.modifiers.kernel);
}

TEST_F(EventCatalogTest, TracepointGlobsExpand) {
  auto groups = catalog().resolve("syscalls:sys_enter_*");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members[0].name, "syscalls:sys_enter_read");
  EXPECT_EQ(groups[1].members[0].config, 702u);
  auto in_group = catalog().resolve("{sched:*}");
  ASSERT_EQ(in_group.size(), 1u);
  EXPECT_EQ(in_group[0].members.size(), 3u);
  EXPECT_EQ(in_group[0].members[0].group_role, GroupRole::Leader);
  EXPECT_EQ(in_group[0].members[2].group_role, GroupRole::Member);
  EXPECT_EQ(failure("sched:nope*"),
            "no tracepoint matches 'sched:nope*' (hint: globs select tracepoints as subsystem:event, e.g. 'sched:*'; "
            "run 'vperf list tracepoint' to see them)");
}

TEST_F(EventCatalogTest, MissingTracefsIsExplained) {
  EventCatalog no_tracefs(load_sysfs_pmus(sysfs_.root()), Result<TracepointCatalog>(Error{"list /x", ENOENT}), {});
  try {
    no_tracefs.resolve("sched:sched_switch");
    FAIL() << "resolved without tracefs";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown event 'sched:sched_switch'");
    EXPECT_NE(e.hint().find("mount -t tracefs nodev /sys/kernel/tracing"), std::string::npos);
  }
}

TEST_F(EventCatalogTest, Groups) {
  auto groups = catalog().resolve("{cycles,instructions}:u,cs");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(groups[0].is_group);
  ASSERT_EQ(groups[0].members.size(), 2u);
  EXPECT_EQ(groups[0].members[0].group_role, GroupRole::Leader);
  EXPECT_EQ(groups[0].members[1].group_role, GroupRole::Member);
  EXPECT_TRUE(groups[0].members[1].group_modifiers.user);
  EXPECT_TRUE(groups[0].members[1].modifiers.empty());
  EXPECT_FALSE(groups[1].is_group);
  EXPECT_EQ(groups[1].members[0].group_role, GroupRole::Alone);
  EXPECT_NE(failure("{cycles:pp,cs}:pp").find("too many 'p' modifiers for 'cycles:pp'"), std::string::npos);
}

TEST_F(EventCatalogTest, NamedSources) {
  test::FakeNamedSource pfm({{"INST_RETIRED", 0xc0}, {"L2_STORE_LOCK_RQSTS.HIT_M", 0x427}});
  ResolvedEvent inst = one("INST_RETIRED:u", {&pfm});
  EXPECT_EQ(inst.config, 0xc0u);
  EXPECT_EQ(inst.origin, EventOrigin::Libpfm);
  EXPECT_TRUE(inst.exclude_kernel);    // the source's own ":u"
  EXPECT_TRUE(inst.modifiers.empty());  // not a perf modifier
  ResolvedEvent dotted = one("L2_STORE_LOCK_RQSTS.HIT_M:pp", {&pfm});
  EXPECT_EQ(dotted.config, 0x427u);
  EXPECT_EQ(dotted.modifiers.precise, 2);  // the source rejected ":pp", the perf reading took it
  EXPECT_NE(failure("INST_RETIRED:bogus", {&pfm}).find("unknown modifier 'bogus' for INST_RETIRED"), std::string::npos);
}

TEST_F(EventCatalogTest, SourcesAreAskedInOrderAndTracepointsFirst) {
  test::FakeNamedSource first({{"SHARED", 1}});
  test::FakeNamedSource second({{"SHARED", 2}, {"ONLY_SECOND", 3}});
  EXPECT_EQ(one("SHARED", {&first, &second}).config, 1u);
  EXPECT_EQ(one("ONLY_SECOND", {&first, &second}).config, 3u);
  test::FakeNamedSource shadow({{"sched", 9}});
  EXPECT_EQ(one("sched:sched_switch", {&shadow}).config, 372u);
  EXPECT_EQ(shadow.calls(), 0);
}

TEST_F(EventCatalogTest, UnknownNamesSuggestClosest) {
  EXPECT_EQ(failure("cyclse"),
            "unknown event 'cyclse' (hint: did you mean cycles? run 'vperf list' to see the events this machine knows)");
  EXPECT_NE(failure("sched:sched_swich").find("did you mean sched:sched_switch"), std::string::npos) << failure("sched:sched_swich");
  test::FakeNamedSource pfm({{"INST_RETIRED", 0xc0}});
  EXPECT_NE(failure("INST_RETIRD", {&pfm}).find("did you mean INST_RETIRED?"), std::string::npos);
  EXPECT_NE(failure("energy-psy").find("energy-psys"), std::string::npos);
  EXPECT_EQ(failure("zzzzzzzzzzzz"),
            "unknown event 'zzzzzzzzzzzz' (hint: run 'vperf list' to see the events this machine knows)");
}

TEST_F(EventCatalogTest, KnownNamesCoverEverySource) {
  test::FakeNamedSource pfm({{"INST_RETIRED", 0xc0}});
  auto names = catalog({&pfm}).known_names();
  for (const char* name : {"cycles", "cpu-cycles", "L1-dcache-load-misses", "msr/tsc/", "tsc", "sched:sched_switch",
                           "INST_RETIRED"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(EventCatalogReal, ResolvesThisMachinesEvents) {
  VPERF_REQUIRE(std::filesystem::exists(kSysfsPmuRoot / "software"), "sysfs PMUs");
  EventCatalog catalog = EventCatalog::load(EventCatalogConfig{});
  EXPECT_EQ(catalog.resolve("cs:u").at(0).members.at(0).type, uint32_t{PERF_TYPE_SOFTWARE});
  if (catalog.find_pmu("msr") != nullptr && catalog.find_pmu("msr")->find_event("tsc") != nullptr) {
    ResolvedEvent tsc = catalog.resolve("msr/tsc/").at(0).members.at(0);
    EXPECT_EQ(tsc.type, catalog.find_pmu("msr")->type);
  }
}

}  // namespace
}  // namespace vperf::events
