// vperf script against perf 6.1's perf script on the same files: the whole stdout must be the
// same, byte for byte, for vperf's recordings and perf's own, in file and pipe mode, for
// cpu-clock profiles with and without callchains, kernel-heavy ones, sched_switch tracepoints
// (print fmt through libtraceevent) and -F selections. And the acid test: FlameGraph's
// stackcollapse-perf.pl folds vperf script's output exactly as it folds perf script's.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <memory>
#include <regex>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cmd_script.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

// "line N differs:\n perf:  ...\n vperf: ..." for the first difference, empty when equal.
std::string first_difference(const std::string& expected, const std::string& actual) {
  if (expected == actual) return "";
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int n = 1;; ++n) {
    bool more_a = static_cast<bool>(std::getline(a, la));
    bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "outputs differ only in the final newline";
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(n) + " differs (of " + std::to_string(std::count(expected.begin(), expected.end(), '\n')) +
             " vs " + std::to_string(std::count(actual.begin(), actual.end(), '\n')) + " lines)\n perf:  " +
             (more_a ? la : "<end>") + "\n vperf: " + (more_b ? lb : "<end>");
    }
  }
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The kernel symbol /proc/kallsyms gives an address: the one with the highest start at or below
// it (kallsyms has no sizes; perf and vperf both end a symbol where the next one starts).
std::string kallsyms_symbol_at(uint64_t address) {
  static const std::vector<std::pair<uint64_t, std::string>> symbols = [] {
    std::vector<std::pair<uint64_t, std::string>> all;
    std::ifstream in("/proc/kallsyms");
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string start, type, name;
      if (fields >> start >> type >> name && (type == "t" || type == "T" || type == "w" || type == "W"))
        all.emplace_back(std::stoull(start, nullptr, 16), name);
    }
    std::sort(all.begin(), all.end());
    return all;
  }();
  auto after = std::upper_bound(symbols.begin(), symbols.end(), std::make_pair(address, std::string("\xff")));
  return after == symbols.begin() ? "" : std::prev(after)->second;
}

// perf 6.1 now and then leaves a kernel callchain address unnamed ("[unknown]") in a recording
// made while other tests run (seen once in pipe mode: a return address at the start of a
// __pfx_ padding symbol; the same address is named when the stream is read again). Such a line
// is accepted when /proc/kallsyms names the address as vperf does.
bool perf_left_kernel_address_unnamed(const std::string& theirs, const std::string& ours) {
  std::istringstream a(theirs), b(ours);
  std::string address, their_symbol, our_address, our_symbol;
  if (!(a >> address >> their_symbol) || !(b >> our_address >> our_symbol) || address != our_address) return false;
  if (their_symbol != "[unknown]" || !address.starts_with("ffffffff")) return false;
  return our_symbol.substr(0, our_symbol.find("+0x")) == kallsyms_symbol_at(std::stoull(address, nullptr, 16));
}

