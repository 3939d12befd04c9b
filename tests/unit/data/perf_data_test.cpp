// PerfDataWriter -> bytes -> PerfDataReader, in file and pipe mode, and the reader's behaviour on
// truncated, corrupt and unfinished input.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "core/strings.h"
#include "core/byte_writer.h"
#include "data/compressed_records.h"
#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "support/lying_records.h"
#include "support/processes.h"

namespace vperf::data {
namespace {

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::path(testing::TempDir()) / ("vperf_data_" + std::to_string(::getpid()) + "_" + name);
}

// VPERF_PERF_DATA_KEEP=DIR keeps a copy of a file written here as DIR/name (fuzz seeds).
void keep(const std::filesystem::path& p, const std::string& name) {
  if (const char* dir = std::getenv("VPERF_PERF_DATA_KEEP"))
    std::filesystem::copy_file(p, std::filesystem::path(dir) / name, std::filesystem::copy_options::overwrite_existing);
}

// Likewise for bytes made here, cut to their first 16 KiB: the fuzzers' inputs are at most
// 64 KiB, and what makes these hostile is in their first records.
void keep_bytes(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (const char* dir = std::getenv("VPERF_PERF_DATA_KEEP")) {
    std::ofstream out(std::filesystem::path(dir) / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(std::min<size_t>(bytes.size(), 16384)));
  }
}

std::vector<uint8_t> slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<EventAttrEntry> two_events() {
  std::vector<EventAttrEntry> attrs(2);
  for (size_t i = 0; i < 2; ++i) {
    perf_event_attr& a = attrs[i].attr;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = i == 0 ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_TASK_CLOCK;
    a.sample_type = kSampleType;
    a.sample_id_all = 1;
    a.sample_period = 1000;
  }
  attrs[0].name = "cpu-clock";
  attrs[0].ids = {100, 101};
  attrs[1].name = "task-clock";
  attrs[1].ids = {200};
  return attrs;
}

std::vector<uint8_t> sample(uint64_t id, uint64_t time, uint64_t ip, uint32_t tid = 42) {
  Record r;
  r.type = PERF_RECORD_SAMPLE;
  r.misc = PERF_RECORD_MISC_USER;
  Sample s;
  s.ip = ip;
  s.period = 1000;
  s.callchain = {0xfffffffffffffe00ull, ip, ip + 0x10};
  r.body = s;
  r.sample_id.id = id;
  r.sample_id.time = time;
  r.sample_id.pid = 42;
  r.sample_id.tid = tid;
  SampleFormat f;
  f.sample_type = kSampleType;
  f.sample_id_all = true;
  return build_record(r, &f);
}

std::vector<uint8_t> comm(uint64_t id, uint64_t time) {
  Record r;
  r.type = PERF_RECORD_COMM;
  r.body = CommRecord{42, 42, "worker"};
  r.sample_id.id = id;
  r.sample_id.time = time;
  r.sample_id.pid = r.sample_id.tid = 42;
  SampleFormat f;
  f.sample_type = kSampleType;
  f.sample_id_all = true;
  return build_record(r, &f);
}

HeaderFeatures some_features() {
  HeaderFeatures f;
  f.hostname = "testhost";
  f.osrelease = "6.1.0-test";
  f.version = "0.1.0 (vperf)";
  f.arch = "x86_64";
  f.cpudesc = "Test CPU";
  f.cpuid = "GenuineIntel,6,143,8";
  f.nr_cpus_online = 2;
  f.nr_cpus_available = 4;
  f.total_mem_kb = 1024;
  f.cmdline = {"/usr/bin/vperf", "record", "--", "true"};
  f.build_ids = {{-1, PERF_RECORD_MISC_USER, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, "/bin/true"},
                 {-1, PERF_RECORD_MISC_KERNEL, {0xaa, 0xbb}, "[kernel.kallsyms]"}};
  f.clockid_res_ns = 1;
  f.other = {{kFeatCpuTopology, {1, 2, 3, 4}}};
  return f;
}

// Two rounds: the second round has a record older than the first round's newest.
void write_records(PerfDataWriter& w) {
  ASSERT_TRUE(w.write(comm(100, 5)));
  ASSERT_TRUE(w.write(sample(100, 10, 0x1000)));
  ASSERT_TRUE(w.write(sample(200, 30, 0x2000)));
  ASSERT_TRUE(w.write(sample(101, 20, 0x3000)));
  ASSERT_TRUE(w.flush_round());
  ASSERT_TRUE(w.write(sample(100, 25, 0x4000)));
  ASSERT_TRUE(w.write(sample(200, 40, 0x5000)));
  ASSERT_TRUE(w.flush_round());
}

struct Seen {
  std::vector<uint64_t> times;  // samples' times in delivery order
  std::vector<std::string> events;
  std::vector<uint32_t> types;
  uint64_t samples = 0;
};

Seen read_all(PerfDataReader& r, ReadOptions options = {}, ReadStats* stats_out = nullptr) {
  Seen seen;
  auto stats = r.read(
      [&](const RecordView& v) {
        seen.types.push_back(v.record.type);
        if (v.record.type == PERF_RECORD_SAMPLE) {
          ++seen.samples;
          seen.times.push_back(v.record.sample_id.time);
          seen.events.push_back(v.attr ? v.attr->name : "?");
        }
        return true;
      },
      options);
  EXPECT_TRUE(stats.ok());
  if (stats_out && stats.ok()) *stats_out = *stats;
  return seen;
}

TEST(PerfData, FileRoundTripKeepsAttrsFeaturesAndRecords) {
  auto path = temp_path("round_trip.data");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok()) << w.error().describe();
    write_records(w.value());
    ASSERT_TRUE(w->finish(some_features()));
  }
  auto r = PerfDataReader::open_file(path);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_FALSE(r->is_pipe());
  ASSERT_EQ(r->attrs().size(), 2u);
  EXPECT_EQ(r->attrs()[0].name, "cpu-clock");
  EXPECT_EQ(r->attrs()[1].name, "task-clock");
  EXPECT_EQ(r->attrs()[0].ids, (std::vector<uint64_t>{100, 101}));
  EXPECT_EQ(r->attrs()[1].attr.config, static_cast<uint64_t>(PERF_COUNT_SW_TASK_CLOCK));
  EXPECT_EQ(r->attr_for_id(200), &r->attrs()[1]);
  EXPECT_EQ(r->attr_for_id(999), nullptr);

  const HeaderFeatures& f = r->features();
  HeaderFeatures want = some_features();
  EXPECT_EQ(f.hostname, want.hostname);
  EXPECT_EQ(f.osrelease, want.osrelease);
  EXPECT_EQ(f.version, want.version);
  EXPECT_EQ(f.arch, want.arch);
  EXPECT_EQ(f.cpudesc, want.cpudesc);
  EXPECT_EQ(f.cpuid, want.cpuid);
  EXPECT_EQ(f.nr_cpus_online, 2u);
  EXPECT_EQ(f.nr_cpus_available, 4u);
  EXPECT_EQ(f.total_mem_kb, 1024u);
  EXPECT_EQ(f.cmdline, want.cmdline);
  EXPECT_EQ(f.build_ids, want.build_ids);
  EXPECT_EQ(f.clockid_res_ns, std::optional<uint64_t>(1));
  EXPECT_EQ(f.first_sample_time, std::optional<uint64_t>(10));  // tracked by the writer
  EXPECT_EQ(f.last_sample_time, std::optional<uint64_t>(40));
  ASSERT_EQ(f.event_desc.size(), 2u);
  EXPECT_EQ(f.event_desc[1].ids, (std::vector<uint64_t>{200}));
  EXPECT_EQ(f.other, want.other);
  EXPECT_EQ(r->skipped_features(), std::vector<std::string>{"CPU_TOPOLOGY"});
  EXPECT_TRUE(r->warnings().empty());

  ReadStats stats;
  Seen seen = read_all(r.value(), {}, &stats);
  EXPECT_EQ(seen.samples, 5u);
  EXPECT_EQ(stats.rounds, 2u);
  EXPECT_EQ(stats.samples, 5u);
  EXPECT_EQ(seen.events, (std::vector<std::string>{"cpu-clock", "cpu-clock", "cpu-clock", "task-clock", "task-clock"}));
  std::filesystem::remove(path);
}

