// The raw dump's record text for inputs made byte by byte: the pieces perf's files on this
// machine do not show (CPU maps in their list and mask encodings, a kernel record without
// sample_id_all, a sample whose event samples no TID or period). Whole dumps of real files are
// compared with perf 6.1's in tests/integration/raw_dump_test.cpp.
#include "report/raw_dump.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/byte_writer.h"
#include "data/perf_data_format.h"
#include "data/perf_record.h"

namespace vperf::report {
namespace {

// A pipe-mode stream: the pipe header, one HEADER_ATTR for `attr`, then `records`.
std::vector<uint8_t> pipe_stream(const perf_event_attr& attr, const std::vector<data::Record>& records) {
  std::vector<uint8_t> bytes;
  auto append = [&bytes](const std::vector<uint8_t>& more) { bytes.insert(bytes.end(), more.begin(), more.end()); };
  ByteWriter header;
  header.u64(data::kPerfMagic2);
  header.u64(data::kPipeHeaderSize);
  append(header.take());
  data::Record attr_record;
  attr_record.type = data::kRecordHeaderAttr;
  data::AttrRecord a;
  a.attr = attr;
  a.attr_bytes = sizeof(perf_event_attr);
  a.ids = {7};
  attr_record.body = a;
  append(data::build_record(attr_record, nullptr));
  const data::SampleFormat format = data::SampleFormat::from_attr(attr);
  for (const data::Record& r : records) append(data::build_record(r, &format));
  return bytes;
}

// Where the first record after the HEADER_ATTR starts, as perf prints a pipe's offsets.
const std::string kAfterAttr = [] {
  char text[32];
  std::snprintf(text, sizeof text, "%#zx", 8 + sizeof(perf_event_attr) + 8);
  return std::string(text);
}();

perf_event_attr cpu_clock(uint64_t sample_type, bool sample_id_all) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.size = sizeof attr;
  attr.sample_period = 4000;
  attr.sample_type = sample_type;
  attr.sample_id_all = sample_id_all;
  return attr;
}

data::Record cpu_map(std::vector<uint8_t> body) {
  data::Record r;
  r.type = data::kRecordCpuMap;
  r.body = data::UnparsedRecord{std::move(body)};
  return r;
}

// Each record's last dump line (what follows the offset and size), one per record.
std::vector<std::string> decoded_lines(const std::vector<uint8_t>& stream, RawDumpCommand command) {
  Result<data::PerfDataReader> reader = data::PerfDataReader::from_bytes(stream);
  EXPECT_TRUE(reader.ok()) << reader.error().describe();
  if (!reader) return {};
  RawDump dump(*reader, "pipe", command);
  std::vector<std::string> lines;
  Result<data::ReadStats> stats = reader->read([&](const data::RecordView& view) {
    std::string text;
    dump.append_record(view, text);
    const size_t at = text.find(" [0x", text.rfind("\n\n") + 2);
    lines.push_back(text.substr(text.find("]: ", at) + 3));
    return true;
  });
  EXPECT_TRUE(stats.ok());
  return lines;
}

TEST(RawDump, CpuMapsInEachEncodingAsPerfListsThem) {
  ByteWriter list;  // PERF_CPU_MAP__CPUS: u16 type, u16 nr, u16 cpu[nr]
  list.u16(0);
  list.u16(4);
  for (uint16_t cpu : {0, 2, 3, 4}) list.u16(cpu);
  list.u16(0);
  ByteWriter mask;  // PERF_CPU_MAP__MASK, 64-bit words: u16 type, u16 nr, u16 long_size, 4 pad, u64[nr]
  mask.u16(1);
  mask.u16(2);
  mask.u16(8);
  mask.u32(0);
  mask.u64(0b1011);
  mask.u64(1);
  ByteWriter range;  // PERF_CPU_MAP__RANGE_CPUS: u16 type, u8 any_cpu, u8 pad, u16 start, u16 end
  range.u16(2);
  range.u8(0);
  range.u8(0);
  range.u16(1);
  range.u16(3);
  range.u16(0);
  const std::vector<uint8_t> stream =
      pipe_stream(cpu_clock(PERF_SAMPLE_IP, false), {cpu_map(list.take()), cpu_map(mask.take()), cpu_map(range.take())});
  EXPECT_EQ(decoded_lines(stream, RawDumpCommand::Script),
            (std::vector<std::string>{"PERF_RECORD_ATTR", "PERF_RECORD_CPU_MAP: 0,2-4\n", "PERF_RECORD_CPU_MAP: 0-1,3,64\n",
                                      "PERF_RECORD_CPU_MAP: 1-3\n"}));
  // perf report has no handler for CPU maps.
  EXPECT_EQ(decoded_lines(stream, RawDumpCommand::Report)[1], "PERF_RECORD_CPU_MAP: 0,2-4\n: unhandled!\n");
}

TEST(RawDump, KernelRecordWithoutSampleIdAllAndASampleWithoutTidOrPeriod) {
  data::Record comm;
  comm.type = PERF_RECORD_COMM;
  comm.misc = PERF_RECORD_MISC_COMM_EXEC;
  comm.body = data::CommRecord{12, 13, "worker"};
  data::Record sample;
  sample.type = PERF_RECORD_SAMPLE;
  sample.misc = PERF_RECORD_MISC_USER;
  data::Sample s;
  s.ip = 0x401000;
  s.callchain = {PERF_CONTEXT_USER, 0x401000, 0x400500};
  sample.body = s;
  const std::vector<uint8_t> stream =
      pipe_stream(cpu_clock(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, false), {comm, sample});
  const std::vector<std::string> lines = decoded_lines(stream, RawDumpCommand::Script);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "PERF_RECORD_COMM exec: worker:12/13\n");
  // No TID: perf's -1/-1; no PERIOD: the attr's sample_period.
  EXPECT_EQ(lines[2],
            "PERF_RECORD_SAMPLE(IP, 0x2): -1/-1: 0x401000 period: 4000 addr: 0\n"
            "... FP chain: nr:3\n"
            ".....  0: fffffffffffffe00\n"
            ".....  1: 0000000000401000\n"
            ".....  2: 0000000000400500\n");

