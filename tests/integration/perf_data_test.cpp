// perf.data both ways against Linux perf 6.1 on this machine, on the bundled workload:
//  (a) vperf reads perf's files (file mode and `-o -` pipe mode): the same samples, in the same
//      order, with the same pid/tid/ip/callchain as `perf report -D` and `perf script` show;
//  (b) perf reads vperf's: every record of perf's file re-written by PerfDataWriter (same attrs
//      and features) gives the same `perf report --stdio --sort comm,dso,sym` and `perf script`;
//      likewise a pipe-mode re-write through `perf script -i -`;
//  (c) a writer that dies before finish() leaves a file perf report reads up to the last round.
// VPERF_PERF_DATA_KEEP=DIR keeps the files made here (the fuzz seeds come from it).
#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "support/capability.h"
#include "support/processes.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;
using data::PerfDataReader;
using data::PerfDataWriter;

bool has_perf() { return !test::find_program("perf").empty(); }

class PerfDataTest : public testing::Test {
 protected:
  void SetUp() override {
    VPERF_REQUIRE(has_perf(), "Linux perf on PATH");
    VPERF_REQUIRE(test::running_as_root(), "root (perf record of cpu-clock with kernel callchains)");
    dir_ = fs::path(testing::TempDir()) / ("vperf_perf_data_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (dir_.empty()) return;
    if (const char* keep = std::getenv("VPERF_PERF_DATA_KEEP")) {
      fs::create_directories(keep);
      for (const auto& e : fs::directory_iterator(dir_))
        fs::copy_file(e.path(), fs::path(keep) / e.path().filename(), fs::copy_options::overwrite_existing);
    }
    fs::remove_all(dir_);
  }
  fs::path path(const std::string& name) const { return dir_ / name; }

  // perf record of the workload's spin into `out` ("-" style pipe output goes to a file).
  void record(const std::vector<std::string>& events_and_options, const fs::path& out, bool pipe,
              const std::vector<std::string>& command) {
    std::string cmd = "perf record -q";
    for (const auto& a : events_and_options) cmd += " " + a;
    cmd += pipe ? " -o - " : " -o '" + out.string() + "' ";
    cmd += "--";
    for (const auto& a : command) cmd += " '" + a + "'";
    if (pipe) cmd += " > '" + out.string() + "'";
    auto r = test::run_program({"sh", "-c", cmd});
    ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.err;
  }

  fs::path dir_;
};

// "perf ARGS < file" (pipe mode input) or "perf ARGS -i file".
test::ProgramResult perf_on(const fs::path& file, bool pipe, const std::string& args) {
  std::string cmd = pipe ? "perf " + args + " -i - < '" + file.string() + "'" : "perf " + args + " -i '" + file.string() + "'";
  return test::run_program({"sh", "-c", cmd}, {{"LC_ALL", "C"}});
}

struct SampleKey {
  uint32_t pid = 0, tid = 0;
  uint64_t ip = 0;
  std::vector<uint64_t> chain;
  bool operator==(const SampleKey&) const = default;
};

std::ostream& operator<<(std::ostream& os, const SampleKey& k) {
  os << k.pid << "/" << k.tid << " ip " << std::hex << k.ip << " chain";
  for (uint64_t c : k.chain) os << " " << c;
  return os << std::dec;
}

// Samples as `perf report -D` prints them when it delivers them (in perf's sorted order).
std::vector<SampleKey> parse_dump(const std::string& text) {
  static const std::regex sample_re(R"(PERF_RECORD_SAMPLE\([^)]*\): (-?\d+)/(-?\d+): 0x([0-9a-f]+) )");
  static const std::regex chain_re(R"(^\.\.\.\.\.\s+\d+: ([0-9a-f]+)$)");
  std::vector<SampleKey> out;
  std::istringstream in(text);
  std::string line;
  bool in_chain = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, sample_re)) {
      SampleKey k;
      k.pid = static_cast<uint32_t>(std::stol(m[1]));
      k.tid = static_cast<uint32_t>(std::stol(m[2]));
      k.ip = std::stoull(m[3], nullptr, 16);
      out.push_back(k);
      in_chain = true;
    } else if (in_chain && std::regex_match(line, m, chain_re)) {
      out.back().chain.push_back(std::stoull(m[1], nullptr, 16));
    } else if (line.rfind("... FP chain", 0) != 0) {
      in_chain = false;
    }
  }
  return out;
}

