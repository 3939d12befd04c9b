#include "data/perf_record.h"

#include <gtest/gtest.h>

#include <cstring>

#include "data/perf_data_format.h"

namespace vperf::data {
namespace {

SampleFormat all_id_format() {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_IDENTIFIER;
  f.sample_id_all = true;
  return f;
}

SampleId some_id() {
  SampleId s;
  s.pid = 11;
  s.tid = 12;
  s.time = 123456789;
  s.id = 77;
  s.stream_id = 78;
  s.cpu = 3;
  return s;
}

Record make(uint32_t type, RecordBody body, uint16_t misc = 0) {
  Record r;
  r.type = type;
  r.misc = misc;
  r.body = std::move(body);
  r.sample_id = some_id();
  return r;
}

// build -> parse -> build gives the same bytes and the same body.
void expect_round_trip(const Record& rec, const SampleFormat* f) {
  auto bytes = build_record(rec, f);
  ASSERT_GE(bytes.size(), 8u);
  uint16_t size;
  std::memcpy(&size, bytes.data() + 6, 2);
  auto stream = record_stream_size(bytes);
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(*stream, bytes.size());
  auto parsed = parse_record(bytes, f);
  ASSERT_TRUE(parsed.ok()) << record_type_name(rec.type) << ": " << parsed.error().describe();
  EXPECT_EQ(parsed->type, rec.type);
  EXPECT_EQ(parsed->misc, rec.misc);
  EXPECT_TRUE(parsed->body == rec.body) << record_type_name(rec.type);
  if (f && f->sample_id_all && rec.type < kRecordHeaderAttr) {
    EXPECT_TRUE(parsed->has_sample_id);
    EXPECT_EQ(parsed->sample_id, rec.sample_id) << record_type_name(rec.type);
  }
  EXPECT_EQ(build_record(*parsed, f), bytes) << record_type_name(rec.type);
  if (rec.type < kRecordHeaderAttr) {
    EXPECT_EQ(size % 8, 0u) << record_type_name(rec.type);
  }
}

TEST(PerfRecord, KernelRecordsRoundTripWithSampleIdTrailer) {
  SampleFormat f = all_id_format();
  Mmap2Record m2{1, 2, 0x400000, 0x1000, 0, 8, 1, 42, 0, {}, 5, 2, "/usr/bin/true"};
  Mmap2Record m2b{1, 2, 0x400000, 0x1000, 0, 0, 0, 0, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 5, 2, "/lib/x.so"};
  TextPokeRecord poke{0xffffffff81000000, {1, 2, 3}, {4, 5, 6, 7, 8}};
  std::vector<Record> records = {
      make(PERF_RECORD_MMAP, MmapRecord{1, 2, 0xffffffff81000000, 0x1206448, 0xffffffff81000000, "[kernel.kallsyms]_text"}),
      make(PERF_RECORD_MMAP2, m2),
      make(PERF_RECORD_MMAP2, m2b, PERF_RECORD_MISC_MMAP_BUILD_ID),
      make(PERF_RECORD_COMM, CommRecord{5, 5, "vperf-workload"}, PERF_RECORD_MISC_COMM_EXEC),
      make(PERF_RECORD_FORK, TaskRecord{5, 4, 6, 4, 1000}),
      make(PERF_RECORD_EXIT, TaskRecord{5, 4, 6, 4, 2000}),
      make(PERF_RECORD_LOST, LostRecord{77, 12}),
      make(PERF_RECORD_LOST_SAMPLES, LostSamplesRecord{3}),
      make(PERF_RECORD_THROTTLE, ThrottleRecord{1, 77, 78}),
      make(PERF_RECORD_UNTHROTTLE, ThrottleRecord{2, 77, 78}),
      make(PERF_RECORD_KSYMBOL, KsymbolRecord{0xffffffffc0000000, 0x100, 1, 0, "bpf_prog_6deef7357e7b4530"}),
      make(PERF_RECORD_BPF_EVENT, BpfEventRecord{1, 0, 42, {1, 2, 3, 4, 5, 6, 7, 8}}),
      make(PERF_RECORD_TEXT_POKE, poke),
      make(PERF_RECORD_CGROUP, CgroupRecord{9, "/system.slice"}),
      make(PERF_RECORD_SWITCH, SwitchRecord{}),
      make(PERF_RECORD_SWITCH_CPU_WIDE, SwitchRecord{7, 8}),
      make(PERF_RECORD_AUX, UnparsedRecord{std::vector<uint8_t>(24, 1)}),
      make(63, UnparsedRecord{std::vector<uint8_t>(16, 2)}),  // unknown kernel type: kept by size
  };
  for (const auto& rec : records) expect_round_trip(rec, &f);
  SampleFormat no_trailer;
  for (const auto& rec : records) expect_round_trip(rec, &no_trailer);
}

TEST(PerfRecord, UserRecordsRoundTrip) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.sample_type = PERF_SAMPLE_IP;
  AttrRecord a;
  a.attr = attr;
  a.attr_bytes = sizeof(attr);
  a.ids = {5, 6};
  TracingDataRecord t{16, std::vector<uint8_t>(16, 7)};
  AuxtraceRecord aux{0, 1, 2, 3, 4, {1, 2, 3, 4, 5, 6, 7, 8}};
  std::vector<Record> records = {
      make(kRecordHeaderAttr, a),
      make(kRecordHeaderEventType, EventTypeRecord{3, "sched:sched_switch"}),
      make(kRecordHeaderTracingData, t),
      make(kRecordHeaderBuildId, BuildIdRecord{-1, {1, 2, 3, 4}, "/bin/ls", 64}, kMiscBuildIdSize | PERF_RECORD_MISC_USER),
      make(kRecordFinishedRound, FinishedRoundRecord{}),
      make(kRecordFinishedInit, FinishedRoundRecord{}),
      make(kRecordIdIndex, IdIndexRecord{{{1, 0, 0, 10}, {2, 0, 1, 10}}}),
      make(kRecordAuxtraceInfo, AuxtraceInfoRecord{1, {1, 2}}),
      make(kRecordAuxtrace, aux),
      make(kRecordThreadMap, ThreadMapRecord{{{10, "bash"}, {11, "sleep"}}}),
      make(kRecordCpuMap, UnparsedRecord{std::vector<uint8_t>(8, 0)}),
      make(kRecordStatConfig, StatConfigRecord{{{0, 1}, {1, 2}}}),
      make(kRecordStat, StatRecord{1, 2, 3, 4, 5, 6}),
      make(kRecordStatRound, StatRoundRecord{1, 99}),
      make(kRecordEventUpdate, EventUpdateRecord{2, 5, {'c', 'y', 0, 0, 0, 0, 0, 0}}),
      make(kRecordTimeConv, TimeConvRecord{10, 20, 30, 40, 50, 1, 1}),
      make(kRecordTimeConv, TimeConvRecord{10, 20, 30, std::nullopt, std::nullopt, 0, 0}),
      make(kRecordHeaderFeature, FeatureRecord{kFeatHostname, {4, 0, 0, 0, 'v', 'm', 0, 0}}),
      make(200, UnparsedRecord{{1, 2, 3}}),  // unknown user type: skipped by size
  };
  for (const auto& rec : records) expect_round_trip(rec, nullptr);
}

TEST(PerfRecord, TracingDataAndAuxtracePayloadCountsInTheStreamSize) {
  Record t = make(kRecordHeaderTracingData, TracingDataRecord{24, std::vector<uint8_t>(24, 1)});
  auto bytes = build_record(t, nullptr);
  EXPECT_EQ(bytes.size(), 16u + 24u);
  uint16_t size;
  std::memcpy(&size, bytes.data() + 6, 2);
  EXPECT_EQ(size, 16u);
  EXPECT_EQ(*record_stream_size(bytes), 40u);
}

TEST(PerfRecord, CompressedIsReportedClearly) {
  Record c = make(kRecordCompressed, UnparsedRecord{{1, 2, 3, 4, 5, 6, 7, 8}});
  auto parsed = parse_record(build_record(c, nullptr), nullptr);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("compressed data"), std::string::npos);
  EXPECT_NE(parsed.error().message.find("not supported"), std::string::npos);
}

