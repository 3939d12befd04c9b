// vperf report on perf.data input made to hurt (issue 14): sizes the input does not hold, and
// headers whose parts cannot be where they say. The answer is one error line and exit 1, or one
// warning line and the report of what could be read; never an allocation of what a size claims
// (each pipe run has an address-space limit far below the claims) and never an abort.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"
#include "support/lying_records.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
using data::PerfDataWriter;

// Far below the claims (1 GiB and up), well above what vperf report needs for these inputs.
constexpr uint64_t kAddressSpaceLimitKb = 384 * 1024;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                 PERF_SAMPLE_PERIOD;

std::vector<data::EventAttrEntry> one_event() {
  std::vector<data::EventAttrEntry> attrs(1);
  perf_event_attr& a = attrs[0].attr;
  std::memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_type = kSampleType;
  a.sample_id_all = 1;
  a.sample_period = 1000;
  attrs[0].name = "cpu-clock";
  attrs[0].ids = {7};
  return attrs;
}

std::vector<uint8_t> sample(uint64_t time) {
  data::Record r;
  r.type = PERF_RECORD_SAMPLE;
  r.misc = PERF_RECORD_MISC_USER;
  data::Sample s;
  s.ip = 0x401000;
  s.period = 1000;
  r.body = s;
  r.sample_id.id = 7;
  r.sample_id.time = time;
  r.sample_id.pid = r.sample_id.tid = 4242;
  data::SampleFormat f;
  f.sample_type = kSampleType;
  f.sample_id_all = true;
  return data::build_record(r, &f);
}

class HostileInput : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("vperf_hostile_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A pipe stream by vperf's writer: the attr, what `write` writes, then its finish().
  fs::path pipe_file(const std::string& name, const std::function<void(PerfDataWriter&)>& write) {
    fs::path path = dir_ / name;
    std::FILE* file = std::fopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    {
      auto w = PerfDataWriter::create_pipe(::fileno(file), one_event());
      EXPECT_TRUE(w.ok());
      write(w.value());
      EXPECT_TRUE(w->finish({}));
    }
    std::fclose(file);
    return path;
  }

  // `vperf report -i -` with `input` on standard input, in a shell whose address space is
  // limited (setrlimit(RLIMIT_AS) by ulimit -v, inherited by vperf).
  static test::ProgramResult report_pipe_with_limited_memory(const fs::path& input) {
    return test::run_program({"sh", "-c",
                              "ulimit -v " + std::to_string(kAddressSpaceLimitKb) + " && exec " + VPERF_BINARY +
                                  " report --stdio -i - < " + input.string()});
  }

  fs::path dir_;
};

int lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The reproductions of issue 14: a 128 KB stream whose HEADER_TRACING_DATA says 0xfffffff0 bytes
// follow (vperf took 4.2 GB and 11 s), or whose AUXTRACE says 2^40 (std::bad_alloc).
TEST_F(HostileInput, PipeRecordClaimingGigabytesIsOneErrorLine) {
  const std::vector<uint8_t> tail(128 * 1024, 0);
  for (const auto& hostile : {test::tracing_data_claiming(0xfffffff0u), test::auxtrace_claiming(uint64_t{1} << 40)}) {
    fs::path input = pipe_file("claims.pipe", [&](PerfDataWriter& w) {
      ASSERT_TRUE(w.write(sample(10)));
      ASSERT_TRUE(w.write(hostile));
      ASSERT_TRUE(w.write(tail));
    });
    test::ProgramResult r = report_pipe_with_limited_memory(input);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("vperf: error: ")) << r.err;
    EXPECT_NE(r.err.find(" bytes, more than the 1024 MiB vperf reads per pipe record"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(hint: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
  }
}

// Under the cap, a size that lies is read as the bytes come: the run stays inside the limit,
// warns once that the stream ended inside that record, and reports the samples before it.
TEST_F(HostileInput, PipeRecordLyingUnderTheCapCostsWhatArrives) {
  fs::path input = pipe_file("lies.pipe", [&](PerfDataWriter& w) {
    ASSERT_TRUE(w.write(sample(10)));
    ASSERT_TRUE(w.write(sample(11)));
    ASSERT_TRUE(w.flush_round());
    ASSERT_TRUE(w.write(test::tracing_data_claiming(0x3ffffff0u)));
    ASSERT_TRUE(w.write(std::vector<uint8_t>(128 * 1024, 0)));
  });
  test::ProgramResult r = report_pipe_with_limited_memory(input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("vperf: warning: pipe: stream truncated at offset")) << r.err;
  EXPECT_NE(r.err.find("HEADER_TRACING_DATA record of 1073741824 bytes"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("# Samples: 2  of event 'cpu-clock'"), std::string::npos) << r.out;
}

// A file vperf's writer made, with the attrs section moved onto the header by one byte: perf's
// layout cannot hold that, so it is an error, not a report of garbage ("100% swapper").
TEST_F(HostileInput, AttrsOverTheHeaderAreOneErrorLine) {
  fs::path path = dir_ / "damaged.data";
  {
    auto w = PerfDataWriter::create_file(path, one_event());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write(sample(10)));
    ASSERT_TRUE(w->finish({}));
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(data::kHeaderAttrsOffset);
    f.put(0);  // the attrs offset's low byte (the writer puts the attrs at 0x70)
  }
  test::ProgramResult r = test::run_vperf({"report", "--stdio", "-i", path.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("vperf: error: ")) << r.err;
  const std::string attrs_bytes = std::to_string(sizeof(perf_event_attr) + 16);  // one event
  EXPECT_NE(r.err.find("the attrs section (offset 0x0, " + attrs_bytes +
                       " bytes) overlaps the file header (offset 0x0, 104 bytes): the file is damaged"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

// Records of types perf 6.1 does not define: counted in one warning line, the rest reported.
TEST_F(HostileInput, UnknownRecordTypesAreOneWarningLine) {
  std::vector<uint8_t> unknown(16, 0);
  perf_event_header header{4000, 0, 16};
  std::memcpy(unknown.data(), &header, sizeof(header));
  fs::path path = dir_ / "unknown.data";
  {
    auto w = PerfDataWriter::create_file(path, one_event());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write(sample(10)));
    ASSERT_TRUE(w->write(unknown));
    ASSERT_TRUE(w->write(unknown));
    ASSERT_TRUE(w->write(sample(11)));
    ASSERT_TRUE(w->finish({}));
  }
  test::ProgramResult r = test::run_vperf({"report", "--stdio", "-i", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("vperf: warning: ")) << r.err;
  EXPECT_NE(r.err.find("skipped 2 records of unknown type (the first: type 4000 at offset 0x"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("# Samples: 2  of event 'cpu-clock'"), std::string::npos) << r.out;
}

// --- trace.dat (issue 30): the hostile seeds of tests/fuzz/corpus/trace_dat (make-hostile-seeds.py) ---

std::string trace_dat_seed(const std::string& name) { return std::string(VPERF_SOURCE_DIR) + "/tests/fuzz/corpus/trace_dat/" + name; }

// `vperf ARGS...` in a shell whose address space is limited as for the pipe reports above.
test::ProgramResult vperf_with_limited_memory(const std::string& args) {
  return test::run_program({"sh", "-c", "ulimit -v " + std::to_string(kAddressSpaceLimitKb) + " && exec " + VPERF_BINARY + " " + args});
}

// Print fmts that crashed ftrace report (SIGFPE on / 0 and % 0, SIGSEGV on __print_hex of 100 MB,
// vperf's heap on stdout for __print_array of 8 MB; trace-cmd 3.1.6 dies on all five): every
// event is printed, the unsafe ones from their fields, one warning says so, and the exit is 1.
TEST_F(HostileInput, TraceDatFormatsThatCrashPrintingPrintTheFieldsAndExitOne) {
  const test::ProgramResult plain = test::run_vperf({"ftrace", "report", "-i", trace_dat_seed("v6-getppid-stacktrace")});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
  for (const char* name : {"fmt-div-zero", "fmt-mod-zero", "fmt-div-record-zero", "fmt-print-hex-huge", "fmt-print-array-huge"}) {
    SCOPED_TRACE(name);
    const test::ProgramResult r = vperf_with_limited_memory("ftrace report -i " + trace_dat_seed(name));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lines(r.out), lines(plain.out));
    EXPECT_EQ(test::count_lines_with(r.out, "sys_enter_getppid:    [UNSAFE FORMAT] __syscall_nr=110"), 3u) << r.out;
    EXPECT_EQ(lines(r.err), 2) << r.err;
    EXPECT_TRUE(r.err.starts_with("vperf ftrace report: warning: 3 events printed from their fields ([UNSAFE FORMAT]) as "
                                  "libtraceevent cannot print them safely: syscalls:sys_enter_getppid: "))
        << r.err;
    EXPECT_NE(r.err.find("vperf: error: " + trace_dat_seed(name) + ": the report is incomplete (see the warnings above)"), std::string::npos)
        << r.err;
  }
}

// v7 blocks claiming 0x7fffffff decompressed bytes took 4.2 GB, or ended in std::bad_alloc: now
// one error line for a metadata section, inside the address-space limit; a CPU's data chunk ends
// that CPU's data, with a warning, the report of the rest, and exit 1.
TEST_F(HostileInput, TraceDatDecompressionClaimsAreOneErrorLine) {
  const std::string claim = "bytes claims to hold 2147483647 bytes, more than zstd can make of it";
  const test::ProgramResult section = vperf_with_limited_memory("ftrace report -i " + trace_dat_seed("v7-zstd-section-claims-2g"));
  EXPECT_EQ(section.exit_code, 1) << section.err;
  EXPECT_EQ(section.out, "");
  EXPECT_EQ(lines(section.err), 1) << section.err;
  EXPECT_NE(section.err.find(claim + " (hint: "), std::string::npos) << section.err;
  const test::ProgramResult chunk = vperf_with_limited_memory("ftrace report -i " + trace_dat_seed("v7-zstd-chunk-claims-2g"));
  EXPECT_EQ(chunk.exit_code, 1) << chunk.err;
  EXPECT_EQ(chunk.out, "cpus=2\n");
  EXPECT_EQ(lines(chunk.err), 2) << chunk.err;
  EXPECT_TRUE(chunk.err.starts_with("vperf ftrace report: warning: CPU 0: chunk 1 of 1 is unreadable (trace.dat: a zstd block of 99 " + claim))
      << chunk.err;
  for (const std::string& err : {section.err, chunk.err}) EXPECT_EQ(err.find("bad_alloc"), std::string::npos) << err;
}

// A damaged second page: ftrace report and flamegraph both show what the other pages hold, say
// what they skipped, and exit 1 (flamegraph drew what it read and exited 0, saying nothing). A
// page size that is not a power of two is read with header_page's, with a warning (vperf printed
// only "cpus=2" and exited 0; trace-cmd shows what the first page of each CPU holds).
TEST_F(HostileInput, TraceDatReadersSayWhatTheySkippedAndExitOne) {
  const std::string damaged = trace_dat_seed("v6-second-page-damaged");
  const test::ProgramResult plain = test::run_vperf({"ftrace", "report", "-i", trace_dat_seed("v6-getppid-stacktrace")});
  const test::ProgramResult report = test::run_vperf({"ftrace", "report", "-i", damaged});
  EXPECT_EQ(report.exit_code, 1) << report.err;
  EXPECT_EQ(report.out, plain.out);
  const std::string skipped = "damaged pages were skipped: CPU 0: page 1 claims 100000 bytes of data in a 4096-byte page";
  EXPECT_EQ(test::count_lines_with(report.err, skipped), 1u) << report.err;
  const test::ProgramResult graph = test::run_vperf({"flamegraph", "--folded", "-o", "-", "-i", damaged});
  EXPECT_EQ(graph.exit_code, 1) << graph.err;
  const test::ProgramResult whole = test::run_vperf({"flamegraph", "--folded", "-o", "-", "-i", trace_dat_seed("v6-getppid-stacktrace")});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(graph.out, whole.out);  // the three stacks of the readable page
  EXPECT_TRUE(graph.err.starts_with("vperf flamegraph: warning: trace.dat: " + skipped)) << graph.err;
  EXPECT_NE(graph.err.find("the graph is incomplete"), std::string::npos) << graph.err;

  const test::ProgramResult odd = test::run_vperf({"ftrace", "report", "-i", trace_dat_seed("page-size-530001")});
  EXPECT_EQ(odd.exit_code, 0) << odd.err;
  EXPECT_EQ(odd.out, plain.out);
  EXPECT_EQ(odd.err,
            "vperf ftrace report: warning: the file states a page size of 5439489, not a power of two; read with 4096, the size its "
            "header_page describes\n");

  // A format vperf leaves out: its events print as [UNKNOWN EVENT], with warnings, and exit 1.
  const test::ProgramResult left_out = test::run_vperf({"ftrace", "report", "-i", trace_dat_seed("fmt-left-out")});
  EXPECT_EQ(left_out.exit_code, 1) << left_out.err;
  EXPECT_EQ(test::count_lines_with(left_out.out, "[UNKNOWN EVENT]"), 3u) << left_out.out;
  EXPECT_EQ(test::count_lines_with(left_out.err, "cannot parse the format of syscalls:sys_enter_getppid"), 1u) << left_out.err;
  EXPECT_EQ(test::count_lines_with(left_out.err, "3 events have no format in the file that vperf could use"), 1u) << left_out.err;
}

}  // namespace
}  // namespace vperf
