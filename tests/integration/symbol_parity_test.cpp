// How addresses become names, against perf 6.1 on crafted perf.data files whose every sample is
// chosen: callchain entries resolved in the context their PERF_CONTEXT_* marker gives (a user
// entry that happens to lie in the kernel's range is "[unknown]", never a kernel symbol), and
// C++ names demangled as perf's cplus_demangle without DMGL_PARAMS shows them (no clone
// suffixes, no parameters, the full text of thunks and other special names), one sample at each
// function of vperf's own optimised binary. script's and report's whole outputs are compared.
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "data/perf_data_writer.h"
#include "data/perf_record.h"
#include "data/synthesize.h"
#include "support/capability.h"
#include "support/run_program.h"
#include "support/fake_event_fs.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> kallsyms_address(const std::string& name) {
  std::ifstream in("/proc/kallsyms");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string start, type, symbol;
    if (fields >> start >> type >> symbol && symbol == name && (type == "T" || type == "t")) {
      uint64_t address = std::stoull(start, nullptr, 16);
      if (address != 0) return address;
    }
  }
  return std::nullopt;
}

// A cpu-clock recording of one process (pid kPid, "crafted") with callchains: the host's kernel
// maps as perf record writes them, then the given maps and samples in that order.
class CraftedFile {
 public:
  static constexpr pid_t kPid = 4242;

  CraftedFile() {
    std::memset(&attr_.attr, 0, sizeof attr_.attr);
    attr_.attr.size = sizeof attr_.attr;
    attr_.attr.type = PERF_TYPE_SOFTWARE;
    attr_.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr_.attr.sample_period = 1000;
    attr_.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                             PERF_SAMPLE_CALLCHAIN;
    attr_.attr.sample_id_all = 1;
    attr_.attr.mmap = attr_.attr.comm = attr_.attr.task = 1;
    attr_.name = "cpu-clock";
    format_ = data::SampleFormat::from_attr(attr_.attr);
    add(PERF_RECORD_COMM, 0, data::CommRecord{kPid, kPid, "crafted"});
  }

  void map_file(uint64_t start, uint64_t len, const std::string& path, uint64_t pgoff = 0) {
    data::Mmap2Record m;
    m.pid = m.tid = kPid;
    m.addr = start;
    m.len = len;
    m.pgoff = pgoff;
    m.prot = PROT_READ | PROT_EXEC;
    m.flags = MAP_PRIVATE;
    m.filename = path;
    add(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, m);
  }
  void sample(uint8_t cpumode, uint64_t ip, std::vector<uint64_t> callchain) {
    data::Sample s;
    s.ip = ip;
    s.period = 1000;
    s.callchain = std::move(callchain);
    add(PERF_RECORD_SAMPLE, cpumode, s);
  }

  void write(const fs::path& path) const {
    auto writer = data::PerfDataWriter::create_file(path, {attr_});
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    auto kernel = data::synthesize_kernel_maps(format_);
    ASSERT_TRUE(kernel.ok()) << kernel.error().message;
    for (const data::RecordBytes& bytes : *kernel) ASSERT_TRUE(writer->write(bytes).ok());
    for (const data::Record& r : records_) ASSERT_TRUE(writer->write(data::build_record(r, &format_)).ok());
    ASSERT_TRUE(writer->flush_round().ok());
    data::HeaderFeatures features;
    features.hostname = "vperf-test";
    features.osrelease = "6.1.0";
    features.arch = "x86_64";
    features.nr_cpus_online = features.nr_cpus_available = 1;
    ASSERT_TRUE(writer->finish(features).ok());
  }

 private:
  void add(uint32_t type, uint16_t misc, data::RecordBody body) {
    data::Record r;
    r.type = type;
    r.misc = misc;
    r.body = std::move(body);
    r.sample_id.pid = r.sample_id.tid = kPid;
    r.sample_id.time = time_ += 1000;
    records_.push_back(std::move(r));
  }

  data::EventAttrEntry attr_;
  data::SampleFormat format_;
  std::vector<data::Record> records_;
  uint64_t time_ = 1000000;
};

// "line N differs: perf ... vperf ..." for the first difference, empty when equal.
std::string first_difference(const std::string& perf, const std::string& vperf) {
  std::istringstream a(perf), b(vperf);
  std::string la, lb;
  for (int n = 1;; ++n) {
    bool more_a = static_cast<bool>(std::getline(a, la));
    bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return perf == vperf ? "" : "outputs differ in the final newline";
    if (!more_a || !more_b || la != lb)
      return "line " + std::to_string(n) + " differs\n perf:  " + (more_a ? la : "<end>") + "\n vperf: " + (more_b ? lb : "<end>");
  }
}