// `perf script -F pid,tid,ip` with callchains: "pid/tid" then one ip per line (map-relative;
// in pipe mode perf adds the symbol after it).
struct ScriptSample {
  uint32_t pid = 0, tid = 0;
  std::vector<uint64_t> ips;
};
std::vector<ScriptSample> parse_script(const std::string& text) {
  static const std::regex head_re(R"(^\s*(\d+)/(\d+)\s*$)");
  static const std::regex ip_re(R"(^\s+([0-9a-f]+)(\s.*)?$)");  // pipe mode adds symbols
  std::vector<ScriptSample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, head_re)) {
      out.push_back({static_cast<uint32_t>(std::stoul(m[1])), static_cast<uint32_t>(std::stoul(m[2])), {}});
    } else if (!out.empty() && std::regex_match(line, m, ip_re)) {
      out.back().ips.push_back(std::stoull(m[1], nullptr, 16));
    }
  }
  return out;
}

std::vector<SampleKey> our_samples(PerfDataReader& reader, data::ReadStats* stats_out = nullptr) {
  std::vector<SampleKey> out;
  auto stats = reader.read([&](const data::RecordView& v) {
    if (v.record.type != PERF_RECORD_SAMPLE) return true;
    const auto& s = std::get<data::Sample>(v.record.body);
    out.push_back({v.record.sample_id.pid, v.record.sample_id.tid, s.ip, s.callchain});
    return true;
  });
  EXPECT_TRUE(stats.ok());
  if (stats.ok() && stats_out) *stats_out = *stats;
  return out;
}

// Callchain entries perf prints: all but the PERF_CONTEXT_* markers.
std::vector<uint64_t> printed_chain(const SampleKey& k) {
  std::vector<uint64_t> ips;
  for (uint64_t ip : k.chain)
    if (ip < static_cast<uint64_t>(-4095)) ips.push_back(ip);
  return ips;
}

void expect_same_as_perf(const fs::path& file, bool pipe, std::vector<SampleKey> ours) {
  auto dump = perf_on(file, pipe, "report -D");
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::vector<SampleKey> perfs = parse_dump(dump.out);
  ASSERT_GT(perfs.size(), 100u);
  ASSERT_EQ(ours.size(), perfs.size());
  for (size_t i = 0; i < ours.size(); ++i) ASSERT_EQ(ours[i], perfs[i]) << "sample " << i;

  auto script = perf_on(file, pipe, "script -F pid,tid,ip");
  ASSERT_EQ(script.exit_code, 0) << script.err;
  auto printed = parse_script(script.out);
  ASSERT_EQ(printed.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(printed[i].pid, ours[i].pid) << i;
    EXPECT_EQ(printed[i].tid, ours[i].tid) << i;
    auto chain = printed_chain(ours[i]);
    ASSERT_EQ(printed[i].ips.size(), chain.size()) << "sample " << i << ": " << ours[i];
    // perf script prints user addresses relative to their mapping (page offsets agree).
    for (size_t j = 0; j < chain.size(); ++j) EXPECT_EQ(printed[i].ips[j] & 0xfff, chain[j] & 0xfff) << i << "/" << j;
  }
}

const std::vector<std::string> kCpuClock = {"-e", "cpu-clock", "-F", "999", "-g"};
const std::vector<std::string> kSpin = {VPERF_WORKLOAD, "spin", "300"};