  // Without sample_id_all a kernel record has no sample: "-1 -1" where perf prints CPU and time.
  Result<data::PerfDataReader> reader = data::PerfDataReader::from_bytes(stream);
  ASSERT_TRUE(reader.ok());
  RawDump dump(*reader, "pipe", RawDumpCommand::Script);
  std::string text;
  ASSERT_TRUE(reader->read([&](const data::RecordView& view) {
    dump.append_record(view, text);
    return true;
  }).ok());
  EXPECT_NE(text.find("\n-1 -1 0 [" + kAfterAttr + "]: PERF_RECORD_ATTR\n" + kAfterAttr + "@pipe [0x18]: event: 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n-1 -1 " + kAfterAttr + " [0x18]: PERF_RECORD_COMM exec"), std::string::npos) << text;
}

TEST(RawDump, HexDumpPadsTheLastLine) {
  data::Record round;
  round.type = data::kRecordFinishedRound;
  round.body = data::FinishedRoundRecord{};
  Result<data::PerfDataReader> reader = data::PerfDataReader::from_bytes(pipe_stream(cpu_clock(PERF_SAMPLE_IP, false), {round}));
  ASSERT_TRUE(reader.ok());
  RawDump dump(*reader, "pipe", RawDumpCommand::Report);
  std::string last;
  ASSERT_TRUE(reader->read([&](const data::RecordView& view) {
    last.clear();
    dump.append_record(view, last);
    return true;
  }).ok());
  EXPECT_EQ(last,
            "\n" + kAfterAttr + "@pipe [0x8]: event: 68\n"
            ".\n"
            ". ... raw event: size 8 bytes\n"
            ".  0000:  44 00 00 00 00 00 08 00                          D.......        \n"
            "\n"
            "-1 -1 " + kAfterAttr + " [0x8]: PERF_RECORD_FINISHED_ROUND\n");  // no sample_id_all
}

TEST(RawDump, AggregatedStatsAsPerfReportPrintsThem) {
  data::ReadStats stats;
  stats.by_type = {{PERF_RECORD_MMAP, 1}, {PERF_RECORD_COMM, 2}, {PERF_RECORD_SAMPLE, 105}, {data::kRecordFinishedRound, 1},
                   {data::kRecordFinishedInit, 1}};
  EXPECT_EQ(aggregated_stats(stats, {{0, 105}, {1, 0}}, {"cpu-clock", "syscalls:sys_enter_getppid"}),
            "\nAggregated stats:\n"
            "           TOTAL events:        110\n"
            "            MMAP events:          1  ( 0.9%)\n"
            "            COMM events:          2  ( 1.8%)\n"
            "          SAMPLE events:        105  (95.5%)\n"
            "  FINISHED_ROUND events:          1  ( 0.9%)\n"
            "   FINISHED_INIT events:          1  ( 0.9%)\n"
            "cpu-clock stats:\n"
            "          SAMPLE events:        105\n");
}

}  // namespace
}  // namespace vperf::report