// write_records' two rounds in a file at `path`, opened.
Result<PerfDataReader> two_rounds_file(const std::filesystem::path& path) {
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    if (!w) return w.error();
    write_records(w.value());
    VPERF_TRY(w->finish({}));
  }
  return PerfDataReader::open_file(path);
}

// perf's rule: at FINISHED_ROUND n, release what is not newer than the newest record before
// FINISHED_ROUND n-1; the rest at the end.
TEST(PerfData, FinishedRoundOrdersLikePerf) {
  auto path = temp_path("order.data");
  auto r = two_rounds_file(path);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  Seen ordered = read_all(r.value());
  EXPECT_EQ(ordered.times, (std::vector<uint64_t>{10, 20, 25, 30, 40}));
  Seen raw = read_all(r.value(), ReadOptions{.ordered = false});
  EXPECT_EQ(raw.times, (std::vector<uint64_t>{10, 30, 20, 25, 40}));
  std::filesystem::remove(path);
}

// perf dumps a FINISHED_ROUND (perf script -D) before the records it releases: a round is
// delivered first, then what it flushes.
TEST(PerfData, FinishedRoundComesBeforeTheRecordsItReleases) {
  auto path = temp_path("round_first.data");
  auto r = two_rounds_file(path);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  std::vector<std::string> order;
  auto stats = r->read([&](const RecordView& v) {
    if (v.record.type == kRecordFinishedRound) order.push_back("round");
    else if (v.record.type == PERF_RECORD_COMM || v.record.type == PERF_RECORD_SAMPLE)
      order.push_back(std::to_string(v.record.sample_id.time));
    return true;
  });
  ASSERT_TRUE(stats.ok());
  // The first round releases nothing (nothing is older than the round before it); the second
  // releases up to the first round's newest (30); 40 comes at the end.
  EXPECT_EQ(order, (std::vector<std::string>{"round", "round", "5", "10", "20", "25", "30", "40"}));
  std::filesystem::remove(path);
}

TEST(PerfData, PipeModeDeliversTheSameAsFileMode) {
  auto path = temp_path("file.data");
  auto pipe_path = temp_path("pipe.data");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok());
    write_records(w.value());
    ASSERT_TRUE(w->finish(some_features()));
  }
  {
    int fd = ::open(pipe_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    auto w = PerfDataWriter::create_pipe(fd, two_events());
    ASSERT_TRUE(w.ok());
    write_records(w.value());
    ASSERT_TRUE(w->finish(some_features()));
    ::close(fd);
  }
  keep(path, "vperf-writer.data");
  keep(pipe_path, "vperf-writer.pipe");
  auto file = PerfDataReader::open_file(path);
  ASSERT_TRUE(file.ok());
  Seen from_file = read_all(file.value());

  // Through a real fd (streaming) and from memory.
  int fd = ::open(pipe_path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto pipe = PerfDataReader::open_pipe(fd);
  ASSERT_TRUE(pipe.ok()) << pipe.error().describe();
  EXPECT_TRUE(pipe->is_pipe());
  ASSERT_EQ(pipe->attrs().size(), 2u);  // known right after open
  Seen from_pipe = read_all(pipe.value());
  ::close(fd);
  EXPECT_EQ(from_pipe.times, from_file.times);
  EXPECT_EQ(from_pipe.samples, from_file.samples);
  EXPECT_EQ(pipe->features().hostname, "testhost");
  EXPECT_EQ(pipe->features().build_ids, some_features().build_ids);
  EXPECT_EQ(pipe->features().cmdline, some_features().cmdline);
  EXPECT_EQ(pipe->attrs()[1].name, "task-clock");  // from the EVENT_DESC record
  EXPECT_FALSE(pipe->read([](const RecordView&) { return true; }).ok());  // a pipe is read once

  auto memory = PerfDataReader::from_bytes(slurp(pipe_path));
  ASSERT_TRUE(memory.ok());
  EXPECT_TRUE(memory->is_pipe());
  EXPECT_EQ(read_all(memory.value()).times, from_file.times);
  EXPECT_EQ(read_all(memory.value()).times, from_file.times);  // memory input can be read again
  EXPECT_EQ(memory->features().build_ids.size(), 2u);
  std::filesystem::remove(path);
  std::filesystem::remove(pipe_path);
}

// A recorder killed after flush_round(): everything up to that round is readable.
TEST(PerfData, DroppedWriterLeavesAReadableFile) {
  auto path = temp_path("killed.data");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok());
    auto empty = PerfDataReader::open_file(path);  // readable from the start
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(read_all(empty.value()).samples, 0u);
    write_records(w.value());
    ASSERT_TRUE(w->write(sample(100, 50, 0x6000)));  // buffered, never flushed
  }
  auto r = PerfDataReader::open_file(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(read_all(r.value()).samples, 5u);
  EXPECT_TRUE(r->warnings().empty());
  std::filesystem::remove(path);
}

