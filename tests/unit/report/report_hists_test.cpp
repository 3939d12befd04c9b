// perf report's aggregation on hand-built perf.data files: entries by sort key, Self and
// Children periods (recursion counted once), call-graph trees and their text, filters,
// percentage modes, --percent-limit, lost samples. Addresses are in no map, so every frame is
// "unresolved" and identified by its address, as perf does.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"
#include "report/report_session.h"
#include "report/report_stdio.h"
#include "support/capability.h"
#include "support/run_program.h"
#include "symbols/machines.h"

namespace vperf::report {
namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
constexpr uint64_t kUser = 0xfffffffffffffe00ull;  // PERF_CONTEXT_USER
constexpr uint64_t A = 0x401000, B = 0x402000, C = 0x403000, D = 0x404000;

data::SampleFormat format() {
  data::SampleFormat f;
  f.sample_type = kSampleType;
  f.sample_id_all = true;
  return f;
}

class ReportFile {
 public:
  ReportFile() : path_(std::filesystem::path(testing::TempDir()) / ("vperf_report_" + std::to_string(::getpid()) + ".data")) {}
  ~ReportFile() { std::filesystem::remove(path_); }

  // A sample of thread `tid`, chain leaf first (the ip is the first frame).
  void sample(uint32_t tid, std::vector<uint64_t> chain, uint64_t period = 1000) {
    data::Record r;
    r.type = PERF_RECORD_SAMPLE;
    r.misc = PERF_RECORD_MISC_USER;
    data::Sample s;
    s.ip = chain.front();
    s.period = period;
    s.callchain.push_back(kUser);
    s.callchain.insert(s.callchain.end(), chain.begin(), chain.end());
    r.body = s;
    r.sample_id.pid = r.sample_id.tid = tid;
    r.sample_id.time = ++time_;
    data::SampleFormat f = format();
    records_.push_back(data::build_record(r, &f));
  }
  void comm(uint32_t tid, const std::string& name) {
    data::Record r;
    r.type = PERF_RECORD_COMM;
    r.body = data::CommRecord{tid, tid, name};
    r.sample_id.pid = r.sample_id.tid = tid;
    r.sample_id.time = ++time_;
    data::SampleFormat f = format();
    records_.push_back(data::build_record(r, &f));
  }
  void mmap(uint32_t pid, uint64_t start, uint64_t len, const std::string& file) {
    data::Record r;
    r.type = PERF_RECORD_MMAP;
    r.misc = PERF_RECORD_MISC_USER;
    r.body = data::MmapRecord{pid, pid, start, len, 0, file};
    r.sample_id.pid = r.sample_id.tid = pid;
    r.sample_id.time = ++time_;
    data::SampleFormat f = format();
    records_.push_back(data::build_record(r, &f));
  }
  void lost_samples(uint64_t n) {
    data::Record r;
    r.type = PERF_RECORD_LOST_SAMPLES;
    r.body = data::LostSamplesRecord{n};
    r.sample_id.time = ++time_;
    data::SampleFormat f = format();
    records_.push_back(data::build_record(r, &f));
  }