TEST_F(PerfDataTest, ReadsPerfsFile) {
  fs::path file = path("perf-cpu-clock.data");
  record(kCpuClock, file, false, kSpin);
  auto reader = PerfDataReader::open_file(file);
  ASSERT_TRUE(reader.ok()) << reader.error().describe();
  ASSERT_EQ(reader->attrs().size(), 1u);
  EXPECT_EQ(reader->attrs()[0].name, "cpu-clock");
  EXPECT_FALSE(reader->features().hostname.empty());
  EXPECT_FALSE(reader->features().cmdline.empty());
  EXPECT_FALSE(reader->features().build_ids.empty());
  EXPECT_TRUE(reader->warnings().empty()) << reader->warnings()[0];
  data::ReadStats stats;
  auto ours = our_samples(reader.value(), &stats);
  EXPECT_EQ(stats.bad_records, 0u);
  EXPECT_GT(stats.rounds, 0u);
  expect_same_as_perf(file, false, ours);
}

TEST_F(PerfDataTest, ReadsPerfsPipe) {
  fs::path file = path("perf-cpu-clock.pipe");
  record(kCpuClock, file, true, kSpin);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto reader = PerfDataReader::open_pipe(fd);
  ASSERT_TRUE(reader.ok()) << reader.error().describe();
  ASSERT_EQ(reader->attrs().size(), 1u);
  auto ours = our_samples(reader.value());
  ::close(fd);
  EXPECT_EQ(reader->features().hostname.empty(), false);  // HEADER_FEATURE records
  EXPECT_TRUE(reader->warnings().empty()) << reader->warnings()[0];
  expect_same_as_perf(file, true, ours);
}

// How a re-writing child dies: after `samples` samples (flush_round() after every 50), with one
// more record written but not flushed; it reports the samples flushed so far on `report_fd`.
struct DieAfter {
  uint64_t samples = 0;
  int report_fd = -1;
};