std::vector<uint8_t> small_file() {
  auto path = temp_path("small.data");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    EXPECT_TRUE(w.ok());
    write_records(w.value());
    EXPECT_TRUE(w->finish(some_features()));
  }
  auto bytes = slurp(path);
  std::filesystem::remove(path);
  return bytes;
}

// A pipe stream by PerfDataWriter: its attrs, then what `write` writes, then finish({}).
std::vector<uint8_t> pipe_stream(const std::function<void(PerfDataWriter&)>& write) {
  auto path = temp_path("stream.pipe");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  {
    auto w = PerfDataWriter::create_pipe(fd, two_events());
    EXPECT_TRUE(w.ok());
    write(w.value());
    EXPECT_TRUE(w->finish({}));
  }
  ::close(fd);
  auto bytes = slurp(path);
  std::filesystem::remove(path);
  return bytes;
}

// `bytes` behind a file descriptor, as `vperf report -i -` reads standard input.
int memory_fd(const std::vector<uint8_t>& bytes) {
  int fd = ::memfd_create("perf-pipe", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  return fd;
}

// Issue 14: a 128 KB pipe stream whose HEADER_TRACING_DATA claims 0xfffffff0 bytes, or whose
// AUXTRACE claims 2^40, made vperf allocate the claim. Past the pipe cap it is an error, with no
// allocation of the claim, whether the record comes among the leading records or later.
TEST(PerfData, PipeRecordsClaimingMoreThanTheCapAreAnError) {
  const std::vector<uint8_t> tail(128 * 1024, 0);
  const std::pair<std::vector<uint8_t>, std::string> claims[] = {
      {test::tracing_data_claiming(0xfffffff0u), "tracing-data-claims-4g"},
      {test::auxtrace_claiming(uint64_t{1} << 40), "auxtrace-claims-2e40"},
      {test::auxtrace_claiming(kMaxPipeRecordBytes - 47), "auxtrace-claims-cap-plus-1"},
      {test::auxtrace_claiming(~uint64_t{0}), "auxtrace-claims-2e64"}};
  for (const auto& [hostile, name] : claims) {
    for (bool after_samples : {false, true}) {
      auto bytes = pipe_stream([&](PerfDataWriter& w) {
        if (after_samples) {
          ASSERT_TRUE(w.write(sample(100, 10, 0x1000)));
          ASSERT_TRUE(w.flush_round());
        }
        ASSERT_TRUE(w.write(hostile));
        ASSERT_TRUE(w.write(tail));
      });
      keep_bytes(bytes, name + (after_samples ? "-after-samples.pipe" : ".pipe"));
      int fd = memory_fd(bytes);
      auto r = PerfDataReader::open_pipe(fd);
      Result<ReadStats> stats = Error{"not read"};
      if (r.ok()) stats = r->read([](const RecordView&) { return true; });
      ::close(fd);
      ASSERT_TRUE(!r.ok() || !stats.ok()) << after_samples;
      const Error& error = r.ok() ? stats.error() : r.error();
      EXPECT_EQ(r.ok(), after_samples) << error.describe();
      EXPECT_NE(error.message.find("bytes, more than the 1024 MiB vperf reads per pipe record"), std::string::npos)
          << error.message;
      EXPECT_EQ(error.message.find('\n'), std::string::npos);
    }
  }
}

// A size under the cap that lies: the record is read as far as the stream goes, a warning says
// where it stopped, and the records before it are delivered.
TEST(PerfData, PipeRecordLyingUnderTheCapReadsWhatArrives) {
  auto bytes = pipe_stream([&](PerfDataWriter& w) {
    write_records(w);
    ASSERT_TRUE(w.write(test::tracing_data_claiming(0x3ffffff0u)));
    ASSERT_TRUE(w.write(std::vector<uint8_t>(128 * 1024, 0)));
  });
  keep_bytes(bytes, "tracing-data-lies-under-cap.pipe");
  int fd = memory_fd(bytes);
  auto r = PerfDataReader::open_pipe(fd);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ReadStats stats;
  EXPECT_EQ(read_all(r.value(), {}, &stats).samples, 5u);
  ::close(fd);
  EXPECT_TRUE(stats.truncated);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_NE(r->warnings()[0].find("HEADER_TRACING_DATA record of 1073741824 bytes"), std::string::npos)
      << r->warnings()[0];
}

// A HEADER_ATTR whose attr says it is smaller than any attr: no sample of the stream can be
// decoded, so the pipe is refused.
TEST(PerfData, PipeAttrWhoseSizeFieldDoesNotFitIsAnError) {
  auto bytes = pipe_stream([](PerfDataWriter&) {});
  // The first record is the first HEADER_ATTR; its attr's size field is at 8 + 4.
  ASSERT_EQ(bytes[kPipeHeaderSize], kRecordHeaderAttr);
  for (uint32_t bad : {8u, 4000u}) {
    std::memcpy(bytes.data() + kPipeHeaderSize + 12, &bad, 4);
    keep_bytes(bytes, "attr-size-" + std::to_string(bad) + ".pipe");
    auto r = PerfDataReader::from_bytes(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("perf_event_attr size field " + std::to_string(bad) + " does not fit"),
              std::string::npos)
        << r.error().message;
  }
}

TEST(PerfData, TruncationAtEveryByteNeverCrashes) {
  auto full = small_file();
  auto complete = PerfDataReader::from_bytes(full);
  ASSERT_TRUE(complete.ok());
  uint64_t data_end = complete->data_offset() + complete->data_size();
  size_t opened = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = PerfDataReader::from_bytes(part);
    if (!r.ok()) continue;
    ++opened;
    ReadStats stats;
    Seen seen = read_all(r.value(), {}, &stats);
    EXPECT_LE(seen.samples, 5u);
    if (n < data_end) {
      EXPECT_FALSE(r->warnings().empty()) << n;  // says the file is short
    }
    if (n >= data_end) {
      EXPECT_EQ(seen.samples, 5u) << n;  // only feature sections are missing
    }
  }
  EXPECT_GT(opened, full.size() / 2);
}