  ReportData report(const ReportOptions& options) {
    std::vector<data::EventAttrEntry> attrs(1);
    std::memset(&attrs[0].attr, 0, sizeof(perf_event_attr));
    attrs[0].attr.size = sizeof(perf_event_attr);
    attrs[0].attr.type = PERF_TYPE_SOFTWARE;
    attrs[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attrs[0].attr.sample_type = kSampleType;
    attrs[0].attr.sample_id_all = 1;
    attrs[0].attr.sample_period = 1000;
    attrs[0].name = "cpu-clock";
    auto writer = data::PerfDataWriter::create_file(path_, attrs);
    EXPECT_TRUE(writer.ok());
    for (const auto& r : records_) EXPECT_TRUE(writer->write(r).ok());
    EXPECT_TRUE(writer->flush_round().ok());
    EXPECT_TRUE(writer->finish(data::HeaderFeatures{}).ok());
    auto reader = data::PerfDataReader::open_file(path_);
    EXPECT_TRUE(reader.ok()) << reader.error().describe();
    symbols::Machines machines{symbols::SymbolConfig{}};
    Result<ReportData> data = build_report(reader.value(), machines, options);
    EXPECT_TRUE(data.ok()) << data.error().describe();
    return std::move(data).value();
  }

  const std::filesystem::path& path() const { return path_; }  // written by report()

 private:
  std::filesystem::path path_;
  std::vector<std::vector<uint8_t>> records_;
  uint64_t time_ = 1000;
};

// Entries as "symbol-address children self" in perf's order.
std::vector<std::string> summary(const ReportData& data, const ReportOptions& options) {
  std::vector<std::string> out;
  for (const HistEntry* e : shown_entries(data, *data.event_hists(0), options))
    out.push_back(symbol_text(*e) + " " + std::to_string(e->children_period) + " " + std::to_string(e->self_period) +
                  " " + std::to_string(e->self_samples));
  return out;
}

std::string hex16(uint64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "[.] 0x%016lx", static_cast<unsigned long>(a));
  return buf;
}

TEST(ReportHists, SelfOnlyGroupsByLeafAddress) {
  ReportFile f;
  f.comm(42, "worker");
  for (int i = 0; i < 3; ++i) f.sample(42, {A, C, D});
  f.sample(42, {B, C, D});
  ReportOptions o;
  o.children = false;
  ReportData data = f.report(o);
  EXPECT_FALSE(data.layout.children);
  EXPECT_EQ(data.event_hists(0)->samples, 4u);
  EXPECT_EQ(data.event_hists(0)->total_period, 4000u);
  EXPECT_EQ(summary(data, o), (std::vector<std::string>{hex16(A) + " 0 3000 3", hex16(B) + " 0 1000 1"}));
}

TEST(ReportHists, ChildrenCountEveryFrameOnceAndRecursionOnce) {
  ReportFile f;
  f.comm(42, "worker");
  for (int i = 0; i < 3; ++i) f.sample(42, {A, C, D});
  f.sample(42, {B, C, D});
  f.sample(42, {C, A, C, D});  // recursion: C twice in one chain counts once
  ReportOptions o;
  ReportData data = f.report(o);
  EXPECT_TRUE(data.layout.children) << "perf's default with callchains";
  EXPECT_EQ(summary(data, o), (std::vector<std::string>{hex16(C) + " 5000 1000 1", hex16(D) + " 5000 0 0",
                                                        hex16(A) + " 4000 3000 3", hex16(B) + " 1000 1000 1"}));
}

TEST(ReportHists, SortsByPidThenSymbolWithOneEntryPerThread) {
  ReportFile f;
  f.comm(42, "worker");
  f.comm(43, "helper");
  f.sample(42, {A});
  f.sample(43, {A});
  f.sample(43, {A});
  ReportOptions o;
  o.children = false;
  o.sort_keys = std::vector<SortKey>{SortKey::Pid, SortKey::Sym};
  ReportData data = f.report(o);
  std::string text = render_stdio(data, o);
  EXPECT_NE(text.find("# Overhead      Pid:Command  Symbol                \n"), std::string::npos) << text;
  EXPECT_NE(text.find("    66.67%       43:helper   " + hex16(A) + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    33.33%       42:worker   " + hex16(A) + "\n"), std::string::npos) << text;
}

// Report counts samples per (entry, thread, stack) chain, found through the stack's list of
// chains and, once many threads share one stack (a kernel path, the idle loop), by hash: every
// thread's samples stay its own on either side of that switch.
TEST(ReportHists, ThreadsSharingOneStackKeepTheirOwnChildren) {
  constexpr uint32_t kThreads = 20;  // well past the listed chains of a stack (kChainsListed)
  ReportFile f;
  for (uint32_t k = 0; k < kThreads; ++k) f.comm(100 + k, "t" + std::to_string(k));
  for (uint32_t round = 0; round < kThreads; ++round)
    for (uint32_t k = round; k < kThreads; ++k) f.sample(100 + k, {A, C, D});  // thread k: k+1 samples
  ReportOptions o;
  o.sort_keys = std::vector<SortKey>{SortKey::Pid, SortKey::Sym};
  ReportData data = f.report(o);
  std::map<std::pair<pid_t, uint64_t>, std::pair<uint64_t, uint64_t>> periods;  // (tid, address) -> (children, self)
  for (const HistEntry& e : data.event_hists(0)->entries) periods[{e.tid, e.address}] = {e.children_period, e.self_period};
  ASSERT_EQ(periods.size(), 3u * kThreads);
  for (uint32_t k = 0; k < kThreads; ++k) {
    const uint64_t own = (k + 1) * 1000;
    EXPECT_EQ(periods[std::make_pair(pid_t(100 + k), A)], std::make_pair(own, own)) << "thread " << k;
    EXPECT_EQ(periods[std::make_pair(pid_t(100 + k), C)], std::make_pair(own, uint64_t{0})) << "thread " << k;
    EXPECT_EQ(periods[std::make_pair(pid_t(100 + k), D)], std::make_pair(own, uint64_t{0})) << "thread " << k;
  }
}

// A thread sampled before anything named it shows as ":TID" in perf script, but perf report
// shows those samples under the name it gets first: the COMM overrides the ":TID" comm in place
// and the histogram's collapse merges its entries with the name's (seen in a system-wide
// recording, where a forked child runs on another CPU before its parent's FORK record). A name
// given later (an exec) starts a comm of its own and keeps the samples before it apart.
TEST(ReportHists, SamplesOfAnUnnamedThreadGoUnderItsFirstName) {
  ReportFile f;
  f.sample(77, {A});
  f.sample(77, {A});
  f.comm(77, "worker");
  f.sample(77, {A});
  f.comm(77, "worker2");
  f.sample(77, {A});
  ReportOptions o;
  o.children = false;
  o.sort_keys = std::vector<SortKey>{SortKey::Comm};
  ReportData data = f.report(o);
  std::map<std::string, uint64_t> samples;
  for (const HistEntry* e : shown_entries(data, *data.event_hists(0), o)) samples[data.hists->comms().text(e->key.comm)] += e->self_samples;
  EXPECT_EQ(samples, (std::map<std::string, uint64_t>{{"worker", 3}, {"worker2", 1}})) << render_stdio(data, o);
  o.sort_keys = std::vector<SortKey>{SortKey::Pid};  // the pid column: the thread's last name
  ReportData by_pid = f.report(o);
  std::vector<const HistEntry*> entries = shown_entries(by_pid, *by_pid.event_hists(0), o);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(by_pid.hists->comms().text(entries[0]->comm), "worker2");
}

// perf sizes the comm column by each entry's thread's name at the end (thread__comm_len), not
// by the name its samples were taken under, and cuts a longer comm to it: a process sampled
// under a long name that then execs a short one shows cut (seen in a system-wide recording: a
// child of "vperf_integration_test" sampled before its exec). The pid column names the thread
// by that last name too, with or without samples after it.
// The table's entry lines (the lines with a percentage).
std::vector<std::string> table_rows(const std::string& text) {
  std::vector<std::string> rows;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line[0] != '#' && line.find('%') != std::string::npos) rows.push_back(line);  // no graph lines
    at = end + 1;
  }
  return rows;
}

TEST(ReportHists, CommColumnIsSizedByTheThreadsLastName) {
  ReportFile f;
  f.comm(50, "a-long-program-name");
  f.sample(50, {A});
  f.sample(50, {A});
  f.comm(50, "sh");
  f.comm(51, "short");
  f.sample(51, {B});
  ReportOptions o;
  o.children = false;
  o.sort_keys = std::vector<SortKey>{SortKey::Comm};
  ReportData data = f.report(o);
  const std::vector<std::string> rows = table_rows(render_stdio(data, o));
  EXPECT_EQ(rows, (std::vector<std::string>{"    66.67%  a-long-", "    33.33%  short  "}));
  o.sort_keys = std::vector<SortKey>{SortKey::Pid};
  ReportData by_pid = f.report(o);
  const std::vector<std::string> pid_rows = table_rows(render_stdio(by_pid, o));
  EXPECT_EQ(pid_rows, (std::vector<std::string>{"    66.67%       50:sh     ", "    33.33%       51:short  "}));
  if (!test::find_program("perf").empty()) {  // the same file through perf 6.1, the reference
    for (const auto& [keys, expected] : {std::pair{"comm", rows}, std::pair{"pid", pid_rows}}) {
      test::ProgramResult perf = test::run_program({"perf", "report", "--stdio", "--no-children", "--sort", keys, "-i", f.path().string()});
      ASSERT_EQ(perf.exit_code, 0) << perf.err;
      EXPECT_EQ(table_rows(perf.out), expected) << perf.out;
    }
  }
}

// perf compares DSOs by short name: two files of one basename (a guest's library beside the
// host's, in vperf kvm --host) are one "Shared Object", and their addresses one symbol.
TEST(ReportHists, DsosOfOneBasenameAreOneEntryAsPerfComparesThem) {
  ReportFile f;
  f.comm(42, "app");
  f.comm(43, "app");
  f.mmap(42, 0x10000000, 0x100000, "/host/lib/libsame.so");
  f.mmap(43, 0x20000000, 0x100000, "/guest/lib/libsame.so");
  f.sample(42, {0x10000100});
  f.sample(43, {0x20000100});
  f.sample(43, {0x20000200});
  ReportOptions o;
  o.children = false;
  o.sort_keys = std::vector<SortKey>{SortKey::Dso};
  ReportData by_dso = f.report(o);
  EXPECT_EQ(shown_entries(by_dso, *by_dso.event_hists(0), o).size(), 1u) << render_stdio(by_dso, o);
  o.sort_keys = std::vector<SortKey>{SortKey::Dso, SortKey::Sym};
  ReportData by_symbol = f.report(o);
  std::vector<const HistEntry*> entries = shown_entries(by_symbol, *by_symbol.event_hists(0), o);
  ASSERT_EQ(entries.size(), 2u) << render_stdio(by_symbol, o);  // offsets 0x100 (both files) and 0x200
  EXPECT_EQ(entries[0]->self_samples, 2u);
}

TEST(ReportHists, CalleeGraphTextAsPerfPrintsIt) {
  ReportFile f;
  f.comm(42, "worker");
  for (int i = 0; i < 3; ++i) f.sample(42, {A, C, D});
  f.sample(42, {A, B, D});
  ReportOptions o;
  o.children = false;
  ReportData data = f.report(o);
  std::string text = render_stdio(data, o);
  std::string expected =
      "   100.00%  worker   [unknown]         " + hex16(A) + "\n"
      "            |\n"
      "            ---0x401000\n"
      "               |          \n"
      "               |--75.00%--0x403000\n"
      "               |          0x404000\n"
      "               |          \n"
      "                --25.00%--0x402000\n"
      "                          0x404000\n"
      "\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
  EXPECT_NE(text.find("# Samples: 4  of event 'cpu-clock'\n# Event count (approx.): 4000\n"), std::string::npos) << text;
}

TEST(ReportHists, CallerGraphUnderChildrenEntries) {
  ReportFile f;
  f.comm(42, "worker");
  for (int i = 0; i < 3; ++i) f.sample(42, {A, C, D});
  f.sample(42, {B, C, D});
  ReportOptions o;
  ReportData data = f.report(o);
  std::string text = render_stdio(data, o);
  // D's graph: the callees below D, root first; one root carrying all of D: no percentage.
  std::string expected =
      "   100.00%     0.00%  worker   [unknown]         " + hex16(D) + "\n"
      "            |\n"
      "            ---0x404000\n"
      "               0x403000\n"
      "               |          \n"
      "               |--75.00%--0x401000\n"
      "               |          \n"
      "                --25.00%--0x402000\n"
      "\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
}

TEST(ReportHists, ThresholdPrunesSmallBranches) {
  ReportFile f;
  f.comm(42, "worker");
  for (int i = 0; i < 999; ++i) f.sample(42, {A, C});
  f.sample(42, {A, B});  // 0.1%: below the 0.5% default threshold
  ReportOptions o;
  o.children = false;
  std::string text = render_stdio(f.report(o), o);
  EXPECT_EQ(text.find("0x402000"), std::string::npos) << text;
  EXPECT_NE(text.find("--99.90%--0x403000"), std::string::npos) << text;
  o.call_graph.min_percent = 0;
  text = render_stdio(f.report(o), o);
  EXPECT_NE(text.find("--0.10%--0x402000"), std::string::npos) << text;
}

TEST(ReportHists, FiltersKeepTheTotalUnlessRelative) {
  ReportFile f;
  f.comm(42, "worker");
  f.comm(43, "helper");
  f.sample(42, {A});
  f.sample(43, {B});
  f.sample(43, {B});
  f.sample(43, {C});
  ReportOptions o;
  o.children = false;
  o.filters.comms = {"helper"};
  ReportData data = f.report(o);
  std::string text = render_stdio(data, o);
  EXPECT_NE(text.find("# comm: helper\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# Overhead  Shared Object     Symbol"), std::string::npos) << "comm column elided: " << text;
  EXPECT_NE(text.find("    50.00%  [unknown]         " + hex16(B)), std::string::npos) << text;
  EXPECT_EQ(text.find(hex16(A)), std::string::npos) << text;
  EXPECT_NE(text.find("# Samples: 4  of event"), std::string::npos) << text;
  o.relative_percentage = true;
  text = render_stdio(data, o);
  EXPECT_NE(text.find("    66.67%  [unknown]         " + hex16(B)), std::string::npos) << text;
  EXPECT_NE(text.find("# Samples: 3  of event"), std::string::npos) << text;
}

// perf decides whether an entry is shown by the first sample that reaches it, in file order:
// with --children, a caller reached first by a filtered sample's chain stays hidden when a later
// sample that passes lands in it as its own symbol (vperf spreads chains after reading, and
// must still take the earliest sample).
TEST(ReportHists, AnEntryFirstReachedByAFilteredSamplesChainStaysHidden) {
  ReportFile f;
  f.comm(42, "worker");
  f.comm(43, "helper");
  f.sample(43, {B, C});  // filtered out (--tid 42); its chain reaches C first
  f.sample(42, {C});     // shown, C as its own symbol
  f.sample(42, {D});     // shown; D reached by no filtered sample
  ReportOptions o;
  o.sort_keys = std::vector<SortKey>{SortKey::Dso, SortKey::Sym};
  o.filters.tids = {42};
  ReportData data = f.report(o);
  ASSERT_TRUE(data.layout.children);
  std::string text = render_stdio(data, o);
  EXPECT_EQ(text.find(hex16(C)), std::string::npos) << text;
  EXPECT_NE(text.find(hex16(D)), std::string::npos) << text;
  if (!test::find_program("perf").empty()) {  // the same file through perf 6.1, the reference
    test::ProgramResult perf = test::run_program(
        {"perf", "report", "--stdio", "--children", "--sort", "dso,sym", "--tid", "42", "-i", f.path().string()});
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    EXPECT_EQ(perf.out.find(hex16(C)), std::string::npos) << perf.out;
    EXPECT_NE(perf.out.find(hex16(D)), std::string::npos) << perf.out;
  }
  // Without --children only the samples' own symbols make entries: C is shown.
  o.children = false;
  ReportData self_only = f.report(o);
  EXPECT_NE(render_stdio(self_only, o).find(hex16(C)), std::string::npos);
}

TEST(ReportHists, PercentLimitHidesEntries) {
  ReportFile f;
  f.comm(42, "worker");
  for (int i = 0; i < 99; ++i) f.sample(42, {A});
  f.sample(42, {B});
  ReportOptions o;
  o.children = false;
  o.percent_limit = 2;
  ReportData data = f.report(o);
  EXPECT_EQ(summary(data, o).size(), 1u);
  o.percent_limit = 0;
  EXPECT_EQ(summary(data, o).size(), 2u);
}

TEST(ReportHists, LostSamplesAreCounted) {
  ReportFile f;
  f.comm(42, "worker");
  f.sample(42, {A});
  f.lost_samples(7);
  f.lost_samples(5);
  ReportOptions o;
  ReportData data = f.report(o);
  EXPECT_EQ(data.lost_samples, 12u);
  EXPECT_NE(render_stdio(data, o).find("# Total Lost Samples: 12\n"), std::string::npos);
}

// perf report -T's table: READ counts summed per task (one READ per CPU the inherited counter
// was on), tasks and events in first-seen order, 0 where a task has none of an event, columns as
// wide as their widest value. The first two rows are perf 6.1's for the same READ records.
TEST(ReportText, TaskCountsAsPerfReportT) {
  ReportData report;
  report.events = {ReportEvent{"cpu-clock", 0}, ReportEvent{"task-clock", 0}};
  report.task_counts.add(2850, 2850, 0, 1094308);
  report.task_counts.add(2850, 2850, 0, 58450383);
  report.task_counts.add(2848, 2848, 0, 4678654);
  EXPECT_EQ(task_counts_table(report),
            "#  PID   TID  cpu-clock\n"
            "  2850  2850   59544691\n"
            "  2848  2848    4678654\n");
  report.task_counts.add(7, 7, 1, 12);
  EXPECT_EQ(task_counts_table(report),
            "#  PID   TID  cpu-clock  task-clock\n"
            "  2850  2850   59544691           0\n"
            "  2848  2848    4678654           0\n"
            "     7     7          0          12\n");
  EXPECT_EQ(task_counts_table(ReportData{}), "# PID  TID\n");
}

TEST(ReportText, SampleCountsWithPerfsUnits) {
  EXPECT_EQ(samples_with_unit(505), "505 ");
  EXPECT_EQ(samples_with_unit(1000), "1000 ");
  EXPECT_EQ(samples_with_unit(317433), "317K");
  EXPECT_EQ(samples_with_unit(2500000), "2M");
}

TEST(ReportSortKeys, ParsesPerfNamesAndPrefixes) {
  auto keys = parse_sort_keys("comm,dso,sym");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, (std::vector<SortKey>{SortKey::Comm, SortKey::Dso, SortKey::Sym}));
  keys = parse_sort_keys("pid,symbol,cpu,tid");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, (std::vector<SortKey>{SortKey::Pid, SortKey::Sym, SortKey::Cpu, SortKey::Tid}));
  keys = parse_sort_keys("srcline,src");  // perf's prefix match
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, (std::vector<SortKey>{SortKey::Srcline, SortKey::Srcline}));
  EXPECT_EQ(sort_key_header(SortKey::Srcline), "Source:Line");
  EXPECT_FALSE(parse_sort_keys("comm,frobnicate").ok());
  EXPECT_FALSE(parse_sort_keys("").ok());
}

TEST(ReportOutputFields, ParsesPerfNamesPrefixesAndSortKeys) {
  auto fields = parse_output_fields("Overhead,overhead_us,sym,SAMP,per,overhead_c,over");
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(*fields, (std::vector<OutputField>{{FieldKind::Overhead},
                                               {FieldKind::OverheadUs},
                                               {FieldKind::Key, SortKey::Sym},
                                               {FieldKind::Samples},
                                               {FieldKind::Period},
                                               {FieldKind::Children}}));
  // A sort key's prefix wins, as in perf ("p" is pid, not period).
  fields = parse_output_fields("p");
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->front(), (OutputField{FieldKind::Key, SortKey::Pid}));
  EXPECT_EQ(field_header({FieldKind::OverheadGuestSys}), "guest sys");
  auto bad = parse_output_fields("overhead,srcfile");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'srcfile'"), std::string::npos);
  EXPECT_FALSE(parse_output_fields(",").ok());
}

}  // namespace
}  // namespace vperf::report