// Every record of `in`, re-written by PerfDataWriter with the same attrs and features.
void rewrite(const fs::path& in, bool in_pipe, const fs::path& out, bool out_pipe,
             std::optional<DieAfter> die = std::nullopt) {
  auto reader = [&]() -> Result<PerfDataReader> {
    if (!in_pipe) return PerfDataReader::open_file(in);
    return PerfDataReader::from_bytes([&] {
      std::vector<uint8_t> bytes(fs::file_size(in));
      int fd = ::open(in.c_str(), O_RDONLY | O_CLOEXEC);
      EXPECT_EQ(::read(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
      ::close(fd);
      return bytes;
    }());
  }();
  ASSERT_TRUE(reader.ok()) << reader.error().describe();
  int out_fd = -1;
  auto writer = [&]() -> Result<PerfDataWriter> {
    if (!out_pipe) return PerfDataWriter::create_file(out, reader->attrs());
    out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    return PerfDataWriter::create_pipe(out_fd, reader->attrs());
  }();
  ASSERT_TRUE(writer.ok()) << writer.error().describe();
  bool ok = true;
  uint64_t samples = 0, flushed = 0;
  auto stats = reader->read(
      [&](const data::RecordView& v) {
        switch (v.record.type) {
          case data::kRecordHeaderAttr:      // the writer writes its own
          case data::kRecordHeaderFeature:   // finish() writes them from the features
          case data::kRecordHeaderBuildId:   // likewise
            return true;
          case data::kRecordFinishedRound:
            ok = ok && writer->flush_round().ok();
            flushed = samples;
            return true;
          default:
            if (die && samples == die->samples) {
              (void)writer->write(v.bytes);  // a record that never reaches the file
              ssize_t n = ::write(die->report_fd, &flushed, sizeof(flushed));
              ::_exit(n == sizeof(flushed) ? 0 : 2);
            }
            ok = ok && writer->write(v.bytes).ok();
            if (v.record.type == PERF_RECORD_SAMPLE && ++samples % 50 == 0 && die) {
              ok = ok && writer->flush_round().ok();
              flushed = samples;
            }
            return true;
        }
      },
      data::ReadOptions{.ordered = false});
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE(ok);
  ASSERT_TRUE(writer->finish(reader->features()));
  if (out_fd >= 0) ::close(out_fd);
}

// --no-children: perf report turns "children" on only when it sees callchains in the attrs
// before it starts, which a pipe (attrs as records) never lets it; say it so both agree.
std::string report(const fs::path& file, bool pipe) {
  auto r = perf_on(file, pipe, "report --stdio --no-children --sort comm,dso,sym");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // perf ends its table with a tip picked at random, between two "#" lines; it is not part of
  // the report (vperf prints none).
  return std::regex_replace(r.out, std::regex(R"(#\n# \(Tip: [^\n]*\n#\n)"), "");
}

TEST_F(PerfDataTest, PerfReadsWhatVperfWrites) {
  fs::path orig = path("perf-cpu-clock.data");
  fs::path copy = path("vperf-rewrite.data");
  record(kCpuClock, orig, false, kSpin);
  rewrite(orig, false, copy, false);
  std::string want = report(orig, false);
  EXPECT_NE(want.find("# Samples:"), std::string::npos);
  EXPECT_NE(want.find("spin"), std::string::npos);  // the workload's functions resolve
  EXPECT_EQ(report(copy, false), want);
  auto script_orig = perf_on(orig, false, "script");
  auto script_copy = perf_on(copy, false, "script");
  EXPECT_EQ(script_copy.exit_code, 0) << script_copy.err;
  EXPECT_EQ(script_copy.out, script_orig.out);
  auto header = perf_on(copy, false, "report --header-only");
  EXPECT_NE(header.out.find("# hostname :"), std::string::npos) << header.out;
  EXPECT_NE(header.out.find("# event : name = cpu-clock"), std::string::npos) << header.out;
  EXPECT_EQ(header.err.find("WARNING"), std::string::npos) << header.err;
  auto ids = perf_on(copy, false, "buildid-list");
  EXPECT_EQ(ids.out, perf_on(orig, false, "buildid-list").out);
}

TEST_F(PerfDataTest, PerfReadsVperfsPipe) {
  fs::path orig = path("perf-cpu-clock.data");
  fs::path copy = path("vperf-rewrite.pipe");
  record(kCpuClock, orig, false, kSpin);
  rewrite(orig, false, copy, true);
  auto script_orig = perf_on(orig, false, "script");
  auto script_copy = perf_on(copy, true, "script");
  EXPECT_EQ(script_copy.exit_code, 0) << script_copy.err;
  EXPECT_EQ(script_copy.err.find("unexpected end"), std::string::npos) << script_copy.err;
  EXPECT_EQ(script_copy.out, script_orig.out);
  EXPECT_EQ(report(copy, true), report(orig, false));
}

// perf record -z: vperf reads perf's compressed file and pipe (the records of its COMPRESSED
// records, one zstd stream) as perf does, sample for sample, and its report --stats is perf's.
TEST_F(PerfDataTest, ReadsPerfsCompressedFileAndPipe) {
  std::vector<std::string> compressed = kCpuClock;
  compressed.push_back("-z");
  for (bool pipe : {false, true}) {
    SCOPED_TRACE(pipe ? "pipe" : "file");
    fs::path file = path(pipe ? "perf-z.pipe" : "perf-z.data");
    record(compressed, file, pipe, kSpin);
    int fd = pipe ? ::open(file.c_str(), O_RDONLY | O_CLOEXEC) : -1;
    auto reader = pipe ? PerfDataReader::open_pipe(fd) : PerfDataReader::open_file(file);
    ASSERT_TRUE(reader.ok()) << reader.error().describe();
    data::ReadStats stats;
    auto ours = our_samples(reader.value(), &stats);
    if (fd >= 0) ::close(fd);
    EXPECT_GT(stats.compressed, 0u);
    EXPECT_TRUE(reader->warnings().empty()) << reader->warnings()[0];
    expect_same_as_perf(file, pipe, ours);
  }
  const fs::path file = path("perf-z.data");
  auto mine = test::run_vperf({"report", "--stats", "-i", file.string()});
  EXPECT_EQ(mine.out, perf_on(file, false, "report --stats").out);
  EXPECT_NE(mine.out.find("COMPRESSED events:"), std::string::npos) << mine.out;
}

// vperf record -z: perf reads vperf's compressed file and pipe and reports them as vperf does;
// the COMPRESSED feature says zstd and the level asked for.
TEST_F(PerfDataTest, PerfReadsVperfsCompressedRecording) {
  for (bool pipe : {false, true}) {
    SCOPED_TRACE(pipe ? "pipe" : "file");
    const fs::path file = path(pipe ? "vperf-z.pipe" : "vperf-z.data");
    std::string cmd = std::string(VPERF_BINARY) + " record -q --compression-level=5 -e cpu-clock -F 999 -g -o " +
                      (pipe ? "-" : "'" + file.string() + "'") + " -- " + VPERF_WORKLOAD + " spin 300";
    if (pipe) cmd += " > '" + file.string() + "'";
    auto recorded = test::run_program({"sh", "-c", cmd});
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
    const std::string perfs = report(file, pipe);
    EXPECT_NE(perfs.find("spin"), std::string::npos) << perfs;
    std::string in = pipe ? "-i - < '" + file.string() + "'" : "-i '" + file.string() + "'";
    auto mine = test::run_program({"sh", "-c", std::string(VPERF_BINARY) + " report --stdio --no-children --sort comm,dso,sym " + in});
    EXPECT_EQ(mine.out, perfs);
    if (!pipe) {
      // A one-page ring (-m 1): each COMPRESSED record holds at most what perf sizes its
      // buffer for (the ring), or perf cannot decompress it.
      const fs::path small = path("vperf-z-small-ring.data");
      auto small_ring = test::run_program({VPERF_BINARY, "record", "-q", "-z", "-m", "1", "-e", "cpu-clock", "-F", "999", "-o",
                                           small.string(), VPERF_WORKLOAD, "spin", "100"});
      ASSERT_EQ(small_ring.exit_code, 0) << small_ring.err;
      auto small_stats = perf_on(small, false, "report --stats");
      EXPECT_EQ(small_stats.err.find("decompress"), std::string::npos) << small_stats.err;
      EXPECT_NE(small_stats.out.find("SAMPLE events:"), std::string::npos) << small_stats.out;
      auto header = perf_on(file, false, "report --header-only");
      EXPECT_NE(header.out.find("# compressed : Zstd, level = 5, ratio = "), std::string::npos) << header.out;
      EXPECT_NE(perf_on(file, false, "report --stats").out.find("COMPRESSED events:"), std::string::npos);
    }
  }
}

// vperf inject against perf inject on the same recordings: -b from a pipe to a pipe and to a
// file gives the samples perf's gives (perf script) and its build-id list of files; a
// compressed file comes out expanded, as perf inject expands it.
TEST_F(PerfDataTest, InjectIsPerfInject) {
  const fs::path pipe = path("perf.pipe");
  record(kCpuClock, pipe, true, kSpin);
  auto sh = [](const std::string& cmd) {
    test::ProgramResult r = test::run_program({"sh", "-c", cmd}, {{"LC_ALL", "C"}});
    EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.err;
    return r;
  };
  for (bool to_pipe : {true, false}) {
    SCOPED_TRACE(to_pipe ? "to a pipe" : "to a file");
    std::map<std::string, fs::path> out;
    for (const std::string& tool : {std::string("vperf"), std::string("perf")}) {
      out[tool] = path(tool + (to_pipe ? "-injected.pipe" : "-injected.data"));
      const std::string binary = tool == "vperf" ? std::string(VPERF_BINARY) : "perf";
      sh(binary + " inject -b -i - " + (to_pipe ? "" : "-o '" + out[tool].string() + "'") + " < '" + pipe.string() + "'" +
         (to_pipe ? " > '" + out[tool].string() + "'" : ""));
    }
    EXPECT_EQ(perf_on(out["vperf"], to_pipe, "script").out, perf_on(out["perf"], to_pipe, "script").out);
    // perf inject writes the kernel's entry with an empty build-id; vperf writes none for the
    // kernel (session/record_build_ids.h), and perf buildid-list shows a file's hit kernel
    // without one anyway: the files' lines are compared.
    // Compared as sets: which file a run's first samples land in is the scheduler's (a loaded
    // run once had its first sample in the workload, not ld.so), and the order perf lists
    // them in is not always the first-hit order vperf writes.
    auto files_of = [&](const fs::path& file) {
      std::istringstream lines(
          std::regex_replace(perf_on(file, to_pipe, "buildid-list").out, std::regex(R"(\s*\[kernel\.kallsyms\]\n)"), ""));
      std::set<std::string> listed;
      for (std::string line; std::getline(lines, line);) listed.insert(line);
      return listed;
    };
    const std::set<std::string> ids = files_of(out["perf"]);
    EXPECT_TRUE(std::any_of(ids.begin(), ids.end(), [](const std::string& l) { return l.ends_with(VPERF_WORKLOAD); }));
    EXPECT_EQ(files_of(out["vperf"]), ids);
  }

  std::vector<std::string> compressed = kCpuClock;
  compressed.push_back("-z");
  const fs::path z = path("perf-z.data"), expanded = path("vperf-expanded.data");
  record(compressed, z, false, kSpin);
  sh(std::string(VPERF_BINARY) + " inject -i '" + z.string() + "' -o '" + expanded.string() + "'");
  EXPECT_EQ(perf_on(expanded, false, "report --stats").out.find("COMPRESSED"), std::string::npos);
  EXPECT_EQ(perf_on(expanded, false, "script").out, perf_on(z, false, "script").out);
}

// inject --jit on a recording of vperf-workload's JIT (jitdump: two functions, jit_hot run three
// rounds for each of jit_cold, named in ./jit-PID.dump): perf inject --jit's output and vperf's
// give the same perf script and perf report, each tool reads the other's (perf's ELF files
// through vperf report, vperf's through perf report), and the names are the dump's with the
// hot function's share about three times the cold one's. A recording not timed by
// CLOCK_MONOTONIC is refused in one line, with no output and no ELF file left.
TEST_F(PerfDataTest, InjectJitNamesTheDumpsFunctionsAsPerfInjectDoes) {
  const fs::path recording = path("jit.data");
  auto in_dir = [&](const std::string& command) {
    test::ProgramResult r = test::run_program({"sh", "-c", "cd '" + dir_.string() + "' && " + command}, {{"LC_ALL", "C"}});
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    return r.out;
  };
  in_dir(std::string(VPERF_BINARY) + " record -q -k mono -e cpu-clock -o jit.data -- " + VPERF_WORKLOAD + " jitdump 300");
  const std::string report = " report --stdio -q --no-children --sort dso,sym -i ";
  in_dir("perf inject --jit -i jit.data -o perf-jit.data");
  const std::string perf_report = in_dir("perf" + report + "perf-jit.data");
  const std::string perf_script = in_dir("perf script -i perf-jit.data");
  EXPECT_EQ(in_dir(std::string(VPERF_BINARY) + report + "perf-jit.data"), perf_report) << "vperf reads perf's ELF files";
  // vperf's ELF files replace perf's (the same names, beside the dump).
  in_dir(std::string(VPERF_BINARY) + " inject --jit -i jit.data -o vperf-jit.data");
  EXPECT_EQ(in_dir("perf" + report + "vperf-jit.data"), perf_report) << "perf reads vperf's ELF files";
  EXPECT_EQ(in_dir("perf script -i vperf-jit.data"), perf_script);
  EXPECT_EQ(in_dir(std::string(VPERF_BINARY) + report + "vperf-jit.data"), perf_report);
  std::smatch hot, cold;
  ASSERT_TRUE(std::regex_search(perf_report, hot, std::regex(R"(([0-9.]+)%\s+jitted-[0-9]+-0\.so\s+\[\.\] jit_hot)"))) << perf_report;
  ASSERT_TRUE(std::regex_search(perf_report, cold, std::regex(R"(([0-9.]+)%\s+jitted-[0-9]+-1\.so\s+\[\.\] jit_cold)"))) << perf_report;
  const double ratio = std::stod(hot[1]) / std::stod(cold[1]);
  EXPECT_GT(ratio, 2.0) << perf_report;
  EXPECT_LT(ratio, 4.5) << perf_report;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.path().filename().string().starts_with("jitted-")) fs::remove(e.path());

  in_dir(std::string(VPERF_BINARY) + " record -q -e cpu-clock -o perf-clock.data -- " + VPERF_WORKLOAD + " jitdump 20");
  test::ProgramResult refused =
      test::run_program({"sh", "-c", "cd '" + dir_.string() + "' && " + VPERF_BINARY + " inject --jit -i perf-clock.data -o refused.data"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_NE(refused.err.find("-k mono"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(path("refused.data")));
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_FALSE(e.path().filename().string().starts_with("jitted-")) << e.path();
}

// Without -i, report and script read standard input when it is a pipe, as perf's do
// (perf record -o - CMD | vperf report), and perf.data otherwise.
TEST_F(PerfDataTest, ReportAndScriptReadAPipeOnStandardInputWithoutDashI) {
  const fs::path pipe = path("perf.pipe");
  record(kCpuClock, pipe, true, kSpin);
  for (const std::string& command : {std::string("report --stdio --no-children --sort comm,dso,sym"), std::string("script")}) {
    const std::string vperf = std::string(VPERF_BINARY) + " " + command;
    test::ProgramResult piped = test::run_program({"sh", "-c", "cat '" + pipe.string() + "' | " + vperf});
    test::ProgramResult given = test::run_program({"sh", "-c", vperf + " -i - < '" + pipe.string() + "'"});
    EXPECT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_FALSE(piped.out.empty());
    EXPECT_EQ(piped.out, given.out) << command;
  }
  // Not a pipe (a file or /dev/null): perf.data in the working directory.
  test::ProgramResult from_file = test::run_program({"sh", "-c", "cd '" + dir_.string() + "' && " + VPERF_BINARY + " report < '" + pipe.string() + "'"});
  EXPECT_NE(from_file.err.find("cannot read perf.data"), std::string::npos) << from_file.err;
}

// inject's bad input: one line, exit 1, no output file left; -o naming the input is refused
// before anything is written (the input stays whole).
TEST_F(PerfDataTest, InjectMistakesAreOneLine) {
  const fs::path recording = path("same.data");
  record(kCpuClock, recording, false, kSpin);
  const auto size = fs::file_size(recording);
  test::ProgramResult same = test::run_program({VPERF_BINARY, "inject", "-i", recording.string(), "-o", recording.string()});
  EXPECT_EQ(same.exit_code, 1) << same.err;
  EXPECT_EQ(std::count(same.err.begin(), same.err.end(), '\n'), 1) << same.err;
  EXPECT_EQ(fs::file_size(recording), size);
  const fs::path out = path("never.data");
  for (const std::string& cmd : {std::string(VPERF_BINARY) + " inject -b -o '" + out.string() + "' < /dev/null",
                                 std::string(VPERF_BINARY) + " inject -i '" + path("missing.data").string() + "' -o '" + out.string() + "'"}) {
    test::ProgramResult r = test::run_program({"sh", "-c", cmd});
    EXPECT_EQ(r.exit_code, 1) << cmd << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out)) << cmd;
  }
}

// record -z of a tracepoint into a pipe: the tracing data (a record whose payload follows it)
// goes out uncompressed, as perf writes it, and perf script reads the pipe. Recorded on every
// CPU (-a), the workload's exit is a sched_switch (a dead task schedules once more).
TEST_F(PerfDataTest, CompressedTracepointPipeKeepsItsTracingDataPlain) {
  VPERF_REQUIRE(test::has_tracefs() && test::running_as_root(), "tracefs and root");
  const fs::path file = path("vperf-z-sched.pipe");
  auto recorded = test::run_program({"sh", "-c", std::string(VPERF_BINARY) + " record -q -z -a -e sched:sched_switch -o - -- " +
                                                     VPERF_WORKLOAD + " getppid 1 > '" + file.string() + "'"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  auto script = perf_on(file, true, "script");
  EXPECT_EQ(script.exit_code, 0) << script.err;
  EXPECT_NE(script.out.find("sched:sched_switch"), std::string::npos) << script.out << script.err;
  EXPECT_EQ(test::run_program({"sh", "-c", std::string(VPERF_BINARY) + " script -i - < '" + file.string() + "'"}).out, script.out);
}

TEST_F(PerfDataTest, TracepointPipeRewriteKeepsTracingData) {
  VPERF_REQUIRE(test::has_tracefs(), "tracefs");
  fs::path orig = path("perf-sched-switch.pipe");
  fs::path copy = path("vperf-sched-switch-rewrite.pipe");
  record({"-e", "sched:sched_switch"}, orig, true, {VPERF_WORKLOAD, "sleep", "20"});
  rewrite(orig, true, copy, true);
  auto want = perf_on(orig, true, "script");
  ASSERT_EQ(want.exit_code, 0) << want.err;
  EXPECT_NE(want.out.find("sched_switch"), std::string::npos);
  EXPECT_EQ(perf_on(copy, true, "script").out, want.out);
}

TEST_F(PerfDataTest, KilledWriterLeavesAFilePerfReads) {
  fs::path orig = path("perf-cpu-clock.data");
  fs::path killed = path("vperf-killed.data");
  record(kCpuClock, orig, false, kSpin);
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(report[0]);
    rewrite(orig, false, killed, false, DieAfter{175, report[1]});
    ::_exit(1);  // fewer than 175 samples: not the test's premise
  }
  ::close(report[1]);
  uint64_t flushed = 0;
  ssize_t got = ::read(report[0], &flushed, sizeof(flushed));
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "perf's file has fewer than 175 samples";
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof(flushed)));
  EXPECT_GE(flushed, 150u);

  auto reader = PerfDataReader::open_file(killed);
  ASSERT_TRUE(reader.ok()) << reader.error().describe();
  data::ReadStats stats;
  auto ours = our_samples(reader.value(), &stats);
  EXPECT_EQ(ours.size(), flushed);
  EXPECT_TRUE(reader->warnings().empty()) << reader->warnings()[0];

  auto r = perf_on(killed, false, "report --stdio --sort comm,dso,sym");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(# Samples: (\d+) +of event 'cpu-clock')"))) << r.out;
  EXPECT_EQ(std::stoul(m[1]), ours.size());
  auto script = perf_on(killed, false, "script -F pid,tid,ip");
  EXPECT_EQ(parse_script(script.out).size(), ours.size());
}

// A `perf record` killed with SIGKILL leaves data.size = 0 in the header. perf 6.1 warns and
// reads no samples from it; vperf reads every whole record to the end of the file, with one
// warning saying why.
TEST_F(PerfDataTest, ReadsAKilledPerfRecordToTheEnd) {
  fs::path file = path("perf-killed.data");
  // perf and its workload in a process group of their own, killed together once perf has
  // written 32 KiB: well over 50 samples of ~150 bytes after the records it synthesizes first.
  pid_t recorder = ::fork();
  ASSERT_GE(recorder, 0);
  if (recorder == 0) {
    ::setpgid(0, 0);
    ::execlp("perf", "perf", "record", "-q", "-m", "1", "-e", "cpu-clock", "-F", "999", "-g", "-o", file.c_str(), "--",
             VPERF_WORKLOAD, "spin", "30000", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(recorder, recorder);
  const bool wrote = test::wait_until(
      [&] {
        std::error_code ec;
        return fs::file_size(file, ec) >= 32 * 1024 && !ec;
      },
      std::chrono::seconds(30));
  ::kill(-recorder, SIGKILL);
  ASSERT_EQ(::waitpid(recorder, nullptr, 0), recorder);
  ASSERT_TRUE(wrote) << "perf record wrote less than 32 KiB in 30 s";
  auto reader = PerfDataReader::open_file(file);
  ASSERT_TRUE(reader.ok()) << reader.error().describe();
  data::ReadStats stats;
  auto ours = our_samples(reader.value(), &stats);
  EXPECT_GT(ours.size(), 50u);
  EXPECT_EQ(stats.bad_records, 0u);
  ASSERT_GE(reader->warnings().size(), 1u);
  EXPECT_NE(reader->warnings()[0].find("data size is 0"), std::string::npos) << reader->warnings()[0];
  auto perf = perf_on(file, false, "report --stdio");
  EXPECT_NE(perf.err.find("data size field is 0"), std::string::npos) << perf.err;
}

}  // namespace
}  // namespace vperf