TEST(PerfData, TruncatedPipeReadsWhatIsThere) {
  auto pipe_path = temp_path("cut.pipe");
  int fd = ::open(pipe_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  {
    auto w = PerfDataWriter::create_pipe(fd, two_events());
    ASSERT_TRUE(w.ok());
    write_records(w.value());
    ASSERT_TRUE(w->finish({}));
  }
  ::close(fd);
  auto full = slurp(pipe_path);
  std::filesystem::remove(pipe_path);
  for (size_t n = 0; n < full.size(); ++n) {
    auto r = PerfDataReader::from_bytes(std::vector<uint8_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
    if (!r.ok()) continue;
    Seen seen = read_all(r.value());
    EXPECT_LE(seen.samples, 5u);
  }
}

TEST(PerfData, DataSizeZeroIsReadToTheEndWithAWarning) {
  auto full = small_file();
  // Drop the features and zero data.size, as a `perf record` killed before it finished leaves.
  auto complete = PerfDataReader::from_bytes(full);
  ASSERT_TRUE(complete.ok());
  full.resize(complete->data_offset() + complete->data_size());
  std::memset(full.data() + 48, 0, 8);
  std::memset(full.data() + kHeaderFeaturesOffset, 0, 32);
  auto r = PerfDataReader::from_bytes(full);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(read_all(r.value()).samples, 5u);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_NE(r->warnings()[0].find("data size is 0"), std::string::npos) << r->warnings()[0];
}

TEST(PerfData, CorruptRecordStopsWithOneWarning) {
  auto full = small_file();
  auto complete = PerfDataReader::from_bytes(full);
  ASSERT_TRUE(complete.ok());
  // The third record's size field (comm is 48+... bytes): find it by walking.
  size_t at = complete->data_offset();
  for (int i = 0; i < 2; ++i) {
    uint16_t size;
    std::memcpy(&size, full.data() + at + 6, 2);
    at += size;
  }
  uint16_t bad = 3;
  std::memcpy(full.data() + at + 6, &bad, 2);
  auto r = PerfDataReader::from_bytes(full);
  ASSERT_TRUE(r.ok());
  ReadStats stats;
  Seen seen = read_all(r.value(), {}, &stats);
  EXPECT_TRUE(stats.truncated);
  EXPECT_EQ(seen.samples, 1u);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_NE(r->warnings()[0].find("corrupt record"), std::string::npos) << r->warnings()[0];
}

// perf record -z: what PerfDataWriter::compress writes reads as the records it was given, in
// perf's order across rounds, from a file, a pipe and memory; the COMPRESSED feature says zstd,
// the level and the ring size; perf's twin files are read in tests/integration.
TEST(PerfData, CompressedRecordsReadAsTheRecordsTheyHold) {
  auto plain_path = temp_path("plain.data"), path = temp_path("z.data"), pipe_path = temp_path("z.pipe");
  {
    auto w = PerfDataWriter::create_file(plain_path, two_events());
    ASSERT_TRUE(w.ok());
    write_records(w.value());
    ASSERT_TRUE(w->finish(some_features()));
  }
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->compress(3, 4096 * 128).ok());
    write_records(w.value());
    ASSERT_TRUE(w->finish(some_features()));
    EXPECT_LT(w->data_bytes(), w->uncompressed_bytes() + 2 * 16);  // two COMPRESSED headers at most
  }
  {
    int fd = ::open(pipe_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    auto w = PerfDataWriter::create_pipe(fd, two_events());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->compress(1, 4096 * 128).ok());
    write_records(w.value());
    ASSERT_TRUE(w->finish(some_features()));
    ::close(fd);
  }
  auto plain = PerfDataReader::open_file(plain_path);
  ASSERT_TRUE(plain.ok());
  const Seen expected = read_all(plain.value());
  ASSERT_EQ(expected.samples, 5u);
  auto file = PerfDataReader::open_file(path);
  ASSERT_TRUE(file.ok());
  ReadStats stats;
  const Seen from_file = read_all(file.value(), {}, &stats);
  EXPECT_EQ(from_file.times, expected.times);
  EXPECT_EQ(from_file.events, expected.events);
  EXPECT_EQ(stats.compressed, 2u);  // one per round
  EXPECT_EQ(stats.by_type[kRecordCompressed], 2u);
  EXPECT_TRUE(file->warnings().empty());
  const auto feature = std::find_if(file->features().other.begin(), file->features().other.end(),
                                    [](const RawFeature& f) { return f.feature == kFeatCompressed; });
  ASSERT_NE(feature, file->features().other.end());
  std::vector<uint32_t> words(5);
  ASSERT_EQ(feature->bytes.size(), 20u);
  std::memcpy(words.data(), feature->bytes.data(), 20);
  EXPECT_EQ(words[1], 1u);  // zstd
  EXPECT_EQ(words[2], 3u);  // level
  EXPECT_EQ(words[4], 4096u * 128);
  auto memory = PerfDataReader::from_bytes(slurp(pipe_path));
  ASSERT_TRUE(memory.ok()) << memory.error().describe();
  EXPECT_EQ(read_all(memory.value()).times, expected.times);
  int fd = ::open(pipe_path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto pipe = PerfDataReader::open_pipe(fd);
  ASSERT_TRUE(pipe.ok()) << pipe.error().describe();
  EXPECT_EQ(read_all(pipe.value()).times, expected.times);
  ::close(fd);
  // A killed perf -z leaves data size 0: the features (COMPRESSED among them) are not read, so
  // the queue holds no bytes; the decompressed records are delivered where they stand, each
  // from its own bytes (this once read the compressed bytes at the record's offset).
  std::vector<uint8_t> killed = slurp(path);
  const uint64_t zero = 0;
  std::memcpy(killed.data() + 48, &zero, sizeof zero);  // perf_file_header.data.size
  auto cut = PerfDataReader::from_bytes(killed);
  ASSERT_TRUE(cut.ok()) << cut.error().describe();
  Seen from_cut = read_all(cut.value());
  EXPECT_EQ(from_cut.samples, expected.samples);
  std::vector<uint64_t> sorted = from_cut.times;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint64_t> expected_sorted = expected.times;
  std::sort(expected_sorted.begin(), expected_sorted.end());
  EXPECT_EQ(sorted, expected_sorted);
  for (const auto& p : {plain_path, path, pipe_path}) std::filesystem::remove(p);
}

// Every COMPRESSED record decompresses to at most one ring (the feature's mmap_len), however
// much is written between rounds, as perf's reader needs; perf's own records (TRACING_DATA,
// whose payload follows it) are never compressed.
TEST(PerfData, CompressedRecordsHoldAtMostOneRingAndPerfsOwnRecordsStayPlain) {
  auto path = temp_path("z-small-ring.data");
  constexpr uint32_t kRing = 4096;
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->compress(1, kRing).ok());
    for (uint64_t t = 1; t <= 3000; ++t) {
      ASSERT_TRUE(w->write(sample(100, t, 0x1000 + t)));
      if (t == 1500) {  // one of perf's own records in the middle: TIME_CONV
        std::vector<uint8_t> time_conv(32, 0);
        const perf_event_header header{kRecordTimeConv, 0, 32};
        std::memcpy(time_conv.data(), &header, sizeof header);
        ASSERT_TRUE(w->write(time_conv));
      }
    }
    ASSERT_TRUE(w->flush_round());
    ASSERT_TRUE(w->finish({}));
  }
  auto r = PerfDataReader::open_file(path);
  ASSERT_TRUE(r.ok());
  Result<CompressedRecords> stream = CompressedRecords::open();
  ASSERT_TRUE(stream.ok());
  size_t compressed = 0, inner = 0, plain_time_conv = 0;
  auto stats = r->read(
      [&](const RecordView&) { return true; }, ReadOptions{.ordered = false});
  ASSERT_TRUE(stats.ok());
  // Walk the data section's records and feed each COMPRESSED payload with the ring as the limit.
  const std::vector<uint8_t> bytes = slurp(path);
  for (uint64_t at = r->data_offset(); at + 8 <= r->data_offset() + r->data_size();) {
    uint32_t type = 0;
    uint16_t size = 0;
    std::memcpy(&type, bytes.data() + at, 4);
    std::memcpy(&size, bytes.data() + at + 6, 2);
    ASSERT_GE(size, 8);
    if (type == kRecordTimeConv) ++plain_time_conv;
    if (type == kRecordCompressed) {
      ++compressed;
      Result<void> fed = stream->feed(std::span(bytes).subspan(at + 8, size - 8), kRing, [&](std::span<const uint8_t>) { ++inner; });
      ASSERT_TRUE(fed.ok()) << fed.error().describe();
    }
    at += size;
  }
  EXPECT_GT(compressed, 1u);
  EXPECT_EQ(inner, 3000u);
  EXPECT_EQ(plain_time_conv, 1u);
  EXPECT_EQ(stats->samples, 3000u);
  EXPECT_EQ(stats->by_type[kRecordTimeConv], 1u);
  std::filesystem::remove(path);
}