// Where vperf's symbols (src/symbols, not this command) still name a symbol differently from
// perf 6.1: the symbol text is the only difference on such a line, and it is one of these.
//  - perf synthesizes "@plt" for a PLT entry it cannot name; vperf resolves no symbol there.
//  - perf names some PLT entries after _init, the symbol before the PLT ("_init+0x3b"), where
//    vperf names the entry ("__errno_location@plt+0xb").
//  - perf leaves a kernel address unnamed that /proc/kallsyms names as vperf does (above).
bool known_symbol_difference(const std::string& theirs, const std::string& ours) {
  size_t prefix = 0;
  while (prefix < theirs.size() && prefix < ours.size() && theirs[prefix] == ours[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < theirs.size() - prefix && suffix < ours.size() - prefix &&
         theirs[theirs.size() - 1 - suffix] == ours[ours.size() - 1 - suffix])
    ++suffix;
  // Widen to whole words: back to the space before the symbol, on to the next space or '('.
  while (prefix > 0 && theirs[prefix - 1] != ' ') --prefix;
  auto word_end = [&](const std::string& s) {
    size_t end = s.size() - suffix;
    while (end < s.size() && s[end] != ' ') ++end;
    return end;
  };
  std::string a = theirs.substr(prefix, word_end(theirs) - prefix);
  std::string b = ours.substr(prefix, word_end(ours) - prefix);
  static const std::regex plt_name(R"(@plt(\+0x[0-9a-f]+)?)");
  if (std::regex_match(a, plt_name) && b == "[unknown]") return true;
  static const std::regex init_offset(R"(_init\+0x[0-9a-f]+)");
  static const std::regex plt_entry(R"(\S+@plt(\+0x[0-9a-f]+)?)");
  if (std::regex_match(a, init_offset) && std::regex_match(b, plt_entry)) return true;
  return perf_left_kernel_address_unnamed(theirs, ours);
}

struct ScriptComparison {
  std::string unexplained;  // the first difference not in known_symbol_difference, or empty
  size_t known = 0;         // lines that differ only in a known way
};

ScriptComparison compare_scripts(const std::string& theirs, const std::string& ours) {
  ScriptComparison c;
  if (theirs == ours) return c;
  std::vector<std::string> a = lines_of(theirs), b = lines_of(ours);
  if (a.size() != b.size()) {
    c.unexplained = first_difference(theirs, ours);
    return c;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (known_symbol_difference(a[i], b[i])) {
      ++c.known;
      continue;
    }
    c.unexplained = "line " + std::to_string(i + 1) + " differs\n perf:  " + a[i] + "\n vperf: " + b[i];
    break;
  }
  return c;
}

// Every line the same, except lines whose only difference is a known symbol naming one
// (counted and shown, so they stay visible).
#define EXPECT_SCRIPT_MATCHES(theirs, ours)                                                            \
  do {                                                                                                 \
    ScriptComparison comparison_ = compare_scripts(theirs, ours);                                      \
    EXPECT_EQ(comparison_.unexplained, "");                                                            \
    if (comparison_.known)                                                                             \
      std::cout << "note: " << comparison_.known << " line(s) differ only in known symbol naming\n"; \
  } while (0)

class ScriptCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::find_program("perf").empty()) GTEST_SKIP() << "needs Linux perf 6.1 as the reference";
  }

  std::string file(const std::string& name) const { return (scratch_.root() / name).string(); }

  // perf script's stdout (its stderr says things like "Warning: ... lost", not compared).
  static std::string perf_script(const std::string& data, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{"perf", "script", "-i", data};
    argv.insert(argv.end(), extra.begin(), extra.end());
    test::ProgramResult r = test::run_program(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  static std::string vperf_script(const std::string& data, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"script", "-i", data};
    args.insert(args.end(), extra.begin(), extra.end());
    test::ProgramResult r = test::run_vperf(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  // Both read the pipe-mode stream from stdin (-i -).
  static std::string piped(const std::string& program, const std::string& stream, const std::string& extra = "") {
    test::ProgramResult r = test::run_program({"sh", "-c", program + " script -i - " + extra + " < " + quote(stream) + " 2>/dev/null"});
    EXPECT_EQ(r.exit_code, 0);
    return r.out;
  }

  void record_vperf(const std::vector<std::string>& args) {
    std::vector<std::string> all{"record", "-q"};
    all.insert(all.end(), args.begin(), args.end());
    test::ProgramResult r = test::run_vperf(all);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void record_perf(const std::vector<std::string>& args) {
    std::vector<std::string> all{"perf", "record", "-q"};
    all.insert(all.end(), args.begin(), args.end());
    test::ProgramResult r = test::run_program(all);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // vperf record -o - > stream
  void record_vperf_pipe(const std::string& stream, const std::string& args) {
    test::ProgramResult r = test::run_program({"sh", "-c", quote(VPERF_BINARY) + " record -q -o - " + args + " > " + quote(stream)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void expect_same_as_perf(const std::string& data, const std::vector<std::string>& extra = {}) {
    std::string theirs = perf_script(data, extra);
    ASSERT_FALSE(theirs.empty()) << "perf script printed nothing for " << data;
    std::string ours = vperf_script(data, extra);
    EXPECT_SCRIPT_MATCHES(theirs, ours);
  }

  std::string stackcollapse(const std::string& script_output) const {
    std::string path = file("script-" + std::to_string(collapse_count_++) + ".txt");
    std::ofstream(path) << script_output;
    test::ProgramResult r = test::run_program({test::flamegraph_dir() + "/stackcollapse-perf.pl", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  // stackcollapse-perf.pl folds both outputs to the same stacks. Where a known symbol naming
  // difference (known_symbol_difference) is in the input, it shows in the folded frames too:
  // the script outputs must then differ by those lines alone.
  void expect_same_folding(const std::string& data) {
    std::string perf_text = perf_script(data);
    std::string vperf_text = vperf_script(data);
    std::string theirs = stackcollapse(perf_text);
    ASSERT_FALSE(theirs.empty());
    std::string ours = stackcollapse(vperf_text);
    ScriptComparison comparison = compare_scripts(perf_text, vperf_text);
    if (comparison.known == 0) {
      EXPECT_TRUE(ours == theirs) << first_difference(theirs, ours);
    } else {
      EXPECT_EQ(comparison.unexplained, "");
      std::cout << "note: folded stacks not compared: " << comparison.known << " line(s) differ in known symbol naming\n";
    }
  }

  test::TempTree scratch_;
  mutable int collapse_count_ = 0;
};

TEST_F(ScriptCommand, CpuClockProfileWithoutCallchainsMatchesPerf) {
  std::string data = file("plain.data");
  record_vperf({"-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "200"});
  expect_same_as_perf(data);
}

TEST_F(ScriptCommand, CallchainProfileMatchesPerf) {
  std::string data = file("spin.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"});
  expect_same_as_perf(data);
  expect_same_as_perf(data, {"-G"});
}

TEST_F(ScriptCommand, KernelHeavyCallchainProfileMatchesPerf) {
  std::string data = file("getppid.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "getppid", "200000"});
  expect_same_as_perf(data);
  std::string faults = file("faults.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", faults, "--", VPERF_WORKLOAD, "page-faults", "20000"});
  expect_same_as_perf(faults);
}

TEST_F(ScriptCommand, PerfsOwnRecordingMatchesPerf) {
  std::string data = file("perf-spin.data");
  record_perf({"-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"});
  expect_same_as_perf(data);
  std::string plain = file("perf-plain.data");
  record_perf({"-e", "cpu-clock", "-o", plain, "--", VPERF_WORKLOAD, "getppid", "100000"});
  expect_same_as_perf(plain);
}

// --ns, --show-task-events, --show-mmap-events and -S, alone and together, on perf's and vperf's
// recordings of a shell that forks and execs the workload (COMM, FORK, EXIT, MMAP2 among the
// samples) and on a system-wide one: the same text as perf script's.
TEST_F(ScriptCommand, SideBandEventsNanosecondsAndSymbolFiltersMatchPerf) {
  const std::string command = std::string(VPERF_WORKLOAD) + " spin 50; true";
  const std::string mine = file("side-vperf.data"), theirs = file("side-perf.data"), wide = file("side-wide.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", mine, "--", "sh", "-c", command});
  record_perf({"-g", "-e", "cpu-clock", "-o", theirs, "--", "sh", "-c", command});
  record_vperf({"-a", "-e", "cpu-clock", "-o", wide, "--", "sh", "-c", command});
  for (const std::string& data : {mine, theirs, wide}) {
    for (std::vector<std::string> options :
         {std::vector<std::string>{"--ns"}, {"--show-task-events"}, {"--show-mmap-events"},
          {"--show-task-events", "--show-mmap-events", "--ns"}, {"--show-task-events", "-F", "comm,tid,time"},
          {"-S", "spin_leaf_hash"}, {"-S", "spin_leaf_hash,spin_leaf_math", "-G"}}) {
      SCOPED_TRACE(data + " " + options[0]);
      expect_same_as_perf(data, options);
    }
    const std::string tasks = vperf_script(data, {"--show-task-events"});
    EXPECT_NE(tasks.find(": PERF_RECORD_FORK("), std::string::npos) << tasks.substr(0, 2000);
    EXPECT_NE(tasks.find(": PERF_RECORD_COMM exec: vperf-workload:"), std::string::npos) << tasks.substr(0, 2000);
  }
  // -S keeps exactly the samples whose ip is in spin_leaf_hash.
  const std::string all = vperf_script(mine, {"-G"}), hashed = vperf_script(mine, {"-G", "-S", "spin_leaf_hash"});
  size_t expected = 0;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) expected += line.find(" spin_leaf_hash+0x") != std::string::npos;
  ASSERT_GT(expected, 0u);
  EXPECT_EQ(static_cast<size_t>(std::count(hashed.begin(), hashed.end(), '\n')), expected);
}

TEST_F(ScriptCommand, FieldSelectionsMatchPerf) {
  std::string data = file("fields.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "100"});
  for (std::vector<std::string> fields :
       {std::vector<std::string>{"-F", "comm,pid,tid,time,event,ip,sym,symoff,dso,period"},
        {"-F", "+pid"}, {"-F", "-period,-dso"}, {"-F", "ip,sym"}, {"-F", "ip"}, {"-F", "comm,tid"}, {"-F", "time"},
        {"-F", "event"}, {"-F", "period"}, {"-F", "sw:comm,tid,ip,sym"}, {"-F", "-ip"}, {"-F", "+period,-period"},
        {"-F", "ip,dso"}, {"-F", "-sym,-symoff"}}) {
    SCOPED_TRACE(fields[1]);
    expect_same_as_perf(data, fields);
  }
}

// perf script's text with every frame line cut to its address, and each inline chain perf
// prints for one address cut to that one address: the chain is " (inlined)" lines and then the
// outermost function's line (itself marked inlined when its DWARF name is not the ELF symbol's).
// Repeats of one address are cut to one in both outputs: perf's libdw unwinding repeats the
// caller of libc's clock_gettime ("run_spin+0x73" twice after __vdso_clock_gettime).
std::string frames_as_addresses(const std::string& script) {
  std::istringstream in(script);
  std::string line, out, previous_address;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '\t') {
      out += line + "\n";
      previous_address.clear();
      continue;
    }
    size_t start = line.find_first_not_of(" \t");
    std::string address = line.substr(start, line.find(' ', start) - start);
    if (address == previous_address) continue;  // the rest of an inline chain, or a repeat
    previous_address = address;
    out += "\t" + address + "\n";
  }
  return out;
}

// Samples split at blank lines, each starting with its header line.
std::vector<std::string> sample_blocks(const std::string& script) {
  std::vector<std::string> blocks(1);
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      if (!blocks.back().empty()) blocks.emplace_back();
      continue;
    }
    blocks.back() += line + "\n";
  }
  if (blocks.back().empty()) blocks.pop_back();
  return blocks;
}

// Drops, from both outputs, the samples where perf's libdw unwinding gave up (its -1 marker)
// or that were taken while execve ran (the user registers already in the new image, its maps
// not yet recorded): there vperf unwinds further, or keeps the unresolved user ip. Known
// differences, kept out of the frame-for-frame comparison and named in docs/call-graphs.md.
void drop_samples_perf_could_not_unwind(std::string& perf_text, std::string& vperf_text) {
  std::set<std::string> dropped;
  for (const std::string& b : sample_blocks(perf_text))
    if (b.find("\tffffffffffffffff [unknown]") != std::string::npos || b.find(" bprm_execve+") != std::string::npos)
      dropped.insert(b.substr(0, b.find('\n')));
  // While execve runs, the user ip is in the new image before its maps are recorded: vperf keeps
  // it unresolved, perf leaves it out.
  for (const std::string& b : sample_blocks(vperf_text))
    if (b.find(" [unknown] ([unknown])") != std::string::npos && b.find("\tffffffff") != std::string::npos)
      dropped.insert(b.substr(0, b.find('\n')));
  // perf also gives up on some user stacks entirely (the dynamic loader's at start-up): no user
  // frame in its block, where vperf unwinds some.
  auto has_user_frame = [](const std::string& block) {
    std::istringstream lines(block);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] != '\t') continue;
      std::istringstream words(line);
      std::string address;
      if (words >> address && !address.starts_with("ffffffff")) return true;
    }
    return false;
  };
  std::set<std::string> vperf_unwound_user;
  for (const std::string& b : sample_blocks(vperf_text))
    if (has_user_frame(b)) vperf_unwound_user.insert(b.substr(0, b.find('\n')));
  for (const std::string& b : sample_blocks(perf_text))
    if (!has_user_frame(b) && vperf_unwound_user.count(b.substr(0, b.find('\n')))) dropped.insert(b.substr(0, b.find('\n')));
  // A known gap of vperf's unwinder (docs/call-graphs.md): libdwfl stops at glibc's lazy-binding
  // trampoline (_dl_runtime_resolve_*, whose CFA is rbx-based: elfutils 0.188 marks rax, not
  // rbx, callee-saved), where perf's libunwind goes on to its callers. A sample taken while a lazily bound function is resolved (seen at exit, in
  // __cxa_finalize) is dropped only when vperf's frames are exactly perf's down to the trampoline.
  std::map<std::string, std::string> vperf_blocks;
  for (const std::string& b : sample_blocks(vperf_text)) vperf_blocks.emplace(b.substr(0, b.find('\n')), b);
  for (const std::string& b : sample_blocks(perf_text)) {
    const size_t trampoline = b.find(" _dl_runtime_resolve");
    if (trampoline == std::string::npos) continue;
    const std::string head = b.substr(0, b.find('\n'));
    const std::string down_to_it = b.substr(0, b.find('\n', trampoline) + 1);
    auto mine = vperf_blocks.find(head);
    if (mine != vperf_blocks.end() && mine->second == down_to_it) dropped.insert(head);
  }
  auto keep = [&](const std::string& text) {
    std::string out;
    for (const std::string& b : sample_blocks(text))
      if (!dropped.count(b.substr(0, b.find('\n')))) out += b + "\n";
    return out;
  };
  perf_text = keep(perf_text);
  vperf_text = keep(vperf_text);
}

// --call-graph dwarf, through run_script in-process (its reading session unwinds the user
// stacks with libdwfl, as the binary does). Both expand DWARF-unwound frames
// into inline chains, but perf 6.1 names them through binutils' addr2line and marks an
// out-of-line function "(inlined)" when its DWARF name differs from its symbol's
// (intel_check_word vs intel_check_word.constprop.0), so names are compared where that cannot
// happen (the workload's own frames) and in dwarf_unwind_test.cpp. Every sample line, every
// frame's address, the frames' order must be the same. A file recorded by perf.
TEST_F(ScriptCommand, DwarfCallchainsMatchPerfUpToInlineExpansion) {
  std::string data = file("dwarf.data");
  record_perf({"--call-graph", "dwarf", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "200"});
  std::string theirs = perf_script(data);
  ASSERT_FALSE(theirs.empty());
  std::ostringstream out, err;
  cli::ScriptOptions options;
  options.source.input = data;
  EXPECT_EQ(cli::run_script(options, out, err), 0);
  std::string ours = out.str();
  drop_samples_perf_could_not_unwind(theirs, ours);
  EXPECT_TRUE(frames_as_addresses(ours) == frames_as_addresses(theirs))
      << first_difference(frames_as_addresses(theirs), frames_as_addresses(ours));
  // Frames of the workload itself have no inlines: there the symbols match too.
  EXPECT_NE(ours.find(" spin_phase_hash+0x"), std::string::npos);
}

// -F srcline: under each address its source line, perf's way. The workload built with DWARF
// (vperf-workload-dwarf) names its lines; ld.so's _start sits in a unit with no line (":0");
// the kernel from kallsyms falls back to "DSO[ADDR]". Byte for byte perf's, with and without
// call chains, but for the system libraries' source lines (below).
TEST_F(ScriptCommand, SrclineFieldMatchesPerf) {
  for (const bool callchains : {false, true}) {
    SCOPED_TRACE(callchains ? "-g" : "no call chains");
    const std::string data = file(callchains ? "srcline-g.data" : "srcline.data");
    std::vector<std::string> record = {"-e", "cpu-clock", "-F", "2000", "-o", data};
    if (callchains) record.push_back("-g");
    record.insert(record.end(), {"--", VPERF_WORKLOAD_DWARF, "spin", "200"});
    record_perf(record);
    // The source lines of the system's libraries (Debian's debug files, DWARF 5) are left out:
    // there perf's addr2line names the including file for an included one, depending on
    // where the samples fell (strtol.c:106 for strtoul.c:106).
    auto without_library_lines = [](const std::string& text) {
      std::string out;
      bool library = false;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) {
        const bool srcline = line.starts_with("  ") && !line.starts_with("\t");
        if (!(srcline && library)) out += line + "\n";
        if (!srcline) library = line.find("(/usr/lib/") != std::string::npos || line.find("(/lib/") != std::string::npos;
      }
      return out;
    };
    const std::string theirs = without_library_lines(perf_script(data, {"-F", "comm,ip,sym,dso,srcline"}));
    EXPECT_NE(theirs.find("spin.cpp:"), std::string::npos) << theirs.substr(0, 2000);
    EXPECT_EQ(without_library_lines(vperf_script(data, {"-F", "comm,ip,sym,dso,srcline"})), theirs);
  }
  test::ProgramResult without_ip = test::run_vperf({"script", "-i", file("srcline.data"), "-F", "comm,srcline"});
  EXPECT_EQ(without_ip.exit_code, 1);  // as every field the file cannot fill
  EXPECT_EQ(std::count(without_ip.err.begin(), without_ip.err.end(), '\n'), 1) << without_ip.err;
  EXPECT_NE(without_ip.err.find("'srcline' needs field 'ip'"), std::string::npos) << without_ip.err;
}

TEST_F(ScriptCommand, PipeModeMatchesPerf) {
  std::string stream = file("spin.pipe");
  record_vperf_pipe(stream, "-g -e cpu-clock -- " + std::string(VPERF_WORKLOAD) + " spin 200");
  std::string theirs = piped("perf", stream);
  ASSERT_FALSE(theirs.empty());
  std::string ours = piped(quote(VPERF_BINARY), stream);
  EXPECT_SCRIPT_MATCHES(theirs, ours);
}

class ScriptTracepoints : public ScriptCommand {
 protected:
  void SetUp() override {
    ScriptCommand::SetUp();
    if (IsSkipped()) return;
    if (!test::has_tracefs()) GTEST_SKIP() << "needs tracefs for sched:sched_switch";
  }
  // Something to switch between on both CPUs.
  std::string workload() const { return std::string(VPERF_WORKLOAD) + " sleep 300"; }
};

TEST_F(ScriptTracepoints, SchedSwitchOfVperfsRecordingMatchesPerf) {
  std::string data = file("switch.data");
  record_vperf({"-e", "sched:sched_switch", "-a", "-o", data, "--", VPERF_WORKLOAD, "sleep", "300"});
  std::string ours = vperf_script(data);
  EXPECT_NE(ours.find("prev_comm="), std::string::npos);
  EXPECT_NE(ours.find(" ==> next_comm="), std::string::npos);
  expect_same_as_perf(data);
  expect_same_as_perf(data, {"-F", "comm,pid,tid,cpu,time,period,event,trace"});
  expect_same_as_perf(data, {"-F", "trace:+ip,-cpu"});
}

// Issue 30: a print fmt that divides by zero on every sample (the recording's own sched_switch
// format, edited in place to the same length) prints each sample from its fields, says so in one
// warning line and exits 1, in script and in report --sort trace: never a SIGFPE, never silent.
TEST_F(ScriptTracepoints, AnUnsafePrintFmtPrintsFieldsWarnsAndExitsOne) {
  std::string data = file("unsafe.data");
  record_vperf({"-e", "sched:sched_switch", "-a", "-o", data, "--", VPERF_WORKLOAD, "sleep", "300"});
  std::string bytes;
  {
    std::ifstream in(data, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string safe = ", REC->prev_prio,", unsafe = ",REC->prev_pid%0,";
  ASSERT_EQ(safe.size(), unsafe.size());
  const size_t at = bytes.find(safe);
  ASSERT_NE(at, std::string::npos) << "sched_switch's print fmt names prev_prio";
  bytes.replace(at, safe.size(), unsafe);
  std::ofstream(data, std::ios::binary | std::ios::trunc) << bytes;

  test::ProgramResult script = test::run_vperf({"script", "-i", data});
  EXPECT_EQ(script.exit_code, 1) << script.err;
  const size_t samples = static_cast<size_t>(std::count(script.out.begin(), script.out.end(), '\n'));
  ASSERT_GT(samples, 0u);
  EXPECT_EQ(test::count_lines_with(script.out, "[UNSAFE FORMAT] prev_comm="), samples) << script.out;
  EXPECT_EQ(test::count_lines_with(script.err, "vperf: warning: " + std::to_string(samples) +
                                              " tracepoint samples printed from their fields ([UNSAFE FORMAT])"),
            1u)
      << script.err;

  test::ProgramResult report = test::run_vperf({"report", "--stdio", "--sort", "trace", "-i", data});
  EXPECT_EQ(report.exit_code, 1) << report.err;
  EXPECT_NE(report.out.find("[UNSAFE FORMAT] prev_comm="), std::string::npos) << report.out;
  EXPECT_NE(report.err.find(" tracepoint samples printed from their fields ([UNSAFE FORMAT])"), std::string::npos)
      << report.err;
}

TEST_F(ScriptTracepoints, SchedSwitchOfPerfsRecordingMatchesPerf) {
  std::string data = file("perf-switch.data");
  record_perf({"-e", "sched:sched_switch", "-a", "-o", data, "--", VPERF_WORKLOAD, "sleep", "300"});
  expect_same_as_perf(data);
}

TEST_F(ScriptTracepoints, SchedSwitchWithCallchainsMatchesPerfInFileAndPipeMode) {
  std::string data = file("switch-g.data");
  record_vperf({"-g", "-e", "sched:sched_switch", "-a", "-o", data, "--", VPERF_WORKLOAD, "sleep", "300"});
  expect_same_as_perf(data);

  std::string stream = file("switch-g.pipe");
  record_vperf_pipe(stream, "-g -e sched:sched_switch -a -- " + workload());
  std::string theirs = piped("perf", stream);
  ASSERT_FALSE(theirs.empty());
  std::string ours = piped(quote(VPERF_BINARY), stream);
  EXPECT_SCRIPT_MATCHES(theirs, ours);
}

TEST_F(ScriptTracepoints, SchedSwitchInPipeModeMatchesPerf) {
  std::string stream = file("switch.pipe");
  record_vperf_pipe(stream, "-e sched:sched_switch -a -- " + workload());
  std::string theirs = piped("perf", stream);
  ASSERT_NE(theirs.find("prev_comm="), std::string::npos) << theirs.substr(0, 400);
  std::string ours = piped(quote(VPERF_BINARY), stream);
  EXPECT_SCRIPT_MATCHES(theirs, ours);

  std::string perf_stream = file("perf-switch.pipe");
  test::ProgramResult r = test::run_program(
      {"sh", "-c", "perf record -q -e sched:sched_switch -a -o - -- " + workload() + " > " + quote(perf_stream) + " 2>/dev/null"});
  ASSERT_EQ(r.exit_code, 0);
  theirs = piped("perf", perf_stream);
  ASSERT_FALSE(theirs.empty());
  ours = piped(quote(VPERF_BINARY), perf_stream);
  EXPECT_SCRIPT_MATCHES(theirs, ours);
}

TEST_F(ScriptCommand, StackcollapseFoldsVperfScriptAsPerfScript) {
  VPERF_REQUIRE(!test::flamegraph_dir().empty(), "the FlameGraph scripts (../shared/tools/FlameGraph, or FLAMEGRAPH_DIR)");
  std::string spin = file("collapse-spin.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", spin, "--", VPERF_WORKLOAD, "spin", "300"});
  expect_same_folding(spin);
  std::string kernel = file("collapse-getppid.data");
  record_vperf({"-g", "-e", "cpu-clock", "-o", kernel, "--", VPERF_WORKLOAD, "getppid", "200000"});
  expect_same_folding(kernel);
  std::string perfs = file("collapse-perf.data");
  record_perf({"-g", "-e", "cpu-clock", "-o", perfs, "--", VPERF_WORKLOAD, "page-faults", "20000"});
  expect_same_folding(perfs);
}

// --header: the file's header (perf report --header-only's lines), then the samples, byte for
// byte as perf script --header prints them; a pipe's header is not known before its samples.
TEST_F(ScriptCommand, HeaderComesFirstAsPerfPrintsIt) {
  std::string data = file("header.data");
  record_perf({"-g", "-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "100"});
  test::ProgramResult theirs = test::run_program({"perf", "script", "--header", "-i", data});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  test::ProgramResult ours = test::run_vperf({"script", "--header", "-i", data});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  ASSERT_EQ(ours.out.rfind("# ========\n# captured on", 0), 0u) << ours.out.substr(0, 200);
  EXPECT_SCRIPT_MATCHES(theirs.out, ours.out);
  test::ProgramResult piped = test::run_program(
      {"sh", "-c", quote(VPERF_BINARY) + " record -q -e cpu-clock -o - -- " + VPERF_WORKLOAD + " spin 20 | " + quote(VPERF_BINARY) +
                       " script --header -i -"});
  EXPECT_NE(piped.err.find("--header reads a file's header, and the input is a pipe"), std::string::npos) << piped.err;
}

TEST_F(ScriptCommand, TruncatedFilePrintsWhatItHoldsAndOneWarning) {
  std::string data = file("whole.data");
  record_vperf({"-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "300"});
  std::string whole = vperf_script(data);
  std::string cut = file("cut.data");
  fs::copy_file(data, cut);
  fs::resize_file(cut, fs::file_size(data) * 2 / 3);  // into the middle of the samples
  test::ProgramResult r = test::run_vperf({"script", "-i", cut});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_LT(r.out.size(), whole.size());
  // Records before the cut file's last round come out as in the whole file. At the cut the
  // reader flushes what it holds, in time order; in the whole file those come later,
  // interleaved with the next rounds' records of earlier times (another CPU's ring, drained
  // later): the rest is the whole output's remainder with lines left out, in the same order.
  auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  const std::vector<std::string> cut_lines = lines_of(r.out), whole_lines = lines_of(whole);
  size_t same = 0;
  while (same < cut_lines.size() && same < whole_lines.size() && cut_lines[same] == whole_lines[same]) ++same;
  size_t at = same;
  for (size_t i = same; i < cut_lines.size(); ++i) {
    while (at < whole_lines.size() && whole_lines[at] != cut_lines[i]) ++at;
    ASSERT_LT(at, whole_lines.size()) << "line " << i + 1 << " of the cut file's output is not in the whole's, in order: " << cut_lines[i];
    ++at;
  }
  EXPECT_GT(same, 0u) << "the lines before the damage are the same";
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("vperf: warning: ", 0), 0u) << r.err;
}

TEST_F(ScriptCommand, BadInputIsOneErrorLine) {
  test::ProgramResult missing = test::run_vperf({"script", "-i", file("absent.data")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_EQ(missing.err.rfind("vperf: error: cannot read", 0), 0u) << missing.err;
  EXPECT_NE(missing.err.find("(hint: "), std::string::npos) << missing.err;

  std::string junk = file("junk.data");
  std::ofstream(junk) << std::string(4096, 'x');
  test::ProgramResult malformed = test::run_vperf({"script", "-i", junk});
  EXPECT_NE(malformed.exit_code, 0);
  EXPECT_EQ(std::count(malformed.err.begin(), malformed.err.end(), '\n'), 1) << malformed.err;
  EXPECT_EQ(malformed.err.rfind("vperf: error: ", 0), 0u) << malformed.err;

  std::string data = file("ok.data");
  record_vperf({"-e", "cpu-clock", "-o", data, "--", VPERF_WORKLOAD, "spin", "50"});
  test::ProgramResult field = test::run_vperf({"script", "-i", data, "-F", "comm,foo"});
  EXPECT_EQ(field.exit_code, 2);
  EXPECT_EQ(field.out, "");
  EXPECT_EQ(field.err.rfind("vperf: error: unknown field 'foo'", 0), 0u) << field.err;
  EXPECT_EQ(std::count(field.err.begin(), field.err.end(), '\n'), 1) << field.err;

  test::ProgramResult cpu = test::run_vperf({"script", "-i", data, "-F", "comm,cpu"});
  EXPECT_EQ(cpu.exit_code, 1);
  EXPECT_EQ(std::count(cpu.err.begin(), cpu.err.end(), '\n'), 1) << cpu.err;
  EXPECT_NE(cpu.err.find("CPU"), std::string::npos) << cpu.err;
}

}  // namespace
}  // namespace vperf