// Every combination of the fixed-size sample fields, plus each variable field alone and together.
TEST(PerfRecord, SampleTypeCombinationsRoundTrip) {
  const uint64_t fixed[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
                            PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                            PERF_SAMPLE_PERIOD};
  const uint64_t variable[] = {PERF_SAMPLE_READ, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW, PERF_SAMPLE_BRANCH_STACK,
                               PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER, PERF_SAMPLE_WEIGHT,
                               PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_REGS_INTR,
                               PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_CGROUP, PERF_SAMPLE_DATA_PAGE_SIZE,
                               PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_AUX};
  Sample s;
  s.ip = 0x401000;
  s.addr = 0x7fff0000;
  s.period = 1000;
  s.callchain = {0xfffffffffffffe00ull, 0x401000, 0x401100};
  s.raw = {1, 2, 3, 4};
  s.regs_user_abi = 2;
  s.regs_user = {1, 2, 3};
  s.stack_user = std::vector<uint8_t>(16, 9);
  s.stack_user_dyn_size = 8;
  s.weight = 5;
  s.data_src = 6;
  s.transaction = 7;
  s.regs_intr_abi = 2;
  s.regs_intr = {4};
  s.phys_addr = 8;
  s.cgroup = 9;
  s.data_page_size = 4096;
  s.code_page_size = 4096;
  s.aux = {1, 2, 3, 4, 5, 6, 7, 8};
  int checked = 0;
  for (uint64_t mask = 0; mask < (1u << std::size(fixed)); ++mask) {
    uint64_t base = 0;
    for (size_t i = 0; i < std::size(fixed); ++i)
      if (mask & (1u << i)) base |= fixed[i];
    std::vector<uint64_t> extras = {0};
    if (mask % 37 == 0) {  // a spread of the fixed combinations gets every variable field
      for (uint64_t v : variable) extras.push_back(v);
      uint64_t all = 0;
      for (uint64_t v : variable) all |= v;
      extras.push_back(all);
    }
    for (uint64_t extra : extras) {
      SampleFormat f;
      f.sample_type = base | extra;
      f.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID;
      f.regs_user_mask = 0x7;
      f.regs_intr_mask = 0x1;
      Sample expected;
      SampleId sid;
      if (f.sample_type & PERF_SAMPLE_IP) expected.ip = s.ip;
      if (f.sample_type & PERF_SAMPLE_ADDR) expected.addr = s.addr;
      if (f.sample_type & PERF_SAMPLE_PERIOD) expected.period = s.period;
      if (f.sample_type & PERF_SAMPLE_READ) expected.read = std::vector<uint8_t>(24, 3);
      if (f.sample_type & PERF_SAMPLE_CALLCHAIN) expected.callchain = s.callchain;
      if (f.sample_type & PERF_SAMPLE_RAW) expected.raw = s.raw;
      if (f.sample_type & PERF_SAMPLE_BRANCH_STACK) {
        expected.branch_stack = std::vector<uint8_t>(8 + 2 * 24, 0);
        expected.branch_stack[0] = 2;
      }
      if (f.sample_type & PERF_SAMPLE_REGS_USER) { expected.regs_user_abi = 2; expected.regs_user = s.regs_user; }
      if (f.sample_type & PERF_SAMPLE_STACK_USER) { expected.stack_user = s.stack_user; expected.stack_user_dyn_size = 8; }
      if (f.sample_type & PERF_SAMPLE_WEIGHT) expected.weight = s.weight;
      if (f.sample_type & PERF_SAMPLE_DATA_SRC) expected.data_src = s.data_src;
      if (f.sample_type & PERF_SAMPLE_TRANSACTION) expected.transaction = s.transaction;
      if (f.sample_type & PERF_SAMPLE_REGS_INTR) { expected.regs_intr_abi = 2; expected.regs_intr = s.regs_intr; }
      if (f.sample_type & PERF_SAMPLE_PHYS_ADDR) expected.phys_addr = s.phys_addr;
      if (f.sample_type & PERF_SAMPLE_CGROUP) expected.cgroup = s.cgroup;
      if (f.sample_type & PERF_SAMPLE_DATA_PAGE_SIZE) expected.data_page_size = s.data_page_size;
      if (f.sample_type & PERF_SAMPLE_CODE_PAGE_SIZE) expected.code_page_size = s.code_page_size;
      if (f.sample_type & PERF_SAMPLE_AUX) expected.aux = s.aux;
      if (f.sample_type & PERF_SAMPLE_TID) { sid.pid = 1; sid.tid = 2; }
      if (f.sample_type & PERF_SAMPLE_TIME) sid.time = 3;
      if (f.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) sid.id = 4;
      if (f.sample_type & PERF_SAMPLE_STREAM_ID) sid.stream_id = 5;
      if (f.sample_type & PERF_SAMPLE_CPU) sid.cpu = 6;
      Record rec;
      rec.type = PERF_RECORD_SAMPLE;
      rec.body = expected;
      rec.sample_id = sid;
      auto bytes = build_record(rec, &f);
      auto parsed = parse_record(bytes, &f);
      ASSERT_TRUE(parsed.ok()) << std::hex << f.sample_type << ": " << parsed.error().describe();
      EXPECT_TRUE(std::get<Sample>(parsed->body) == expected) << std::hex << f.sample_type;
      EXPECT_EQ(parsed->sample_id, sid) << std::hex << f.sample_type;
      EXPECT_EQ(build_record(*parsed, &f), bytes);
      // peek_* agree with the full parse.
      if (f.id_pos() >= 0) {
        EXPECT_EQ(peek_sample_id(bytes, f), std::optional<uint64_t>(4));
      }
      if (f.sample_type & PERF_SAMPLE_TIME) {
        EXPECT_EQ(peek_time(bytes, f), std::optional<uint64_t>(3));
      }
      // Every truncation of the body fails cleanly (the header's size no longer matches).
      for (size_t cut = 8; cut < bytes.size(); cut += 7) {
        std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        uint16_t sz = static_cast<uint16_t>(cut);
        std::memcpy(part.data() + 6, &sz, 2);
        auto p = parse_record(part, &f);
        (void)p;  // may parse (fewer fields fit) or fail; it must not crash
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 512);
}

TEST(PerfRecord, ReadFormatGroupIsSkippedBySize) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
  f.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // nr=2, running, {value, id, lost} x 2
  std::vector<uint64_t> words = {2, 100, 1, 11, 0, 2, 12, 0};
  Sample s;
  s.period = 7;
  s.read.resize(words.size() * 8);
  std::memcpy(s.read.data(), words.data(), s.read.size());
  s.callchain = {1, 2};
  Record rec;
  rec.type = PERF_RECORD_SAMPLE;
  rec.body = s;
  auto parsed = parse_record(build_record(rec, &f), &f);
  ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
  EXPECT_EQ(std::get<Sample>(parsed->body).callchain, s.callchain);
  EXPECT_EQ(std::get<Sample>(parsed->body).read.size(), 64u);
}

TEST(PerfRecord, HugeCountsFailInsteadOfAllocating) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_CALLCHAIN;
  std::vector<uint8_t> bytes(24, 0);
  uint32_t type = PERF_RECORD_SAMPLE;
  uint16_t size = 24;
  uint64_t nr = ~uint64_t{0};
  std::memcpy(bytes.data(), &type, 4);
  std::memcpy(bytes.data() + 6, &size, 2);
  std::memcpy(bytes.data() + 8, &nr, 8);
  EXPECT_FALSE(parse_record(bytes, &f).ok());
}