// A COMPRESSED record that is not zstd: the rest of the compressed stream is skipped with one
// warning (the records around it still read).
TEST(PerfData, UnknownIdsAndCompressedRecordsAreSkippedWithAWarningEach) {
  auto path = temp_path("odd.data");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write(sample(100, 10, 0x1000)));
    ASSERT_TRUE(w->write(sample(555, 11, 0x1000)));  // no such id
    ASSERT_TRUE(w->write(sample(556, 12, 0x1000)));
    perf_event_header compressed{kRecordCompressed, 0, 16};
    std::vector<uint8_t> rec(16, 0);
    std::memcpy(rec.data(), &compressed, sizeof(compressed));
    ASSERT_TRUE(w->write(rec));
    ASSERT_TRUE(w->write(rec));
    std::vector<uint8_t> unknown(24, 0);
    perf_event_header unknown_header{4000, 0, 24};
    std::memcpy(unknown.data(), &unknown_header, sizeof(unknown_header));
    ASSERT_TRUE(w->write(unknown));
    ASSERT_TRUE(w->write(sample(200, 13, 0x1000)));
    ASSERT_TRUE(w->finish({}));
  }
  auto r = PerfDataReader::open_file(path);
  ASSERT_TRUE(r.ok());
  ReadStats stats;
  Seen seen = read_all(r.value(), {}, &stats);
  EXPECT_EQ(seen.samples, 2u);
  EXPECT_EQ(stats.compressed, 2u);
  EXPECT_EQ(stats.bad_records, 3u);  // two samples of no event, and the stream that is not zstd
  EXPECT_EQ(stats.unknown_types, 1u);  // skipped by its size, reading goes on
  EXPECT_EQ(stats.by_type.count(4000), 0u);
  ASSERT_EQ(r->warnings().size(), 3u);
  EXPECT_NE(r->warnings()[0].find("matches no event"), std::string::npos);
  EXPECT_NE(r->warnings()[1].find("compressed data (perf record -z) skipped from here: a COMPRESSED record does not decompress"),
            std::string::npos) << r->warnings()[1];
  EXPECT_NE(r->warnings()[2].find("skipped 1 record of unknown type (the first: type 4000 at offset 0x"),
            std::string::npos)
      << r->warnings()[2];
  std::filesystem::remove(path);
}

// perf counts records of types it does not define ("Found N unknown events"); so does vperf, in
// one warning, and it reads on.
TEST(PerfData, UnknownRecordTypesInAPipeAreCountedInOneWarning) {
  ByteWriter unknown;
  for (uint32_t type : {0u, 22u, 63u, 83u, 4000u}) {
    unknown.u32(type);
    unknown.u16(0);
    unknown.u16(16);
    unknown.u64(0);
  }
  auto bytes = pipe_stream([&](PerfDataWriter& w) {
    ASSERT_TRUE(w.write(sample(100, 10, 0x1000)));
    ASSERT_TRUE(w.write(unknown.data()));
    ASSERT_TRUE(w.write(sample(200, 11, 0x2000)));
  });
  keep_bytes(bytes, "unknown-types.pipe");
  auto r = PerfDataReader::from_bytes(bytes);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ReadStats stats;
  EXPECT_EQ(read_all(r.value(), {}, &stats).samples, 2u);
  EXPECT_EQ(stats.unknown_types, 5u);
  EXPECT_FALSE(stats.truncated);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_NE(r->warnings()[0].find("skipped 5 records of unknown type (the first: type 0 at offset"), std::string::npos)
      << r->warnings()[0];
}

