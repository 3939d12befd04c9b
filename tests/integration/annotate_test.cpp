// vperf annotate on a real recording of `vperf-workload spin`, against the tools perf annotate
// is built from and perf annotate itself:
//  - the instructions of spin_leaf_hash/spin_leaf_math (addresses, mnemonics, operands) against
//    `objdump -d --no-show-raw-insn` of the workload for the symbol's range;
//  - per-instruction sample counts against `perf script -F ip,sym,symoff` tallied by offset, and
//    the percentages against `perf annotate --stdio -s SYMBOL` on the same file (within 0.01);
//  - the source line shown before each instruction against `addr2line -e workload ADDRESS`,
//    and its text against that line of spin.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"
#include "cli/cmd_annotate.h"

namespace vperf {
namespace {

struct Row {
  double percent = 0;
  uint64_t address = 0;
  std::string mnemonic;
  std::string operands;
  int source_line = 0;  // the last source row above it (0: none)
  std::string source_text;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Instruction rows of perf annotate --stdio's layout (vperf's and perf's), in order.
std::vector<Row> annotate_rows(const std::string& text) {
  static const std::regex instruction(R"(^ +([0-9.]+) : +([0-9a-f]+):   (\S+)(?: +(.*))?$)");
  static const std::regex source(R"(^ +: (\d+) +(.*)$)");
  std::vector<Row> rows;
  int line = 0;
  std::string source_text;
  std::smatch m;
  for (const std::string& l : lines_of(text)) {
    if (std::regex_match(l, m, instruction)) {
      rows.push_back(Row{std::stod(m[1]), std::stoull(m[2], nullptr, 16), m[3], m[4], line, source_text});
    } else if (std::regex_match(l, m, source)) {
      line = std::stoi(m[1]);
      source_text = m[2];
    }
  }
  return rows;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// objdump's spelling differs from vperf's (capstone's, rewritten to objdump's) only in the
// comment after a RIP-relative operand: objdump names data symbols there ("<_IO_stdin_used+0x3f8>"),
// vperf knows only function symbols. Drop the name, keep the address.
std::string without_data_symbol(std::string operands) {
  size_t hash = operands.find("        # ");
  if (hash != std::string::npos) {
    size_t angle = operands.find(" <", hash);
    if (angle != std::string::npos) operands.erase(angle);
  }
  return trim(operands);
}

class AnnotateCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new test::TempTree();
    data_ = (scratch_->root() / "spin.data").string();
    test::ProgramResult rec = test::run_vperf(
        {"record", "-e", "cpu-clock", "-F", "2999", "-o", data_, "--", VPERF_WORKLOAD, "spin", "300"});
    record_error_ = rec.exit_code == 0 ? "" : rec.err;
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  void SetUp() override {
    VPERF_REQUIRE(!test::find_program("perf").empty(), "Linux perf as the reference");
    VPERF_REQUIRE(!test::find_program("objdump").empty(), "objdump (binutils)");
    ASSERT_TRUE(record_error_.empty()) << "vperf record failed: " << record_error_;
  }

  // [start, end) of `symbol` in the workload, from nm.
  static std::pair<uint64_t, uint64_t> symbol_range(const std::string& symbol) {
    test::ProgramResult nm = test::run_program({"nm", "-S", "--defined-only", VPERF_WORKLOAD});
    std::smatch m;
    std::regex line("^([0-9a-f]+) ([0-9a-f]+) [Tt] " + symbol + "$");
    for (const std::string& l : lines_of(nm.out))
      if (std::regex_match(l, m, line)) {
        uint64_t start = std::stoull(m[1], nullptr, 16);
        return {start, start + std::stoull(m[2], nullptr, 16)};
      }
    ADD_FAILURE() << "nm has no " << symbol;
    return {0, 0};
  }

  static std::vector<Row> objdump_rows(const std::string& symbol) {
    auto [start, end] = symbol_range(symbol);
    char range[96];
    std::snprintf(range, sizeof range, "--start-address=0x%llx", static_cast<unsigned long long>(start));
    char stop[96];
    std::snprintf(stop, sizeof stop, "--stop-address=0x%llx", static_cast<unsigned long long>(end));
    test::ProgramResult r = test::run_program({"objdump", "-d", "--no-show-raw-insn", range, stop, VPERF_WORKLOAD});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    static const std::regex row(R"(^ +([0-9a-f]+):\t(\S+)(?: +(.*))?$)");
    std::vector<Row> rows;
    std::smatch m;
    for (const std::string& l : lines_of(r.out))
      if (std::regex_match(l, m, row)) rows.push_back(Row{0, std::stoull(m[1], nullptr, 16), m[2], m[3], 0, ""});
    return rows;
  }

  static test::TempTree* scratch_;
  static std::string data_;
  static std::string record_error_;
};

test::TempTree* AnnotateCommand::scratch_ = nullptr;
std::string AnnotateCommand::data_;
std::string AnnotateCommand::record_error_;

TEST_F(AnnotateCommand, InstructionsMatchObjdump) {
  for (const std::string symbol : {"spin_leaf_hash", "spin_leaf_math"}) {
    test::ProgramResult r = test::run_vperf({"annotate", "--stdio", "-i", data_, symbol});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<Row> ours = annotate_rows(r.out);
    std::vector<Row> theirs = objdump_rows(symbol);
    ASSERT_FALSE(theirs.empty());
    ASSERT_EQ(ours.size(), theirs.size()) << r.out;
    for (size_t i = 0; i < ours.size(); ++i) {
      SCOPED_TRACE(symbol + " row " + std::to_string(i));
      EXPECT_EQ(ours[i].address, theirs[i].address);
      EXPECT_EQ(ours[i].mnemonic, theirs[i].mnemonic);
      EXPECT_EQ(without_data_symbol(ours[i].operands), without_data_symbol(theirs[i].operands));
    }
  }
}

TEST_F(AnnotateCommand, SampleCountsMatchPerfScriptAndPercentagesMatchPerfAnnotate) {
  // Exact counts: perf script's sym+offset tally against vperf's per-instruction counts.
  test::ProgramResult script = test::run_program({"perf", "script", "-i", data_, "-F", "ip,sym,symoff"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  std::map<uint64_t, uint64_t> perf_counts;
  uint64_t perf_total = 0;
  std::smatch m;
  static const std::regex hit(R"(^\s*[0-9a-f]+ spin_leaf_hash\+0x([0-9a-f]+)\s*$)");
  for (const std::string& l : lines_of(script.out))
    if (std::regex_match(l, m, hit)) {
      ++perf_counts[std::stoull(m[1], nullptr, 16)];
      ++perf_total;
    }
  ASSERT_GT(perf_total, 100u) << "too few samples in spin_leaf_hash to compare";

  test::ProgramResult json = test::run_vperf({"annotate", "--json", "-i", data_, "spin_leaf_hash"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  boost::json::value v = boost::json::parse(json.out);
  const auto& symbol = v.at("symbols").as_array().at(0).as_object();
  EXPECT_EQ(symbol.at("samples").to_number<uint64_t>(), perf_total);
  std::map<uint64_t, uint64_t> our_counts;
  for (const auto& i : symbol.at("instructions").as_array())
    if (i.at("samples").to_number<uint64_t>() > 0) our_counts[i.at("offset").to_number<uint64_t>()] = i.at("samples").to_number<uint64_t>();
  EXPECT_EQ(our_counts, perf_counts);

  // Percentages: perf annotate's rows, address by address.
  test::ProgramResult perf = test::run_program({"perf", "annotate", "--stdio", "-i", data_, "-s", "spin_leaf_hash"});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  std::vector<Row> theirs = annotate_rows(perf.out);
  ASSERT_FALSE(theirs.empty()) << "perf annotate's output did not parse:\n" << perf.out;
  test::ProgramResult text = test::run_vperf({"annotate", "--stdio", "-i", data_, "spin_leaf_hash"});
  std::vector<Row> ours = annotate_rows(text.out);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].address, theirs[i].address);
    EXPECT_NEAR(ours[i].percent, theirs[i].percent, 0.01) << "at " << std::hex << ours[i].address;
  }
  // Same header as perf's, sample count included.
  EXPECT_EQ(lines_of(text.out).at(0), lines_of(perf.out).at(0));
  EXPECT_EQ(lines_of(text.out).at(1), lines_of(perf.out).at(1));
}

TEST_F(AnnotateCommand, SourceLinesAgreeWithAddr2line) {
  VPERF_REQUIRE(!test::find_program("addr2line").empty(), "addr2line (binutils)");
  test::ProgramResult r = test::run_vperf({"annotate", "--stdio", "-i", data_, "spin_leaf_hash"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("src/workloads/spin.cpp"), std::string::npos) << r.out;
  std::vector<Row> rows = annotate_rows(r.out);
  ASSERT_FALSE(rows.empty());
  std::vector<std::string> args = {"addr2line", "-e", VPERF_WORKLOAD};
  for (const Row& row : rows) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(row.address));
    args.push_back(address);
  }
  test::ProgramResult a2l = test::run_program(args);
  ASSERT_EQ(a2l.exit_code, 0) << a2l.err;
  std::vector<std::string> answers = lines_of(a2l.out);
  ASSERT_EQ(answers.size(), rows.size());

  std::vector<std::string> source = lines_of([] {
    std::ifstream in(std::string(VPERF_SOURCE_DIR) + "/src/workloads/spin.cpp");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }());
  static const std::regex where(R"(^(.*):(\d+)(?: \(discriminator \d+\))?$)");
  std::smatch m;
  int loop_rows = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(answers[i]);
    ASSERT_TRUE(std::regex_match(answers[i], m, where));
    EXPECT_TRUE(std::string(m[1]).ends_with("src/workloads/spin.cpp"));
    int line = std::stoi(m[2]);
    EXPECT_EQ(rows[i].source_line, line) << "instruction at " << std::hex << rows[i].address;
    ASSERT_GE(line, 1);
    ASSERT_LE(static_cast<size_t>(line), source.size());
    EXPECT_EQ(rows[i].source_text, trim(source[static_cast<size_t>(line) - 1]));
    if (rows[i].source_text.find("h *= 0x100000001b3ULL") != std::string::npos) ++loop_rows;
  }
  EXPECT_GT(loop_rows, 0) << "no instruction of the hash loop's multiply line";
}

TEST_F(AnnotateCommand, EverySymbolHottestFirst) {
  test::ProgramResult r = test::run_vperf({"annotate", "--stdio", "-i", data_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> headers;
  static const std::regex header(R"(^ Percent \|\tSource code & Disassembly of (\S+) for cpu-clock \((\d+) samples.*$)");
  std::vector<uint64_t> counts;
  std::smatch m;
  for (const std::string& l : lines_of(r.out))
    if (std::regex_match(l, m, header)) counts.push_back(std::stoull(m[2]));
  ASSERT_GE(counts.size(), 2u);
  for (size_t i = 1; i < counts.size(); ++i) EXPECT_GE(counts[i - 1], counts[i]);
  // The first two are the leaves, in the workload's 2:1 hash:math split.
  std::vector<std::string> lines = lines_of(r.out);
  size_t math = r.out.find("<spin_leaf_math>:");
  size_t hash = r.out.find("<spin_leaf_hash>:");
  ASSERT_NE(hash, std::string::npos);
  ASSERT_NE(math, std::string::npos);
  EXPECT_LT(hash, math);
}

TEST_F(AnnotateCommand, UnknownSymbolIsOneErrorLineWithTheHottest) {
  test::ProgramResult r = test::run_vperf({"annotate", "-i", data_, "no_such_function"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_TRUE(r.err.starts_with("vperf: error: no samples in symbol 'no_such_function'")) << r.err;
  EXPECT_NE(r.err.find("spin_leaf_hash"), std::string::npos) << r.err;
}

TEST_F(AnnotateCommand, MissingOrGarbageInputIsOneErrorLine) {
  test::TempTree tree;
  tree.write("garbage", std::string(4096, 'g'));
  for (const std::string& input : {(tree.root() / "absent").string(), (tree.root() / "garbage").string()}) {
    test::ProgramResult r = test::run_vperf({"annotate", "-i", input});
    EXPECT_EQ(r.exit_code, 1);
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(r.err.starts_with("vperf: error: cannot read " + input)) << r.err;
    EXPECT_NE(r.err.find("(hint: "), std::string::npos);
  }
  test::ProgramResult style = test::run_vperf({"annotate", "-i", data_, "-M", "arm"});
  EXPECT_EQ(style.exit_code, 2);
  EXPECT_TRUE(style.err.starts_with("vperf: error: unknown disassembler style 'arm'")) << style.err;
}

TEST_F(AnnotateCommand, PerfRecordedFileAnnotatesToo) {
  test::TempTree tree;
  std::string data = (tree.root() / "perf.data").string();
  test::ProgramResult rec = test::run_program(
      {"perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-o", data, "--", VPERF_WORKLOAD, "spin", "200"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  test::ProgramResult ours = test::run_vperf({"annotate", "--stdio", "-i", data, "spin_leaf_hash"});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  test::ProgramResult perf = test::run_program({"perf", "annotate", "--stdio", "-i", data, "-s", "spin_leaf_hash"});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  std::vector<Row> a = annotate_rows(ours.out), b = annotate_rows(perf.out);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i].percent, b[i].percent, 0.01);
  EXPECT_EQ(lines_of(ours.out).at(0), lines_of(perf.out).at(0));
}

TEST_F(AnnotateCommand, PipeInputNamesEveryEvent) {
  test::TempTree tree;
  std::string data = (tree.root() / "pipe.data").string();
  test::ProgramResult rec = test::run_program(
      {"sh", "-c", std::string(VPERF_BINARY) + " record -e cpu-clock -F 2999 -o - -- " + VPERF_WORKLOAD + " spin 200 > " + data});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  test::ProgramResult ours =
      test::run_program({"sh", "-c", std::string(VPERF_BINARY) + " annotate --stdio -i - spin_leaf_hash < " + data});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  test::ProgramResult perf = test::run_program({"perf", "annotate", "--stdio", "-i", data, "-s", "spin_leaf_hash"});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  // One listing, with perf's header (the event's name arrives after the samples in a pipe).
  std::vector<std::string> a = lines_of(ours.out);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.at(0), lines_of(perf.out).at(0));
  EXPECT_EQ(std::count_if(a.begin(), a.end(), [](const std::string& l) { return l.starts_with(" Percent |"); }), 1);
}

// A recording with kernel samples: getppid in a loop spends most of its time in the kernel.
std::string record_kernel_heavy(const test::TempTree& tree) {
  std::string data = (tree.root() / "k.data").string();
  test::ProgramResult rec = test::run_vperf(
      {"record", "-e", "cpu-clock", "-F", "2999", "-o", data, "--", VPERF_WORKLOAD, "getppid", "1000000"});
  EXPECT_EQ(rec.exit_code, 0) << rec.err;
  return data;
}

TEST_F(AnnotateCommand, KernelSymbolsComeFromKcore) {
  VPERF_REQUIRE(test::running_as_root(), "root for /proc/kcore and real kallsyms addresses");
  VPERF_REQUIRE(std::filesystem::exists("/proc/kcore"), "a kernel with /proc/kcore (CONFIG_PROC_KCORE)");
  test::TempTree tree;
  std::string data = record_kernel_heavy(tree);
  test::ProgramResult r = test::run_vperf({"annotate", "--json", "-i", data});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  boost::json::value v = boost::json::parse(r.out);
  int kernel_symbols = 0;
  for (const auto& s : v.at("symbols").as_array()) {
    if (s.at("dso").as_string() != "[kernel.kallsyms]") continue;
    ++kernel_symbols;
    EXPECT_EQ(s.at("code_file").as_string(), "/proc/kcore");
    const auto& rows = s.at("instructions").as_array();
    ASSERT_FALSE(rows.empty());
    uint64_t counted = 0;
    for (const auto& i : rows) counted += i.at("samples").to_number<uint64_t>();
    // Every sample lands on a decoded instruction of the live kernel's code.
    EXPECT_EQ(counted, s.at("samples").to_number<uint64_t>()) << s.at("symbol").as_string();
  }
  EXPECT_GT(kernel_symbols, 0) << r.out.substr(0, 2000);
}

TEST_F(AnnotateCommand, KernelSymbolsWithoutKernelCodeAreSkippedOneLineEach) {
  test::TempTree tree;
  std::string data = record_kernel_heavy(tree);
  // Kernel code is read from this path; here it does not exist (as on kernels without kcore).
  cli::AnnotateOptions options;
  options.source.input = data;
  options.kcore = tree.root() / "no-kcore";
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_annotate(options, out, err), 0);
  options.json = true;
  std::ostringstream json_out, json_err;
  ASSERT_EQ(cli::run_annotate(options, json_out, json_err), 0);
  boost::json::value v = boost::json::parse(json_out.str());
  const auto& skipped = v.at("skipped").as_array();
  ASSERT_GT(skipped.size(), 0u) << "no kernel samples in a getppid loop?";
  std::vector<std::string> warnings = lines_of(err.str());
  ASSERT_EQ(warnings.size(), skipped.size()) << err.str();
  for (size_t i = 0; i < skipped.size(); ++i) {
    EXPECT_EQ(skipped[i].at("dso").as_string(), "[kernel.kallsyms]");
    std::string symbol(skipped[i].at("symbol").as_string());
    EXPECT_EQ(warnings[i], "vperf: warning: cannot annotate " + symbol + " ([kernel.kallsyms]): kernel code is read from " +
                               (tree.root() / "no-kcore").string() +
                               ", which this kernel does not have (built without CONFIG_PROC_KCORE); vperf does not use a vmlinux");
  }
  // The user-space symbols are still annotated.
  EXPECT_NE(out.str().find("Source code & Disassembly of "), std::string::npos) << out.str().substr(0, 500);
}

}  // namespace
}  // namespace vperf