std::string without_tip(const std::string& text) {
  size_t tip = text.find("#\n# (Tip:");
  return tip == std::string::npos ? text : text.substr(0, tip);
}

class SymbolParity : public ::testing::Test {
 protected:
  void SetUp() override { VPERF_REQUIRE(!test::find_program("perf").empty(), "perf 6.1 as the reference"); }

  // perf COMMAND and vperf COMMAND on `data` with `options` print the same (perf's closing tip
  // left out); `perf_only` are perf's extra options (--stdio).
  static void expect_as_perf(const std::string& command, const fs::path& data, const std::vector<std::string>& options,
                             const std::vector<std::string>& perf_only = {}) {
    std::vector<std::string> mine{command, "-i", data.string()};
    mine.insert(mine.end(), options.begin(), options.end());
    std::vector<std::string> perf{"perf"};
    perf.insert(perf.end(), mine.begin(), mine.end());
    perf.insert(perf.end(), perf_only.begin(), perf_only.end());
    test::ProgramResult theirs = test::run_program(perf);
    test::ProgramResult ours = test::run_vperf(mine);
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    ASSERT_FALSE(theirs.out.empty());
    std::string what = command;
    for (const std::string& o : options) what += " " + o;
    EXPECT_EQ(first_difference(without_tip(theirs.out), ours.out), "") << what;
  }
  static void expect_script_as_perf(const fs::path& data, const std::vector<std::string>& options) {
    expect_as_perf("script", data, options);
  }
  static void expect_report_as_perf(const fs::path& data, const std::vector<std::string>& options) {
    expect_as_perf("report", data, options, {"--stdio"});
  }

  test::TempTree scratch_;
};

TEST_F(SymbolParity, UserCallchainEntriesInTheKernelRangeAreUnknownAsInPerf) {
  std::optional<uint64_t> schedule = kallsyms_address("schedule");
  std::optional<uint64_t> syscall = kallsyms_address("do_syscall_64");
  VPERF_REQUIRE(schedule && syscall, "kernel addresses in /proc/kallsyms (root, kptr_restrict)");
  // A program mapped at 0x400000 (the workload's text), samples whose user part holds kernel
  // addresses, as a frame-pointer walk through code without frame pointers leaves them.
  const uint64_t base = 0x555500000000;
  CraftedFile f;
  f.map_file(base, fs::file_size(VPERF_WORKLOAD), VPERF_WORKLOAD);
  const uint64_t user_a = base + 0x2000, user_b = base + 0x3000;
  for (int i = 0; i < 3; ++i)
    f.sample(PERF_RECORD_MISC_KERNEL, *schedule + 4,
             {PERF_CONTEXT_KERNEL, *schedule + 4, *syscall + 0x20, PERF_CONTEXT_USER, user_a, *schedule, user_b});
  f.sample(PERF_RECORD_MISC_USER, user_a, {PERF_CONTEXT_USER, user_a, *syscall, *schedule + 8, user_b});
  // A user-mode sample whose ip itself lies in the kernel's range.
  f.sample(PERF_RECORD_MISC_USER, *syscall + 0x10, {PERF_CONTEXT_USER, *syscall + 0x10, user_b});
  const fs::path data = scratch_.root() / "user-kernel-range.data";
  f.write(data);
  expect_script_as_perf(data, {});
  for (const std::vector<std::string>& options : std::vector<std::vector<std::string>>{
           {}, {"--no-children"}, {"--children", "--sort", "dso,sym"}, {"--no-children", "--sort", "sym", "-g", "caller"}})
    expect_report_as_perf(data, options);
}


// A library's .plt as readelf -SW prints it; nullopt (with a failure saying why) without one.
struct PltSection {
  uint64_t address, offset, size, entry_size;
};
std::optional<PltSection> plt_section(const fs::path& library) {
  test::ProgramResult sections = test::run_program({"readelf", "-SW", library.string()});
  std::smatch plt;
  const std::regex row(R"(\] \.plt +PROGBITS +([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+) )");
  if (sections.exit_code != 0 || !std::regex_search(sections.out, plt, row)) {
    ADD_FAILURE() << "readelf -SW " << library << " shows no .plt:\n" << sections.out << sections.err;
    return std::nullopt;
  }
  auto hex = [&](size_t i) { return std::stoull(plt[i], nullptr, 16); };
  return PltSection{hex(1), hex(2), hex(3), hex(4)};
}