TEST(PerfRecord, IdAndTimePositionsFollowPerf) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU;
  f.sample_id_all = true;
  EXPECT_EQ(f.id_pos(), 3);
  EXPECT_EQ(f.is_pos(), 2);  // from the end: CPU, then ID
  EXPECT_EQ(f.trailer_size(), 32u);
  f.sample_type |= PERF_SAMPLE_IDENTIFIER;
  EXPECT_EQ(f.id_pos(), 0);
  EXPECT_EQ(f.is_pos(), 1);
  f.sample_type = PERF_SAMPLE_IP;
  EXPECT_EQ(f.id_pos(), -1);

  SampleFormat g = all_id_format();
  Record comm = make(PERF_RECORD_COMM, CommRecord{1, 1, "x"});
  auto bytes = build_record(comm, &g);
  EXPECT_EQ(peek_sample_id(bytes, g), std::optional<uint64_t>(77));
  EXPECT_EQ(peek_time(bytes, g), std::optional<uint64_t>(123456789));
  g.sample_type &= ~uint64_t{PERF_SAMPLE_IDENTIFIER};
  bytes = build_record(comm, &g);
  EXPECT_EQ(peek_sample_id(bytes, g), std::optional<uint64_t>(77));
}

TEST(PerfRecord, AttrSizeSkew) {
  perf_event_attr attr{};
  attr.type = 1;
  attr.size = PERF_ATTR_SIZE_VER5;
  attr.sample_type = 0x107;
  attr.sample_id_all = 1;
  std::vector<uint8_t> small(PERF_ATTR_SIZE_VER5);
  std::memcpy(small.data(), &attr, small.size());
  auto a = attr_from_bytes(small);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->sample_type, 0x107u);
  EXPECT_EQ(a->sample_id_all, 1u);
  EXPECT_EQ(a->sig_data, 0u);

  std::vector<uint8_t> big(sizeof(perf_event_attr) + 16, 0);
  std::memcpy(big.data(), &attr, sizeof(attr));
  EXPECT_TRUE(attr_from_bytes(big).ok());
  big.back() = 1;  // a field newer than this build, in use
  EXPECT_FALSE(attr_from_bytes(big).ok());

  // HEADER_ATTR with an attr of another size: its own size field says where the ids start.
  Record rec;
  rec.type = kRecordHeaderAttr;
  AttrRecord ar;
  ar.attr = attr;
  ar.attr_bytes = PERF_ATTR_SIZE_VER5;
  ar.ids = {9, 10};
  rec.body = ar;
  auto parsed = parse_record(build_record(rec, nullptr), nullptr);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(std::get<AttrRecord>(parsed->body).ids, (std::vector<uint64_t>{9, 10}));
}

TEST(PerfRecord, BadSizesAreErrors) {
  std::vector<uint8_t> bytes(8, 0);
  EXPECT_FALSE(record_stream_size(bytes).ok());  // size 0
  EXPECT_FALSE(record_stream_size(std::span(bytes).first(5)).ok());
  uint16_t size = 64;
  std::memcpy(bytes.data() + 6, &size, 2);
  EXPECT_FALSE(parse_record(bytes, nullptr).ok());  // says 64, has 8
}

TEST(PerfRecord, Names) {
  EXPECT_EQ(record_type_name(PERF_RECORD_SAMPLE), "SAMPLE");
  EXPECT_EQ(record_type_name(kRecordFinishedRound), "FINISHED_ROUND");
  EXPECT_EQ(record_type_name(99), "type 99");
  EXPECT_EQ(feature_name(kFeatEventDesc), "EVENT_DESC");
  EXPECT_EQ(feature_name(200), "feature 200");
}

}  // namespace
}  // namespace vperf::data
