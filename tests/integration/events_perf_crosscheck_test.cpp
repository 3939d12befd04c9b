// Cross-checks vperf's event model with the real `perf` on this machine: the events perf
// lists must be known to vperf's catalog, tracepoint globs must expand to the same set, and
// the perf_event_attr vperf builds must equal the one `perf stat -vv` prints, field by field.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "events/attr_builder.h"
#include "events/event_catalog.h"
#include "events/event_listing.h"
#include "support/capability.h"
#include "support/run_program.h"

namespace vperf::events {
namespace {

std::string perf_path() { return test::find_program("perf"); }

// Names (and " OR " aliases) of the `perf list` lines tagged with `label`.
std::vector<std::string> perf_list_names(const std::string& filter, const std::string& label) {
  auto result = test::run_program({perf_path(), "list", filter}, {{"PAGER", "cat"}});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> names;
  std::istringstream lines(result.out);
  std::string line;
  const std::string tag = "[" + label + "]";
  while (std::getline(lines, line)) {
    size_t at = line.rfind(tag);
    if (at == std::string::npos) continue;
    std::istringstream words(line.substr(0, at));
    std::string word;
    while (words >> word)
      if (word != "OR") names.push_back(word);
  }
  return names;
}

using AttrFields = std::map<std::string, std::string>;

// The perf_event_attr blocks of `perf stat -vv -e EVENTS true`, in the order perf opened
// them (a retry after a failed open is another block).
std::vector<AttrFields> perf_stat_attrs(const std::string& events) {
  auto result = test::run_program({perf_path(), "stat", "-vv", "-e", events, "true"});
  std::vector<AttrFields> blocks;
  std::istringstream lines(result.out + result.err);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line == "perf_event_attr:") {
      blocks.emplace_back();
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.starts_with("----") || line.empty() || line[0] != ' ') {
      inside = false;
      continue;
    }
    // "  exclude_guest                    1" or "  { bp_addr, config1 }             0x5"
    size_t value_at = line.find_last_of(' ');
    std::string key(trim(std::string_view(line).substr(0, value_at)));
    blocks.back()[key] = std::string(trim(std::string_view(line).substr(value_at + 1)));
  }
  return blocks;
}