// The PLT of a library linked by lld (chromium's): its .plt says nothing of its entries' size
// (sh_entsize 0) and lies 0x1000 from its file offset. perf 6.1 then names none of its entries,
// wherever they are looked for, and neither may vperf. Left out: the .plt's very first byte,
// which perf names after one of its 141 zero-length PLT symbols, the one its symbol tree's shape
// puts first (elf_file.cpp, plt_symbols). The library comes with chromium (install-deps.sh).
TEST_F(SymbolParity, PltEntriesOfAnLldLinkedLibraryAreNamedAsPerfNamesThem) {
  const fs::path library = "/usr/lib/chromium/libvk_swiftshader.so";
  VPERF_REQUIRE(fs::exists(library), "chromium's libvk_swiftshader.so (linked by lld: .plt without an entry size)");
  const std::optional<PltSection> plt = plt_section(library);
  ASSERT_TRUE(plt.has_value());
  const uint64_t address = plt->address, offset = plt->offset, size = plt->size;
  VPERF_REQUIRE(plt->entry_size == 0 && address != offset, "this chromium's libvk_swiftshader.so has a .plt without an entry size, away from its offset");
  const uint64_t base = 0x7f1200000000;
  CraftedFile f;
  f.map_file(base, fs::file_size(library), library.string());
  // Every 16 bytes of the .plt, where the file has it and where its addresses say.
  for (uint64_t at : {offset + 0x10, address})
    for (uint64_t entry = 0; entry + 0x10 < size; entry += 0x10) f.sample(PERF_RECORD_MISC_USER, base + at + entry, {PERF_CONTEXT_USER, base + at + entry});
  const fs::path data = scratch_.root() / "lld-plt.data";
  f.write(data);
  expect_script_as_perf(data, {"-F", "ip,sym,dso"});
  expect_report_as_perf(data, {"--sort", "dso,sym"});
}

// An AArch64 library's PLT: binutils leaves .plt's sh_entsize 0 there too, but AArch64's PLT has a
// fixed layout (a 32-byte header, 16-byte entries), which perf 6.1 uses by the ELF's machine:
// every entry is named "NAME@plt" (perf in the arm64 guest named a sample in libc's
// __tunable_get_val@plt that vperf showed as an address). Debian's arm64 libc, from multiarch
// (install-deps.sh), read here by both x86 programs.
TEST_F(SymbolParity, PltEntriesOfAnAarch64LibraryAreNamedAsPerfNamesThem) {
  const fs::path library = "/usr/lib/aarch64-linux-gnu/libc.so.6";
  VPERF_REQUIRE(fs::exists(library), "Debian's arm64 libc (libc6:arm64, installed with the arm64 libraries by install-deps.sh)");
  const std::optional<PltSection> plt = plt_section(library);
  ASSERT_TRUE(plt.has_value());
  const uint64_t address = plt->address, size = plt->size;
  const uint64_t base = 0xffff80000000;
  CraftedFile f;
  f.map_file(base, fs::file_size(library), library.string());
  // Every 4 bytes (an AArch64 instruction) of the .plt, the header included.
  for (uint64_t at = 0; at < size; at += 4) f.sample(PERF_RECORD_MISC_USER, base + address + at, {PERF_CONTEXT_USER, base + address + at});
  const fs::path data = scratch_.root() / "aarch64-plt.data";
  f.write(data);
  expect_script_as_perf(data, {"-F", "ip,sym,dso"});
  expect_report_as_perf(data, {"--sort", "dso,sym"});
  // The oracle is perf; that the entries are named at all is the layout's doing, not chance.
  test::ProgramResult named = test::run_vperf({"script", "-i", data.string(), "-F", "ip,sym"});
  EXPECT_EQ(test::count_lines_with(named.out, "@plt"), (size - 32) / 4) << "every instruction past the 32-byte header is in an entry";
}