// A file whose attrs are smaller (an older perf) or bigger (a newer perf) than ours.
std::vector<uint8_t> file_with_attr_size(size_t attr_bytes) {
  std::vector<EventAttrEntry> attrs = two_events();
  ByteWriter out;
  out.zeros(kFileHeaderSize);
  uint64_t ids_offset = out.size();
  out.u64(100);
  out.u64(101);
  out.u64(200);
  uint64_t attrs_offset = out.size();
  for (size_t i = 0; i < 2; ++i) {
    perf_event_attr a = attrs[i].attr;
    a.size = static_cast<uint32_t>(attr_bytes);
    std::vector<uint8_t> raw(attr_bytes, 0);
    std::memcpy(raw.data(), &a, std::min(attr_bytes, sizeof(a)));
    out.bytes(raw);
    out.u64(i == 0 ? ids_offset : ids_offset + 16);
    out.u64(i == 0 ? 16 : 8);
  }
  uint64_t data_offset = out.size();
  auto s1 = sample(100, 10, 0x1000);
  auto s2 = sample(200, 11, 0x2000);
  out.bytes(s1);
  out.bytes(s2);
  ByteWriter header;
  header.u64(kPerfMagic2);
  header.u64(kFileHeaderSize);
  header.u64(attr_bytes + 16);
  header.u64(attrs_offset);
  header.u64(2 * (attr_bytes + 16));
  header.u64(data_offset);
  header.u64(s1.size() + s2.size());
  header.zeros(16 + 32);
  std::memcpy(out.data().data(), header.data().data(), kFileHeaderSize);
  return out.take();
}

TEST(PerfData, AttrSizeSkew) {
  for (size_t attr_bytes : {size_t{PERF_ATTR_SIZE_VER5}, sizeof(perf_event_attr), sizeof(perf_event_attr) + 8}) {
    auto r = PerfDataReader::from_bytes(file_with_attr_size(attr_bytes));
    ASSERT_TRUE(r.ok()) << attr_bytes << ": " << r.error().describe();
    ASSERT_EQ(r->attrs().size(), 2u);
    EXPECT_EQ(r->attrs()[0].ids, (std::vector<uint64_t>{100, 101}));
    EXPECT_EQ(r->attrs()[1].ids, (std::vector<uint64_t>{200}));
    EXPECT_EQ(r->attrs()[1].attr.sample_type, kSampleType);
    std::vector<uint64_t> configs;
    auto stats = r->read([&](const RecordView& v) {
      if (v.attr) configs.push_back(v.attr->attr.config);
      return true;
    });
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(configs, (std::vector<uint64_t>{PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK})) << attr_bytes;
  }
}

// small_file() with one u64 of its header or attrs replaced, read from memory.
Result<PerfDataReader> small_file_with(uint64_t offset, uint64_t value) {
  auto bytes = small_file();
  std::memcpy(bytes.data() + offset, &value, sizeof(value));
  keep_bytes(bytes, "damaged-" + std::to_string(offset) + "-" + hex(value) + ".data");
  return PerfDataReader::from_bytes(bytes);
}

uint64_t header_u64(uint64_t offset) {
  auto bytes = small_file();
  uint64_t value;
  std::memcpy(&value, bytes.data() + offset, sizeof(value));
  return value;
}

void expect_damaged(const Result<PerfDataReader>& r, const std::string& what) {
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

// Issue 14: one flipped byte in the attrs section's place made vperf decode the header as an
// attr and report "100% swapper [unknown]" with exit 0. Parts of the file that cannot be where
// the header puts them are errors.
TEST(PerfData, AttrsOverlappingTheHeaderAreAnError) {
  uint64_t attrs_offset = header_u64(kHeaderAttrsOffset);
  ASSERT_EQ(attrs_offset, 0x80u);  // the writer's layout: header, 3 ids, attrs
  expect_damaged(small_file_with(kHeaderAttrsOffset, attrs_offset & ~uint64_t{0xff}),
                 "overlaps the file header (offset 0x0, 104 bytes)");
  expect_damaged(small_file_with(kHeaderAttrsOffset, 8), "overlaps the file header (offset 0x0, 104 bytes)");
}

TEST(PerfData, AttrSizeFieldThatDoesNotFitIsAnError) {
  uint64_t attrs_offset = header_u64(kHeaderAttrsOffset);
  uint64_t type_and_size = uint64_t{PERF_TYPE_SOFTWARE} | (uint64_t{sizeof(perf_event_attr) + 8} << 32);
  expect_damaged(small_file_with(attrs_offset, type_and_size), "attr of event 0: perf_event_attr size field");
  type_and_size = uint64_t{PERF_TYPE_SOFTWARE} | (uint64_t{32} << 32);
  expect_damaged(small_file_with(attrs_offset, type_and_size), "does not fit");
}

TEST(PerfData, AttrsAndIdsOutsideTheirPlaceAreAnError) {
  uint64_t attrs_offset = header_u64(kHeaderAttrsOffset);
  uint64_t ids0 = attrs_offset + sizeof(perf_event_attr);                        // event 0's ids section
  uint64_t ids1 = attrs_offset + 2 * sizeof(perf_event_attr) + 16;               // event 1's
  expect_damaged(small_file_with(ids0, uint64_t{1} << 40), "the ids of event 0 (offset 0x10000000000, 16 bytes) lie outside");
  expect_damaged(small_file_with(ids0 + 8, uint64_t{1} << 62), "lie outside the file");
  expect_damaged(small_file_with(ids0 + 8, 12), "not a whole number of u64");
  expect_damaged(small_file_with(ids1, header_u64(ids0)), "the ids of event 1");  // both events' ids in one place
  expect_damaged(small_file_with(ids1, 0), "overlaps");
  expect_damaged(small_file_with(ids1, attrs_offset), "overlaps the attrs section");
  expect_damaged(small_file_with(kHeaderAttrsOffset + 8, 3 * (sizeof(perf_event_attr) + 16) - 8), "not a whole number");
  expect_damaged(small_file_with(kHeaderAttrsOffset + 8, (sizeof(perf_event_attr) + 16) << 40), "the file is truncated or damaged");
  expect_damaged(small_file_with(kHeaderDataOffset, attrs_offset), "the data section");
}

TEST(PerfData, FeatureSectionsOverlappingAnotherPartAreAnError) {
  auto bytes = small_file();
  auto r = PerfDataReader::from_bytes(bytes);
  ASSERT_TRUE(r.ok());
  uint64_t table = r->data_offset() + r->data_size();
  // The first section (BUILD_ID) over the header, then over the second section.
  uint64_t second_offset;
  std::memcpy(&second_offset, bytes.data() + table + 16, 8);
  expect_damaged(small_file_with(table, 0), "overlaps");
  expect_damaged(small_file_with(table, second_offset), "overlaps");
  expect_damaged(small_file_with(table, table), "the feature table");
  // A section past the end is truncation: left out with a warning, as before.
  auto cut = small_file_with(table, uint64_t{1} << 40);
  ASSERT_TRUE(cut.ok()) << cut.error().describe();
  ASSERT_EQ(cut->warnings().size(), 1u);
  EXPECT_NE(cut->warnings()[0].find("BUILD_ID section"), std::string::npos) << cut->warnings()[0];
}

TEST(PerfData, NotPerfDataIsAnError) {
  EXPECT_FALSE(PerfDataReader::from_bytes({}).ok());
  EXPECT_FALSE(PerfDataReader::from_bytes(std::vector<uint8_t>(200, 0)).ok());
  std::vector<uint8_t> swapped(104, 0);
  uint64_t magic = kPerfMagic2Swapped;
  std::memcpy(swapped.data(), &magic, 8);
  auto r = PerfDataReader::from_bytes(swapped);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("byte order"), std::string::npos);
}