std::string flag_names(uint64_t bits, const std::vector<std::pair<uint64_t, const char*>>& names) {
  std::string out;
  for (const auto& [bit, name] : names) {
    if (!(bits & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
    bits &= ~bit;
  }
  if (bits != 0) out += (out.empty() ? "" : "|") + hex(bits);
  return out;
}

// vperf's attr rendered the way perf's perf_event_attr__fprintf prints it: non-zero fields only.
AttrFields render(const perf_event_attr& attr) {
  AttrFields out;
  auto put = [&](const char* key, uint64_t value, bool as_hex) {
    if (value != 0) out[key] = as_hex ? hex(value) : std::to_string(value);
  };
  put("type", attr.type, false);
  put("size", attr.size, false);
  put("config", attr.config, true);
  put("{ bp_addr, config1 }", attr.config1, true);
  put("{ bp_len, config2 }", attr.config2, true);
  if (attr.sample_type)
    out["sample_type"] = flag_names(attr.sample_type, {{PERF_SAMPLE_IP, "IP"},
                                                       {PERF_SAMPLE_TID, "TID"},
                                                       {PERF_SAMPLE_TIME, "TIME"},
                                                       {PERF_SAMPLE_READ, "READ"},
                                                       {PERF_SAMPLE_ID, "ID"},
                                                       {PERF_SAMPLE_PERIOD, "PERIOD"},
                                                       {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"}});
  if (attr.read_format)
    out["read_format"] = flag_names(attr.read_format, {{PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"},
                                                       {PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"},
                                                       {PERF_FORMAT_ID, "ID"},
                                                       {PERF_FORMAT_GROUP, "GROUP"}});
  put("disabled", attr.disabled, false);
  put("inherit", attr.inherit, false);
  put("pinned", attr.pinned, false);
  put("exclude_user", attr.exclude_user, false);
  put("exclude_kernel", attr.exclude_kernel, false);
  put("exclude_hv", attr.exclude_hv, false);
  put("enable_on_exec", attr.enable_on_exec, false);
  put("precise_ip", attr.precise_ip, false);
  put("exclude_host", attr.exclude_host, false);
  put("exclude_guest", attr.exclude_guest, false);
  return out;
}

std::string describe(const AttrFields& fields) {
  std::string out;
  for (const auto& [key, value] : fields) out += "  " + key + " = " + value + "\n";
  return out;
}

class PerfCrossCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (perf_path().empty()) GTEST_SKIP() << "needs the perf binary on PATH";
  }
  EventCatalog catalog_ = EventCatalog::load(EventCatalogConfig{});
};

TEST_F(PerfCrossCheck, EverySoftwareEventPerfListsIsKnown) {
  std::vector<std::string> names = perf_list_names("sw", "Software event");
  ASSERT_GE(names.size(), 12u) << "perf listed too few software events to compare";
  for (const std::string& name : names) {
    std::vector<ResolvedGroup> groups;
    ASSERT_NO_THROW(groups = catalog_.resolve(name)) << name;
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].members[0].type, uint32_t{PERF_TYPE_SOFTWARE}) << name;
  }
}

TEST_F(PerfCrossCheck, EveryKernelPmuEventPerfListsIsKnown) {
  std::vector<std::string> names = perf_list_names("pmu", "Kernel PMU event");
  VPERF_REQUIRE(!names.empty(), "a PMU with sysfs event aliases");
  for (const std::string& name : names) EXPECT_NO_THROW(catalog_.resolve(name)) << name;
}

TEST_F(PerfCrossCheck, SchedTracepointGlobMatchesPerf) {
  VPERF_REQUIRE(test::has_tracefs(), "tracefs");
  std::vector<std::string> perf_names = perf_list_names("sched:*", "Tracepoint event");
  ASSERT_FALSE(perf_names.empty());
  std::vector<std::string> ours;
  for (const ResolvedGroup& group : catalog_.resolve("sched:*")) ours.push_back(group.members.at(0).name);
  EXPECT_EQ(ours, perf_names);
}

// `perf list FILTER` lines tagged [label], exactly as printed.
std::string perf_list_lines(const std::string& filter, const std::string& label) {
  auto result = test::run_program({perf_path(), "list", filter}, {{"PAGER", "cat"}});
  std::istringstream lines(result.out);
  std::string line, out;
  while (std::getline(lines, line))
    if (line.ends_with("[" + label + "]")) out += line + "\n";
  return out;
}

std::string vperf_list_text(const EventCatalog& catalog, const std::string& filter) {
  std::ostringstream out;
  print_listing(out, list_events(catalog, filter));
  return out.str();
}

TEST_F(PerfCrossCheck, ListTextMatchesPerf) {
  // perf 6.1 lists its tool events (duration_time ...) under "sw" too, after the software events.
  std::string perf_sw = perf_list_lines("sw", "Software event") + perf_list_lines("sw", "Tool event");
  ASSERT_NE(perf_sw.find("[Tool event]"), std::string::npos);
  EXPECT_EQ(vperf_list_text(catalog_, "sw"), perf_sw);
  EXPECT_EQ(vperf_list_text(catalog_, "pmu"), perf_list_lines("pmu", "Kernel PMU event"));
  if (test::has_tracefs()) {
    std::string perf_sched = perf_list_lines("sched:*", "Tracepoint event");
    ASSERT_FALSE(perf_sched.empty());
    EXPECT_EQ(vperf_list_text(catalog_, "sched:*"), perf_sched);
    // Every tracepoint, including perf's rule that id-less directories (ftrace:function) are not.
    EXPECT_EQ(vperf_list_text(catalog_, "tracepoint"), perf_list_lines("tracepoint", "Tracepoint event"));
  }
}

// `perf list --raw-dump GROUP`, which scripts and perf's own tests read (stat_all_pmu.sh:
// for p in $(perf list --raw-dump pmu)): vperf's, byte for byte, through the CLI. (perf also
// lists the SDT events of its build-id cache there; the groups compared have none.)
TEST_F(PerfCrossCheck, RawDumpMatchesPerf) {
  std::vector<std::string> groups = {"sw", "pmu", "hw", "cache"};
  if (test::has_tracefs()) groups.push_back("tracepoint");
  for (const std::string& group : groups) {
    SCOPED_TRACE(group);
    test::ProgramResult perf = test::run_program({perf_path(), "list", "--raw-dump", group}, {{"PAGER", "cat"}});
    test::ProgramResult vperf = test::run_program({VPERF_BINARY, "list", "--raw-dump", group});
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    ASSERT_EQ(vperf.exit_code, 0) << vperf.err;
    EXPECT_EQ(vperf.out, perf.out);
  }
  EXPECT_FALSE(test::run_program({VPERF_BINARY, "list", "--raw-dump", "sw"}).out.empty());
  // vperf's metrics (stat -M) by name, a newline after them as perf ends its metrics dump.
  test::ProgramResult metrics = test::run_program({VPERF_BINARY, "list", "--raw-dump", "metrics"});
  EXPECT_EQ(metrics.exit_code, 0);
  EXPECT_TRUE(metrics.out.starts_with("IPC ")) << metrics.out;
  EXPECT_TRUE(metrics.out.ends_with(" \n")) << metrics.out;
}

TEST_F(PerfCrossCheck, AttrsMatchPerfStat) {
  std::vector<std::string> events = {"cs:u",      "cs",        "cs:k",          "cs:uk",          "page-faults:h",
                                     "cs:G",      "cs:H",      "cs:Gu",         "cs:D",           "cpu-clock:ppp",
                                     "r13c:k",    "r13c",      "cycles:u",      "LLC-load-misses", "branch-loads:k",
                                     "{cs,faults}:k", "{cs:k,faults}:u", "{cs:G,faults}:u", "{cs:p,faults}:k",
                                     "{cs:u,faults}:D"};
  if (test::has_tracefs()) {
    events.push_back("sched:sched_switch");
    events.push_back("sched:sched_switch:k");
  }
  if (catalog_.find_pmu("msr") && catalog_.find_pmu("msr")->find_event("tsc")) {
    events.push_back("msr/tsc/");
    events.push_back("msr/tsc/u");
    events.push_back("msr/config1=0x5,config2=0x6/");
  }
  if (catalog_.find_pmu("power") && catalog_.find_pmu("power")->find_event("energy-psys"))
    events.push_back("power/energy-psys/");

  for (const std::string& text : events) {
    SCOPED_TRACE(text);
    std::vector<AttrFields> perf_blocks = perf_stat_attrs(text);
    std::vector<ResolvedEvent> members;
    for (const ResolvedGroup& group : catalog_.resolve(text))
      for (const ResolvedEvent& member : group.members) members.push_back(member);
    ASSERT_GE(perf_blocks.size(), members.size()) << "perf printed fewer attrs than vperf resolved";
    // Members of these groups are software events that open on the first try, so block i is
    // member i; a lone event's retries (perf drops exclude_guest after EINVAL) come after it.
    for (size_t i = 0; i < members.size(); ++i) {
      SampleSettings settings = perf_stat_settings();
      // perf stat counts per-CPU PMUs (a cpumask in sysfs) system-wide, not from exec on.
      settings.enable_on_exec = members[i].cpumask.empty();
      AttrFields ours = render(build_attr(members[i], settings));
      EXPECT_EQ(ours, perf_blocks[i]) << "member " << i << "\nvperf:\n" << describe(ours) << "perf:\n"
                                      << describe(perf_blocks[i]);
    }
  }
}

}  // namespace
}  // namespace vperf::events