TEST_F(SymbolParity, FoldedStacksAndReportsHoldWhatPerfsCallchainCursorHolds) {
  VPERF_REQUIRE(!test::flamegraph_dir().empty(), "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR)");
  std::optional<uint64_t> schedule = kallsyms_address("schedule");
  VPERF_REQUIRE(schedule.has_value(), "kernel addresses in /proc/kallsyms (root, kptr_restrict)");
  const uint64_t base = 0x555500000000;
  CraftedFile f;
  f.map_file(base, fs::file_size(VPERF_WORKLOAD), VPERF_WORKLOAD);
  // A callchain the kernel ended with -1: perf discards the recorded chain and prints no frame.
  f.sample(PERF_RECORD_MISC_USER, base + 0x2000, {PERF_CONTEXT_USER, base + 0x2000, static_cast<uint64_t>(-1)});
  // An empty callchain of an event with callchains: nothing either, not the sample ip.
  f.sample(PERF_RECORD_MISC_USER, base + 0x2100, {});
  f.sample(PERF_RECORD_MISC_KERNEL, *schedule, {PERF_CONTEXT_KERNEL, *schedule, PERF_CONTEXT_USER, base + 0x2200});
  const fs::path data = scratch_.root() / "cursor.data";
  f.write(data);
  expect_script_as_perf(data, {});
  // perf report counts the same cursor: the discarded chain adds no Children.
  for (const std::vector<std::string>& options : std::vector<std::vector<std::string>>{
           {"--children", "--sort", "dso,sym"}, {"--no-children", "--sort", "dso,sym"}, {"--children", "-g", "caller"}})
    expect_report_as_perf(data, options);
  test::ProgramResult theirs = test::run_program(
      {"sh", "-c", "perf script -i " + data.string() + " 2>/dev/null | " + test::flamegraph_dir() + "/stackcollapse-perf.pl --kernel"});
  test::ProgramResult ours = test::run_vperf({"flamegraph", "-i", data.string(), "--folded", "-o", "-"});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  ASSERT_NE(theirs.out.find("crafted 2000\n"), std::string::npos) << theirs.out;
  EXPECT_EQ(ours.out, theirs.out);
}

// The text segment of an ELF file (offset, address, size), from readelf.
struct TextSegment {
  uint64_t offset = 0, vaddr = 0, size = 0;
};
std::optional<TextSegment> text_segment(const std::string& path) {
  test::ProgramResult r = test::run_program({"readelf", "-lW", path});
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string type, offset, vaddr, paddr, filesz, memsz, flags;
    if (fields >> type >> offset >> vaddr >> paddr >> filesz >> memsz >> flags && type == "LOAD" &&
        line.find(" R E ") != std::string::npos)
      return TextSegment{std::stoull(offset, nullptr, 16), std::stoull(vaddr, nullptr, 16), std::stoull(filesz, nullptr, 16)};
  }
  return std::nullopt;
}

TEST_F(SymbolParity, CxxNamesAsPerfDemanglesThemAtEveryFunctionOfAnOptimisedBinary) {
  // vperf itself (RelWithDebInfo, -O2): about 4,700 functions, among them .isra, .constprop,
  // .part and .cold clones, thunks, lambdas, templates, operators and local names.
  const std::string binary = VPERF_BINARY;
  std::optional<TextSegment> text = text_segment(binary);
  VPERF_REQUIRE(text.has_value(), "readelf (binutils) to read the binary's segments");
  test::ProgramResult nm = test::run_program({"nm", "--defined-only", binary});
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  std::vector<uint64_t> addresses;
  int clones = 0;
  std::istringstream in(nm.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string value, type, name;
    if (!(fields >> value >> type >> name) || (type != "t" && type != "T" && type != "W" && type != "w")) continue;
    uint64_t address = std::stoull(value, nullptr, 16);
    if (address < text->vaddr || address >= text->vaddr + text->size) continue;
    addresses.push_back(address);
    if (name.starts_with("_Z") && (name.find(".isra") != std::string::npos || name.find(".cold") != std::string::npos ||
                                   name.find(".constprop") != std::string::npos || name.find(".part") != std::string::npos))
      ++clones;
  }
  ASSERT_GT(addresses.size(), 1000u);
  ASSERT_GT(clones, 50) << "the binary should have clones to compare";
  const uint64_t base = 0x555500000000;
  CraftedFile f;
  f.map_file(base + text->vaddr, text->size, binary, text->offset);
  for (uint64_t address : addresses) f.sample(PERF_RECORD_MISC_USER, base + address, {PERF_CONTEXT_USER, base + address});
  const fs::path data = scratch_.root() / "functions.data";
  f.write(data);
  expect_script_as_perf(data, {"-F", "ip,sym,dso"});
  expect_script_as_perf(data, {"-G", "-F", "ip,sym,symoff"});
  expect_report_as_perf(data, {"--no-children", "--sort", "sym"});
}

}  // namespace
}  // namespace vperf
