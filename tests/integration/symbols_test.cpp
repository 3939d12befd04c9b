// Symbol resolution (src/symbols) against ground truth on this machine:
//  - nm and readelf for vperf-workload's functions;
//  - /proc/kallsyms, read here line by line, for kernel addresses;
//  - Linux perf 6.1's own answers: perf records vperf-workload, `perf script` prints
//    (ip, sym, dso) for every sample and callchain entry, the Machine is fed the same
//    PERF_RECORD_MMAP/MMAP2/COMM events (parsed from perf script --show-mmap-events) and must
//    name the same symbol and dso.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"
#include "symbols/demangle.h"
#include "symbols/dso.h"
#include "symbols/machine.h"

namespace vperf::symbols {
namespace {

constexpr uint64_t kKernelStart = 0xffff800000000000ULL;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

uint64_t hex_value(const std::string& s) { return std::stoull(s, nullptr, 16); }

// ---------------------------------------------------------------- nm / readelf

TEST(SymbolsGroundTruth, WorkloadFunctionsAgreeWithNm) {
  VPERF_REQUIRE(!test::find_program("nm").empty(), "nm");
  Dso dso(DsoKind::User, VPERF_WORKLOAD, Dso::elf_loader(SymbolConfig{}, VPERF_WORKLOAD, std::nullopt));
  ASSERT_FALSE(dso.load_error().has_value()) << dso.load_error()->describe();
  // nm's text symbols; an address with several names (aliases) is left out.
  std::map<uint64_t, std::vector<std::string>> by_address;
  for (const auto& line : lines_of(test::run_program({"nm", "--defined-only", VPERF_WORKLOAD}).out)) {
    if (line.size() < 20 || (line[17] != 'T' && line[17] != 't')) continue;
    by_address[hex_value(line.substr(0, 16))].push_back(line.substr(19));
  }
  size_t checked = 0, agreed = 0;
  for (const auto& [address, names] : by_address) {
    if (names.size() != 1) continue;
    const Symbol* sym = dso.symbols().find(address);
    ++checked;
    if (sym != nullptr && sym->start == address && sym->name == demangle(names[0])) ++agreed;
    else ADD_FAILURE() << "nm: " << names[0] << " at " << std::hex << address << ", vperf: " << (sym ? sym->name : "none");
  }
  std::cout << "[ nm       ] " << agreed << "/" << checked << " text symbols of vperf-workload agree\n";
  EXPECT_GT(checked, 20u);
}

TEST(SymbolsGroundTruth, SpinFunctionSizesAgreeWithReadelf) {
  VPERF_REQUIRE(!test::find_program("readelf").empty(), "readelf");
  Dso dso(DsoKind::User, VPERF_WORKLOAD, Dso::elf_loader(SymbolConfig{}, VPERF_WORKLOAD, std::nullopt));
  std::set<std::string> wanted{"spin_leaf_hash", "spin_leaf_math", "spin_phase_hash", "spin_phase_math", "spin_phase_outer"};
  size_t seen = 0;
  // "   42: 0000000000002d60   123 FUNC    GLOBAL DEFAULT   15 spin_leaf_hash"
  static const std::regex row(R"(^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+FUNC\s+\S+\s+\S+\s+\S+\s+(\S+)$)");
  for (const auto& line : lines_of(test::run_program({"readelf", "-sW", VPERF_WORKLOAD}).out)) {
    std::smatch m;
    if (!std::regex_match(line, m, row) || !wanted.count(m[3].str())) continue;
    const Symbol* sym = dso.symbols().find_by_name(m[3].str());
    ASSERT_NE(sym, nullptr) << m[3];
    EXPECT_EQ(sym->start, hex_value(m[1].str())) << m[3];
    EXPECT_EQ(sym->size(), std::stoull(m[2].str())) << m[3];
    ++seen;
  }
  EXPECT_EQ(seen, wanted.size());
}

// ---------------------------------------------------------------- /proc/kallsyms

TEST(SymbolsGroundTruth, KernelAddressesResolveToTheirKallsymsNames) {
  VPERF_REQUIRE(test::running_as_root(), "root (kallsyms addresses)");
  Machine machine{SymbolConfig{}};
  auto created = machine.create_kernel_maps();
  ASSERT_TRUE(created.ok()) << created.error().describe();
  // Read /proc/kallsyms independently: address -> names, for text symbols.
  auto text = lines_of(test::run_program({"cat", "/proc/kallsyms"}).out);
  std::map<uint64_t, std::vector<std::string>> names;
  std::map<std::string, uint64_t> address_of;
  for (const auto& line : text) {
    std::istringstream in(line);
    std::string addr, type, name, module;
    in >> addr >> type >> name >> module;
    if (!module.empty() || (type != "T" && type != "t")) continue;
    names[hex_value(addr)].push_back(name);
    address_of[name] = hex_value(addr);
  }
  size_t checked = 0;
  for (const char* wanted : {"do_syscall_64", "schedule", "__x64_sys_getppid", "posix_cpu_clock_get", "task_sched_runtime",
                             "_raw_spin_lock", "ksys_read", "vfs_read"}) {
    auto it = address_of.find(wanted);
    if (it == address_of.end() || names[it->second].size() != 1) continue;  // absent or aliased
    auto next = names.upper_bound(it->second);
    uint64_t probe = next == names.end() ? it->second : it->second + (next->first - it->second) / 2;
    auto r = machine.resolve(-1, -1, PERF_RECORD_MISC_KERNEL, probe);
    EXPECT_EQ(r.symbol_name(), wanted) << std::hex << probe;
    EXPECT_EQ(r.dso_name(), "[kernel.kallsyms]");
    EXPECT_EQ(r.symbol_offset, probe - it->second);
    ++checked;
  }
  EXPECT_GE(checked, 4u);
}

// ---------------------------------------------------------------- perf's answers

struct PerfFrame {
  uint64_t address = 0;  // as perf script printed it
  std::string sym, dso;
};

// "    ADDR SYM (DSO)" -> frame; SYM may contain spaces ("std::vector<int, ...>::push_back").
bool parse_frame(std::string line, PerfFrame& out) {
  size_t a = line.find_first_not_of(" \t");
  if (a == std::string::npos) return false;
  line = line.substr(a);
  size_t sp = line.find(' ');
  size_t paren = line.rfind(" (");
  if (sp == std::string::npos || paren == std::string::npos || paren < sp || line.back() != ')') return false;
  try {
    out.address = hex_value(line.substr(0, sp));
  } catch (...) {
    return false;
  }
  out.sym = line.substr(sp + 1, paren - sp - 1);
  out.dso = line.substr(paren + 2, line.size() - paren - 3);
  return true;
}

struct Agreement {
  size_t total = 0, agreed = 0;
  std::vector<std::string> mismatches;
  void add(bool ok, const std::string& what) {
    ++total;
    if (ok) ++agreed;
    else if (mismatches.size() < 10) mismatches.push_back(what);
  }
  double ratio() const { return total == 0 ? 0.0 : static_cast<double>(agreed) / static_cast<double>(total); }
  std::string describe() const {
    std::string s = std::to_string(agreed) + "/" + std::to_string(total) + " agree";
    for (const auto& m : mismatches) s += "\n  " + m;
    return s;
  }
};

struct CrossCheck {
  Agreement user, kernel, user_frames, kernel_frames;
  std::map<std::string, size_t> user_by_dso;
};

// Records `workload_args` with perf and compares perf script's names with the Machine's, for
// sample ips (pass 1) and every callchain entry (pass 2).
void cross_check_with_perf(const std::vector<std::string>& workload_args, CrossCheck& out) {
  test::TempTree tree;
  std::string data = (tree.root() / "perf.data").string();
  std::vector<std::string> argv{"perf", "record", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, "--", VPERF_WORKLOAD};
  argv.insert(argv.end(), workload_args.begin(), workload_args.end());
  auto rec = test::run_program(argv);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  // Pass 1: events and sample ips (absolute), one sample per line.
  auto events = test::run_program({"perf", "script", "-i", data, "-G", "-F", "tid,ip,sym,dso", "--show-mmap-events",
                                   "--show-task-events"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  Machine machine{SymbolConfig{}};
  static const std::regex mmap_re(
      R"(PERF_RECORD_MMAP2? (-?\d+)/(-?\d+): \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+)[^\]]*\]: (\S+) (.+)$)");
  static const std::regex comm_re(R"(PERF_RECORD_COMM( exec)?: (.*):(-?\d+)/(-?\d+)$)");
  static const std::regex fork_re(R"(PERF_RECORD_FORK\((-?\d+):(-?\d+)\):\((-?\d+):(-?\d+)\))");
  // dso name -> (start, pgoff) of its executable mapping, to turn perf's map-relative
  // callchain addresses back into ips.
  std::map<std::string, std::pair<uint64_t, uint64_t>> exec_maps;
  Agreement& user = out.user;
  Agreement& kernel = out.kernel;
  std::map<std::string, size_t>& user_by_dso = out.user_by_dso;
  for (const auto& line : lines_of(events.out)) {
    std::smatch m;
    if (std::regex_search(line, m, mmap_re)) {
      MmapEvent e;
      e.pid = std::stoi(m[1].str());
      e.tid = std::stoi(m[2].str());
      e.start = hex_value(m[3].str());
      e.len = hex_value(m[4].str());
      e.pgoff = hex_value(m[5].str());
      std::string prot = m[6].str();
      e.prot = (prot.find('r') != std::string::npos ? PROT_READ : 0) | (prot.find('x') != std::string::npos ? PROT_EXEC : 0);
      e.filename = m[7].str();
      e.cpumode = e.pid == -1 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
      machine.process_mmap(e);
      if (e.pid != -1 && (e.prot & PROT_EXEC)) exec_maps[e.filename] = {e.start, e.pgoff};
      continue;
    }
    if (std::regex_search(line, m, comm_re)) {
      machine.process_comm(std::stoi(m[3].str()), std::stoi(m[4].str()), m[2].str(), m[1].matched);
      continue;
    }
    if (std::regex_search(line, m, fork_re)) {
      machine.process_fork(std::stoi(m[1].str()), std::stoi(m[3].str()), std::stoi(m[2].str()), std::stoi(m[4].str()));
      continue;
    }
    if (line.find("PERF_RECORD_") != std::string::npos) continue;
    // "13827      5649c3f83dab spin_leaf_hash (/path)"
    std::istringstream in(line);
    int tid = 0;
    if (!(in >> tid)) continue;
    std::string rest;
    std::getline(in, rest);
    PerfFrame f;
    if (!parse_frame(rest, f)) continue;
    bool in_kernel = f.address >= kKernelStart;
    auto r = machine.resolve(tid, tid, in_kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER, f.address);
    bool ok = r.symbol_name() == f.sym && r.dso_name() == f.dso;
    std::ostringstream what;
    what << std::hex << f.address << ": perf " << f.sym << " (" << f.dso << "), vperf " << r.symbol_name() << " ("
         << r.dso_name() << ")";
    (in_kernel ? kernel : user).add(ok, what.str());
    if (!in_kernel) ++user_by_dso[f.dso];
  }
  std::cout << "[ samples  ] user: " << user.describe() << "\n[ samples  ] kernel: " << kernel.describe() << "\n";

  // Pass 2: whole callchains. perf prints user entries map-relative (map_ip) and kernel entries
  // as they are; the sample's thread is the workload's only thread.
  auto chains = test::run_program({"perf", "script", "-i", data, "-F", "tid,ip,sym,dso"});
  ASSERT_EQ(chains.exit_code, 0) << chains.err;
  Agreement& user_frames = out.user_frames;
  Agreement& kernel_frames = out.kernel_frames;
  int tid = -1;
  for (const auto& line : lines_of(chains.out)) {
    if (line.empty()) continue;
    if (line[0] != '\t') {  // "13827 ": the header line of a sample, its frames follow
      std::istringstream in(line);
      in >> tid;
      continue;
    }
    PerfFrame f;
    if (!parse_frame(line, f)) continue;
    bool in_kernel = f.address >= kKernelStart;
    uint64_t ip = f.address;
    // perf prints an address outside every map as it is, with dso "[unknown]".
    if (!in_kernel && f.dso != "[unknown]") {
      auto it = exec_maps.find(f.dso);
      if (it == exec_maps.end()) {
        user_frames.add(false, "no mapping for " + f.dso);
        continue;
      }
      ip = f.address - it->second.second + it->second.first;
    }
    auto r = machine.resolve(tid, tid, in_kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER, ip);
    bool ok = r.symbol_name() == f.sym && r.dso_name() == f.dso && (in_kernel || !r.map || r.map_relative == f.address);
    std::ostringstream what;
    what << std::hex << f.address << ": perf " << f.sym << " (" << f.dso << "), vperf " << r.symbol_name() << " ("
         << r.dso_name() << ") at " << r.map_relative;
    (in_kernel ? kernel_frames : user_frames).add(ok, what.str());
  }
  std::cout << "[ chains   ] user frames: " << user_frames.describe() << "\n[ chains   ] kernel frames: " << kernel_frames.describe()
            << "\n";
}

TEST(SymbolsPerfCrossCheck, SpinWorkloadSamplesAndCallchainsAgreeWithPerfScript) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf");
  VPERF_REQUIRE(test::running_as_root(), "root (perf record, kernel symbols)");
  CrossCheck c;
  cross_check_with_perf({"spin", "300"}, c);
  if (HasFatalFailure()) return;
  ASSERT_GT(c.user.total, 100u) << "perf recorded too few user samples";
  EXPECT_GE(c.user.ratio(), 0.99) << c.user.describe();
  EXPECT_EQ(c.kernel.agreed, c.kernel.total) << c.kernel.describe();
  EXPECT_GT(c.user_by_dso[VPERF_WORKLOAD], 100u);
  ASSERT_GT(c.user_frames.total, 500u);
  EXPECT_GE(c.user_frames.ratio(), 0.99) << c.user_frames.describe();
  EXPECT_EQ(c.kernel_frames.agreed, c.kernel_frames.total) << c.kernel_frames.describe();
}

// getppid in a loop: most samples in the kernel (syscall entry, getppid), the rest in libc
// (symbols from libc6-dbg's debug file when installed, as perf finds them) and the [vdso].
TEST(SymbolsPerfCrossCheck, SyscallWorkloadKernelSamplesAgreeWithPerfScript) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf");
  VPERF_REQUIRE(test::running_as_root(), "root (perf record, kernel symbols)");
  CrossCheck c;
  cross_check_with_perf({"getppid", "1500000"}, c);
  if (HasFatalFailure()) return;
  ASSERT_GT(c.kernel.total, 50u) << "perf recorded too few kernel samples";
  EXPECT_EQ(c.kernel.agreed, c.kernel.total) << c.kernel.describe();
  EXPECT_EQ(c.kernel_frames.agreed, c.kernel_frames.total) << c.kernel_frames.describe();
  EXPECT_GE(c.user.ratio(), 0.99) << c.user.describe();
  EXPECT_GE(c.user_frames.ratio(), 0.99) << c.user_frames.describe();
}



}  // namespace
}  // namespace vperf::symbols