TEST(PerfData, ThisMachineFeatures) {
  HeaderFeatures f = this_machine_features({"vperf", "record"});
  EXPECT_FALSE(f.hostname.empty());
  EXPECT_FALSE(f.osrelease.empty());
  EXPECT_FALSE(f.arch.empty());
  EXPECT_GT(f.nr_cpus_online, 0u);
  EXPECT_GE(f.nr_cpus_available, f.nr_cpus_online);
  EXPECT_GT(f.total_mem_kb, 0u);
  EXPECT_EQ(f.cmdline, (std::vector<std::string>{"vperf", "record"}));
}

// The records of a file ordered on a second thread reach the callback exactly as on one: the
// same records in the same order with the same events, the same warnings in the same order, the
// same counts, and the features a user record changes mid-stream only after the records before
// it were delivered; and a callback that stops at any record stops the reading there.
// A round holds what each CPU's ring buffer gave, each part in time order, with equal times
// within and across parts; what a flush keeps back joins the next round. Whatever way the
// reader sorts, records come out as perf's ordered_events gives them: a round releases what is
// no newer than the round before it ended with, in time order, ties in the order they arrived.
// The model below is that rule written plainly (a stable sort of everything waiting).
TEST(PerfData, RoundsOfOrderedPartsComeOutInPerfsOrder) {
  uint64_t state = 777;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
  struct Written {
    uint64_t time, ip;
  };
  std::vector<std::vector<Written>> rounds;
  uint64_t ip = 0x10000, base = 1000;
  for (int round = 0; round < 40; ++round) {
    std::vector<Written> records;
    const uint64_t parts = 1 + next() % 9;  // 1 to 9 CPUs' worth
    for (uint64_t part = 0; part < parts; ++part) {
      uint64_t time = base + next() % 50;
      for (uint64_t n = next() % 300; n > 0; --n) {
        records.push_back({time, ip++});
        time += next() % 3;  // 0: the same time again
      }
    }
    rounds.push_back(std::move(records));
    base += 200;
  }
  std::vector<uint64_t> expected;
  {
    std::vector<Written> waiting;
    uint64_t limit = 0, newest = 0;
    auto release = [&](uint64_t up_to) {
      std::stable_sort(waiting.begin(), waiting.end(), [](const Written& a, const Written& b) { return a.time < b.time; });
      auto end = std::find_if(waiting.begin(), waiting.end(), [&](const Written& w) { return w.time > up_to; });
      for (auto it = waiting.begin(); it != end; ++it) expected.push_back(it->ip);
      waiting.erase(waiting.begin(), end);
    };
    for (const auto& records : rounds) {
      for (const Written& w : records) newest = std::max(newest, w.time);
      waiting.insert(waiting.end(), records.begin(), records.end());
      release(limit);
      limit = newest;
    }
    release(UINT64_MAX);
  }
  auto write = [&](PerfDataWriter& w) {
    for (const auto& records : rounds) {
      for (const Written& r : records) ASSERT_TRUE(w.write(sample(100 + r.ip % 2, r.time, r.ip)));
      ASSERT_TRUE(w.flush_round());
    }
    ASSERT_TRUE(w.finish(some_features()));
  };
  auto path = temp_path("ordered_parts.data"), pipe_path = temp_path("ordered_parts.pipe");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok());
    write(w.value());
  }
  {
    int fd = ::open(pipe_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    auto w = PerfDataWriter::create_pipe(fd, two_events());
    ASSERT_TRUE(w.ok());
    write(w.value());
    ::close(fd);
  }
  auto ips = [](PerfDataReader& r, ReadOptions options) {
    std::vector<uint64_t> out;
    auto stats = r.read(
        [&](const RecordView& v) {
          if (const auto* s = std::get_if<Sample>(&v.record.body)) out.push_back(s->ip);
          return true;
        },
        options);
    EXPECT_TRUE(stats.ok());
    return out;
  };
  ASSERT_GT(expected.size(), 3000u);
  auto file = PerfDataReader::open_file(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(ips(file.value(), ReadOptions{}), expected);
  int fd = ::open(pipe_path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto pipe = PerfDataReader::open_pipe(fd);
  ASSERT_TRUE(pipe.ok());
  EXPECT_EQ(ips(pipe.value(), ReadOptions{}), expected);  // records read from an fd wait in memory of their own
  ::close(fd);
  std::filesystem::remove(path);
  std::filesystem::remove(pipe_path);
}

// Damage and changes of the header in the middle of many rounds: each skipped once with one
// warning per kind, the feature seen by the records after it, and a read stopped at any record
// has delivered exactly the records before it.
TEST(PerfData, ARoundedFileWithDamageAndAFeatureRecordReadsWholeOrStopped) {
  auto path = temp_path("rounds_damage.data");
  {
    auto w = PerfDataWriter::create_file(path, two_events());
    ASSERT_TRUE(w.ok()) << w.error().describe();
    // Rounds of 1 to 5000 records, out of time order within a round and across rounds, with
    // records of an unknown id, compressed ones and one of an unknown type here and there, and
    // a HOSTNAME feature record in the middle.
    uint64_t state = 12345, time = 1000;
    auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
    for (int round = 0; round < 60; ++round) {
      const uint64_t records = 1 + next() % 5000;
      for (uint64_t i = 0; i < records; ++i) {
        const uint64_t pick = next() % 1000;
        const uint64_t when = time + next() % 3000;
        if (pick == 0) {
          ASSERT_TRUE(w->write(sample(555, when, 0x1000)));  // no such id
        } else if (pick == 1) {
          std::vector<uint8_t> rec(16, 0);
          const perf_event_header compressed{kRecordCompressed, 0, 16};
          std::memcpy(rec.data(), &compressed, sizeof compressed);
          ASSERT_TRUE(w->write(rec));
        } else if (pick == 2) {
          std::vector<uint8_t> rec(24, 0);
          const perf_event_header unknown{4000, 0, 24};
          std::memcpy(rec.data(), &unknown, sizeof unknown);
          ASSERT_TRUE(w->write(rec));
        } else {
          const uint64_t ids[] = {100, 101, 200};
          ASSERT_TRUE(w->write(sample(ids[pick % 3], when, 0x1000 + pick, static_cast<uint32_t>(40 + pick % 7))));
        }
        time += 1;
      }
      if (round == 30) {
        ByteWriter feature;
        feature.u32(kRecordHeaderFeature);
        feature.u16(0);
        feature.u16(8 + 8 + 4 + 8);
        feature.u64(kFeatHostname);
        feature.u32(8);
        for (char c : std::string("newhost", 8)) feature.u8(static_cast<uint8_t>(c));
        ASSERT_TRUE(w->write(feature.data()));
      }
      ASSERT_TRUE(w->flush_round());
    }
    ASSERT_TRUE(w->finish(some_features()));
  }
  struct Delivery {
    std::vector<std::string> lines;  // one per record: offset, type, time, event, the hostname it saw
    std::vector<std::string> warnings;
    ReadStats stats;
  };
  auto deliveries = [&](uint64_t stop_after) {
    Delivery out;
    auto r = PerfDataReader::open_file(path);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return out;
    auto stats = r->read(
        [&](const RecordView& v) {
          out.lines.push_back(std::to_string(v.offset) + " " + std::to_string(v.record.type) + " " + std::to_string(v.record.sample_id.time) +
                              " " + std::to_string(v.attr_index) + " " + r->features().hostname);
          return out.lines.size() < stop_after;
        });
    EXPECT_TRUE(stats.ok());
    if (stats.ok()) out.stats = *stats;
    out.warnings = r->warnings();
    return out;
  };
  const Delivery one = deliveries(UINT64_MAX);
  ASSERT_GT(one.lines.size(), 100000u);
  EXPECT_EQ(one.warnings.size(), 3u);  // unknown id, compressed, unknown type: once each
  EXPECT_EQ(one.stats.rounds, 60u);
  EXPECT_GT(one.stats.bad_records, 0u);
  EXPECT_GT(one.stats.compressed, 0u);
  EXPECT_GT(one.stats.unknown_types, 0u);
  EXPECT_EQ(one.stats.records, one.lines.size());
  EXPECT_NE(std::find_if(one.lines.begin(), one.lines.end(), [](const std::string& l) { return l.ends_with(" testhost"); }), one.lines.end());
  EXPECT_TRUE(one.lines.back().ends_with(" newhost"));
  for (uint64_t stop : {uint64_t{1}, uint64_t{4095}, uint64_t{4096}, uint64_t{70001}, one.lines.size() - 1}) {
    SCOPED_TRACE("stopped after " + std::to_string(stop));
    const Delivery cut = deliveries(stop);
    EXPECT_EQ(cut.lines, std::vector<std::string>(one.lines.begin(), one.lines.begin() + static_cast<std::ptrdiff_t>(stop)));
  }
  std::filesystem::remove(path);
}

// A 64 MiB file read front to back: the pages already delivered leave memory as rounds are
// done, so the reader's resident size grows by a few rounds' worth, not by the file's size.
// Small samples, and samples of 8 KB as --call-graph dwarf records them.
TEST(PerfData, AFileReadFrontToBackDoesNotStayResident) {
  for (const size_t chain_words : {size_t{3}, size_t{1024}}) {
    SCOPED_TRACE(std::to_string(chain_words) + "-word callchains");
    auto path = temp_path("resident.data");
    uint64_t written = 0;
    {
      auto w = PerfDataWriter::create_file(path, two_events());
      ASSERT_TRUE(w.ok()) << w.error().describe();
      for (uint64_t time = 1; w->data_bytes() < (uint64_t{64} << 20); ++time) {
        std::vector<uint8_t> record = sample(100, time, 0x1000 + time);
        if (chain_words > 3) {
          Record big;
          big.type = PERF_RECORD_SAMPLE;
          big.misc = PERF_RECORD_MISC_USER;
          Sample s;
          s.ip = 0x1000 + time;
          s.period = 1000;
          s.callchain.assign(chain_words, 0x1000 + time);
          big.body = s;
          big.sample_id.id = 100;
          big.sample_id.time = time;
          big.sample_id.pid = big.sample_id.tid = 42;
          SampleFormat f;
          f.sample_type = kSampleType;
          f.sample_id_all = true;
          record = build_record(big, &f);
        }
        ASSERT_TRUE(w->write(record));
        ++written;
        if (time % (chain_words > 3 ? 400 : 20000) == 0) {
          ASSERT_TRUE(w->flush_round());
        }
      }
      ASSERT_TRUE(w->flush_round());
      ASSERT_TRUE(w->finish(some_features()));
    }
    auto r = PerfDataReader::open_file(path);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    uint64_t samples = 0, most_resident = 0, last_time = 0;
    const uint64_t before = test::resident_bytes();
    bool ordered = true;
    auto stats = r->read([&](const RecordView& v) {
      if (v.record.type != PERF_RECORD_SAMPLE) return true;
      if (samples++ % (chain_words > 3 ? 200 : 10000) == 0) most_resident = std::max(most_resident, test::resident_bytes());
      ordered = ordered && v.record.sample_id.time >= last_time;
      last_time = v.record.sample_id.time;
      return true;
    });
    ASSERT_TRUE(stats.ok());
    std::filesystem::remove(path);
    EXPECT_EQ(samples, written);
    EXPECT_TRUE(ordered);
    EXPECT_LT(most_resident, before + (uint64_t{24} << 20))
        << "grew by " << ((most_resident - before) >> 20) << " MiB reading a 64 MiB file";
  }
}

}  // namespace
}  // namespace vperf::data
