// vperf kvm against a real guest's symbols: scripts/test-guest.sh boots Debian's 6.1 kernel
// (support/guest_rig.h) and keeps its /proc/kallsyms and /proc/modules; perf.data files with
// guest samples at that guest's addresses are written the way the host's kernel and perf kvm
// record write them, and `perf kvm --guestkallsyms --guestmodules report` (perf 6.1) is the
// oracle for what a single-guest file shows. Beyond perf (each test says which): no guest MMAP
// records needed, several guests by VMM pid, guest callchains, the vCPU thread as comm, a
// zeroed guest kallsyms refused.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <algorithm>
#include <iostream>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/guest_rig.h"
#include "support/run_program.h"

namespace vperf {
namespace {

namespace fs = std::filesystem;

struct KallsymsLine {
  uint64_t address = 0;
  char type = 0;
  std::string name;
  std::string module;  // without brackets; empty for the kernel image
};

std::vector<KallsymsLine> read_kallsyms(const fs::path& path) {
  std::vector<KallsymsLine> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    KallsymsLine k;
    char name[512] = {}, module[128] = {};
    unsigned long long address = 0;
    int n = std::sscanf(line.c_str(), "%llx %c %511s [%127[^]]]", &address, &k.type, name, module);
    if (n < 3) continue;
    k.address = address;
    k.name = name;
    k.module = n == 4 ? module : "";
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const KallsymsLine& a, const KallsymsLine& b) { return a.address < b.address; });
  return out;
}

// A text symbol and the address of the next symbol after it (its end, as perf sizes it).
struct TextSymbol {
  std::string name;
  std::string module;
  uint64_t start = 0, end = 0;
};

std::optional<TextSymbol> text_symbol(const std::vector<KallsymsLine>& all, const std::string& module,
                                      const std::vector<std::string>& names) {
  for (const std::string& wanted : names)
    for (size_t i = 0; i + 1 < all.size(); ++i) {
      const KallsymsLine& k = all[i];
      if (k.module != module || (k.type != 't' && k.type != 'T')) continue;
      if (!wanted.empty() && k.name != wanted) continue;
      uint64_t end = all[i + 1].address;
      if (end < k.address + 32) continue;
      return TextSymbol{k.name, k.module, k.address, end};
    }
  return std::nullopt;
}

// perf report --stdio's rows ("    50.00%  [guest.kernel.kallsyms]  [g] schedule"), comments and
// blank lines dropped.
std::vector<std::string> table_rows(const std::string& report) {
  std::vector<std::string> rows;
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    rows.push_back(line);
  }
  return rows;
}

std::string joined(const std::vector<std::string>& rows) {
  std::string out;
  for (const std::string& r : rows) out += r + "\n";
  return out;
}

class KvmGuest : public ::testing::Test {
 protected:
  static constexpr pid_t kVmm = 4000;
  static constexpr pid_t kVcpu0 = 4001;
  static constexpr pid_t kVcpu1 = 4002;

  void SetUp() override {
    VPERF_REQUIRE(!test::find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the real guest");
    Result<test::GuestRig> rig = test::guest_rig();
    ASSERT_TRUE(rig.ok()) << rig.error().describe();
    rig_ = *rig;
    symbols_ = read_kallsyms(rig_.kallsyms);
    ASSERT_GT(symbols_.size(), 50000u);
    auto pick = [&](const std::string& module, const std::vector<std::string>& names) {
      std::optional<TextSymbol> s = text_symbol(symbols_, module, names);
      EXPECT_TRUE(s.has_value()) << "no text symbol " << (names.empty() ? "" : names[0]) << " in " << module;
      return s.value_or(TextSymbol{});
    };
    schedule_ = pick("", {"schedule"});
    syscall_ = pick("", {"do_syscall_64"});
    module_ = pick("virtio_ring", {"vring_interrupt", ""});
  }

  // 50 samples in schedule, 30 in do_syscall_64, 20 in the virtio_ring function, 5 in guest
  // user space, over two vCPU threads of one VMM.
  test::GuestPerfData single_guest(bool with_maps) const {
    test::GuestPerfData d;
    d.threads = {{kVmm, kVmm, "qemu-system-x86"}, {kVmm, kVcpu0, "CPU 0/KVM"}, {kVmm, kVcpu1, "CPU 1/KVM"}};
    if (with_maps) d.guest_maps.push_back({0, rig_.kallsyms, rig_.modules});
    auto add = [&](int n, uint8_t mode, uint64_t ip) {
      for (int i = 0; i < n; ++i) d.samples.push_back({kVmm, i % 2 ? kVcpu1 : kVcpu0, mode, ip + 4 * (i % 4), {}});
    };
    add(50, PERF_RECORD_MISC_GUEST_KERNEL, schedule_.start + 8);
    add(30, PERF_RECORD_MISC_GUEST_KERNEL, syscall_.start + 16);
    add(20, PERF_RECORD_MISC_GUEST_KERNEL, module_.start + 4);
    add(5, PERF_RECORD_MISC_GUEST_USER, 0x401000);
    return d;
  }

  std::string write(const test::GuestPerfData& d, const std::string& name) {
    std::string path = (scratch_.root() / name).string();
    Result<void> ok = test::write_guest_perf_data(path, d);
    EXPECT_TRUE(ok.ok()) << ok.error().describe();
    return path;
  }

  std::vector<std::string> symbol_options() const {
    return {"--guestkallsyms", rig_.kallsyms.string(), "--guestmodules", rig_.modules.string()};
  }

  test::ProgramResult vperf_kvm(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    std::vector<std::string> argv = {"kvm"};
    argv.insert(argv.end(), before.begin(), before.end());
    argv.insert(argv.end(), after.begin(), after.end());
    return test::run_vperf(argv);
  }

  // perf kvm with a HOME of its own: what it knows then comes from the options, not from a
  // build-id cache (~/.debug) that earlier perf runs on this machine filled.
  test::ProgramResult perf_kvm(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    std::vector<std::string> argv = {"perf", "kvm"};
    argv.insert(argv.end(), before.begin(), before.end());
    argv.insert(argv.end(), after.begin(), after.end());
    fs::create_directories(scratch_.root() / "home");
    return test::run_program(argv, {{"HOME", (scratch_.root() / "home").string()}});
  }

  test::GuestRig rig_;
  std::vector<KallsymsLine> symbols_;
  TextSymbol schedule_, syscall_, module_;
  test::TempTree scratch_;
};

// perf 6.1 has no symbols for a guest module from kallsyms alone (it wants the .ko files) and
// shows each sample's offset in the module instead: "[g] 0x0000000000000d74". Those rows are
// replaced by one row per symbol the offsets fall in, their percentages added, so the rest of
// the table can be compared byte for byte. Checks that every offset lies in `symbol`.
std::vector<std::string> fold_module_offsets(const std::vector<std::string>& rows, const std::string& module,
                                             uint64_t module_base, const TextSymbol& symbol, double& folded_percent) {
  std::vector<std::string> out;
  folded_percent = 0;
  for (const std::string& row : rows) {
    // A guest-kernel row without a name (with --sort dso,sym its dso is the module's).
    size_t hex = row.rfind("[g] 0x");
    bool other_dso = row.find("  [") != std::string::npos && row.find("[" + module + "]") == std::string::npos &&
                     row.find("  [g]") == std::string::npos;
    if (hex == std::string::npos || other_dso) {
      out.push_back(row);
      continue;
    }
    uint64_t address = module_base + std::stoull(row.substr(hex + 4), nullptr, 16);
    EXPECT_TRUE(address >= symbol.start && address < symbol.end) << row;
    folded_percent += std::stod(row);
  }
  return out;
}

uint64_t module_base(const fs::path& modules, const std::string& name) {
  std::ifstream in(modules);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(name + " ")) return std::stoull(line.substr(line.rfind("0x") + 2), nullptr, 16);
  return 0;
}

// The oracle: perf kvm report on a file with the guest kernel and module maps perf kvm record
// writes. Same rows, byte for byte, for the dso/sym keys (perf shows the comm as ":TID"), but
// for the guest module's samples, which perf cannot name (above): there vperf names the
// function the offsets perf prints fall in, with the same total.
TEST_F(KvmGuest, ReportMatchesPerfKvmReport) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf kvm as the oracle");
  std::string data = write(single_guest(true), "perf.data.guest");
  const uint64_t base = module_base(rig_.modules, module_.module);
  ASSERT_NE(base, 0u);
  for (const std::vector<std::string>& sort : {std::vector<std::string>{"--sort", "dso,sym"}, {"--sort", "sym"}}) {
    std::vector<std::string> report = {"report", "--stdio", "-i", data};
    report.insert(report.end(), sort.begin(), sort.end());
    test::ProgramResult theirs = perf_kvm(symbol_options(), report);
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    test::ProgramResult ours = vperf_kvm(symbol_options(), report);
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    double perf_module_percent = 0, our_module_percent = 0;
    std::vector<std::string> perf_rows = fold_module_offsets(table_rows(theirs.out), module_.module, base, module_, perf_module_percent);
    // Where perf did name the module's function (its symbols came from elsewhere), the rows
    // must simply be equal.
    const bool perf_named_it = perf_module_percent == 0;
    std::vector<std::string> our_rows;
    for (const std::string& row : table_rows(ours.out)) {
      const bool module_row = row.ends_with("[g] " + module_.name);
      if (module_row) our_module_percent = std::stod(row);
      if (!module_row || perf_named_it) our_rows.push_back(row);
    }
    EXPECT_EQ(joined(our_rows), joined(perf_rows)) << sort[1];
    if (!perf_named_it) {
      EXPECT_NEAR(our_module_percent, perf_module_percent, 0.03) << sort[1];
    }
    EXPECT_NEAR(our_module_percent, 19.05, 0.01) << sort[1];
  }
  test::ProgramResult theirs = perf_kvm(symbol_options(), {"report", "--stdio", "-i", data, "--sort", "dso"});
  test::ProgramResult ours = vperf_kvm(symbol_options(), {"report", "--stdio", "-i", data, "--sort", "dso"});
  EXPECT_EQ(joined(table_rows(ours.out)), joined(table_rows(theirs.out)));
  test::ProgramResult by_sym = vperf_kvm(symbol_options(), {"report", "--stdio", "-i", data, "--sort", "sym"});
  EXPECT_NE(by_sym.out.find("47.62%  [g] " + schedule_.name), std::string::npos) << by_sym.out;
  EXPECT_NE(by_sym.out.find("[g] " + module_.name), std::string::npos) << by_sym.out;
}

// Samples in a guest module's functions resolve as perf kvm resolves them: the module's map from
// the file's guest MMAP records ("[virtio_console]", as perf kvm record writes it) or from
// --guestmodules, its symbols from the module's lines of --guestkallsyms. perf 6.1 names them
// with or without --guestmodules once the file has the module maps, in either sample order
// (the module sampled before or after the kernel image); the tables must be equal byte for
// byte. Beyond perf: a file without guest MMAP records shows the same table (perf resolves
// nothing there), the module maps then coming from --guestmodules or, without it, from the
// modules' symbols in --guestkallsyms.
TEST_F(KvmGuest, ModuleSymbolsResolveAsPerfKvm) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf kvm as the oracle");
  std::optional<TextSymbol> console = text_symbol(symbols_, "virtio_console", {"show_port_name", ""});
  ASSERT_TRUE(console.has_value());
  const std::vector<std::string> kallsyms_only = {"--guestkallsyms", rig_.kallsyms.string()};
  for (bool kernel_first : {true, false}) {
    auto file = [&](bool with_maps) {
      test::GuestPerfData d;
      d.threads = {{kVmm, kVmm, "qemu-system-x86"}, {kVmm, kVcpu0, "CPU 0/KVM"}};
      if (with_maps) d.guest_maps.push_back({0, rig_.kallsyms, rig_.modules});
      auto add = [&](int n, uint64_t ip) {
        for (int i = 0; i < n; ++i) d.samples.push_back({kVmm, kVcpu0, PERF_RECORD_MISC_GUEST_KERNEL, ip + 4 * (i % 4), {}});
      };
      if (kernel_first) add(3, schedule_.start + 8);
      add(4, console->start + 0x10);
      add(2, module_.start + 4);
      if (!kernel_first) add(3, schedule_.start + 8);
      return write(d, std::string(kernel_first ? "kernel-first" : "module-first") + (with_maps ? "-maps" : "") + ".data");
    };
    const std::string with_maps = file(true), without_maps = file(false);
    for (const std::vector<std::string>& options : {symbol_options(), kallsyms_only}) {
      const std::string what = std::string(kernel_first ? "kernel first" : "module first") +
                               (options.size() == 2 ? ", --guestkallsyms only" : ", --guestkallsyms and --guestmodules");
      for (const char* keys : {"dso,sym", "sym", "dso"}) {
        test::ProgramResult theirs = perf_kvm(options, {"report", "--stdio", "-i", with_maps, "--sort", keys});
        test::ProgramResult ours = vperf_kvm(options, {"report", "--stdio", "-i", with_maps, "--sort", keys});
        ASSERT_EQ(ours.exit_code, 0) << ours.err;
        EXPECT_EQ(joined(table_rows(ours.out)), joined(table_rows(theirs.out))) << keys << ", " << what;
        test::ProgramResult no_maps = vperf_kvm(options, {"report", "--stdio", "-i", without_maps, "--sort", keys});
        EXPECT_EQ(joined(table_rows(no_maps.out)), joined(table_rows(theirs.out))) << keys << ", " << what << ", no guest MMAPs";
      }
      test::ProgramResult named = vperf_kvm(options, {"report", "--stdio", "-i", with_maps, "--sort", "dso,sym"});
      EXPECT_NE(named.out.find("44.44%  [virtio_console]         [g] " + console->name), std::string::npos) << named.out;
    }
  }
}

// Beyond perf 6.1: without the guest MMAP records (a file from another recorder, or perf kvm
// record run without --guestkallsyms) perf kvm report resolves nothing; vperf makes the guest's
// kernel maps from --guestkallsyms/--guestmodules and shows the same table as with them.
TEST_F(KvmGuest, ResolvesWithoutGuestMmapRecords) {
  std::string with = write(single_guest(true), "with-maps.data");
  std::string without = write(single_guest(false), "without-maps.data");
  std::vector<std::string> report = {"report", "--stdio", "--sort", "dso,sym", "-i"};
  test::ProgramResult a = vperf_kvm(symbol_options(), [&] { auto r = report; r.push_back(with); return r; }());
  test::ProgramResult b = vperf_kvm(symbol_options(), [&] { auto r = report; r.push_back(without); return r; }());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(joined(table_rows(b.out)), joined(table_rows(a.out)));
  EXPECT_NE(b.out.find("[guest.kernel.kallsyms]  [g] " + schedule_.name), std::string::npos) << b.out;
  if (!test::find_program("perf").empty()) {
    test::ProgramResult perf = perf_kvm(symbol_options(), [&] { auto r = report; r.push_back(without); return r; }());
    // What perf 6.1 does with it: nothing resolves.
    EXPECT_EQ(perf.out.find("[g] " + schedule_.name), std::string::npos) << perf.out;
    std::cout << "perf kvm report without guest MMAP records:\n" << joined(table_rows(perf.out));
  }
}

// Beyond perf 6.1: the comm of a guest sample is the host thread's, the vCPU ("CPU 0/KVM");
// perf looks the thread up in the guest machine and prints ":4001".
TEST_F(KvmGuest, CommIsTheVcpuThread) {
  std::string data = write(single_guest(true), "comm.data");
  test::ProgramResult ours = vperf_kvm(symbol_options(), {"report", "--stdio", "--sort", "comm", "-i", data});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  std::vector<std::string> rows = table_rows(ours.out);
  ASSERT_EQ(rows.size(), 2u) << ours.out;
  // 105 samples, 53 on vCPU 0 and 52 on vCPU 1 (alternating).
  EXPECT_EQ(rows[0], "    50.48%  CPU 0/KVM");
  EXPECT_EQ(rows[1], "    49.52%  CPU 1/KVM");
  test::ProgramResult script = vperf_kvm(symbol_options(), {"script", "-i", data, "-F", "comm,tid,ip,sym"});
  EXPECT_NE(script.out.find("CPU 1/KVM  4002"), std::string::npos) << script.out.substr(0, 400);
}

// Beyond perf 6.1: guest callchains (PERF_CONTEXT_GUEST_KERNEL then guest addresses) are kept
// and resolved against the guest, frame by frame.
TEST_F(KvmGuest, GuestCallchainsAreResolved) {
  test::GuestPerfData d;
  d.threads = {{kVmm, kVcpu0, "CPU 0/KVM"}};
  d.callchains = true;
  const uint64_t leaf = module_.start + 4, middle = syscall_.start + 16, root = schedule_.start + 8;
  d.samples.push_back({kVmm, kVcpu0, PERF_RECORD_MISC_GUEST_KERNEL, leaf, {PERF_CONTEXT_GUEST_KERNEL, leaf, middle, root}});
  std::string data = write(d, "chain.data");
  test::ProgramResult script = vperf_kvm(symbol_options(), {"script", "-i", data});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  std::istringstream in(script.out);
  std::vector<std::string> frames;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '\t') frames.push_back(line.substr(line.find_first_not_of(" \t")));
  ASSERT_EQ(frames.size(), 3u) << script.out;
  EXPECT_NE(frames[0].find(" " + module_.name + "+0x4 ([" + module_.module + "])"), std::string::npos) << frames[0];
  EXPECT_NE(frames[1].find(" " + syscall_.name + "+0x10 ([guest.kernel.kallsyms])"), std::string::npos) << frames[1];
  EXPECT_NE(frames[2].find(" " + schedule_.name + "+0x8 ([guest.kernel.kallsyms])"), std::string::npos) << frames[2];
  // The flame graph's folded stack: the vCPU thread (spaces as _, stackcollapse-perf.pl's
  // rule), then the guest frames root first, guest kernel frames marked as kernel ones.
  test::ProgramResult folded = vperf_kvm(symbol_options(), {"flamegraph", "--folded", "-o", "-", "-i", data});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_EQ(folded.out, "CPU_0/KVM;" + schedule_.name + "_[k];" + syscall_.name + "_[k];" + module_.name + "_[k] 1000\n");
}

// Beyond perf 6.1: several guests in one recording, each resolved against its own symbols by
// the VMM's pid (--guestmount DIR/<pid>/proc/). The second guest is the first one booted at
// another KASLR offset: its kallsyms and modules shifted by 0x3a00000 (kernel) and 0x5000
// (modules), so each guest's addresses mean other functions in the other guest.
TEST_F(KvmGuest, SeveralGuestsResolvePerVmmPid) {
  constexpr pid_t kVmmB = 5000, kVcpuB = 5001;
  constexpr uint64_t kKernelShift = 0x3a00000, kModuleShift = 0x5000;
  fs::path mount = scratch_.root() / "guests";
  fs::create_directories(mount / std::to_string(kVmm) / "proc");
  fs::create_directories(mount / std::to_string(kVmmB) / "proc");
  fs::copy_file(rig_.kallsyms, mount / std::to_string(kVmm) / "proc/kallsyms");
  fs::copy_file(rig_.modules, mount / std::to_string(kVmm) / "proc/modules");
  {
    std::ifstream in(rig_.kallsyms);
    std::ofstream out(mount / std::to_string(kVmmB) / "proc/kallsyms");
    for (std::string line; std::getline(in, line);) {
      unsigned long long address = std::stoull(line.substr(0, 16), nullptr, 16);
      bool module = line.find('[') != std::string::npos;
      if (address != 0) address += module ? kModuleShift : kKernelShift;
      char buf[17];
      std::snprintf(buf, sizeof buf, "%016llx", address);
      out << buf << line.substr(16) << "\n";
    }
    std::ifstream min(rig_.modules);
    std::ofstream mout(mount / std::to_string(kVmmB) / "proc/modules");
    for (std::string line; std::getline(min, line);) {
      size_t at = line.rfind("0x");
      unsigned long long base = std::stoull(line.substr(at + 2), nullptr, 16) + kModuleShift;
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%016llx", base);
      mout << line.substr(0, at) << buf << "\n";
    }
  }
  test::GuestPerfData d;
  d.threads = {{kVmm, kVcpu0, "CPU 0/KVM"}, {kVmmB, kVcpuB, "CPU 0/KVM"}};
  for (int i = 0; i < 10; ++i) d.samples.push_back({kVmm, kVcpu0, PERF_RECORD_MISC_GUEST_KERNEL, schedule_.start + 8, {}});
  for (int i = 0; i < 6; ++i)
    d.samples.push_back({kVmmB, kVcpuB, PERF_RECORD_MISC_GUEST_KERNEL, syscall_.start + kKernelShift + 16, {}});
  for (int i = 0; i < 4; ++i)
    d.samples.push_back({kVmmB, kVcpuB, PERF_RECORD_MISC_GUEST_KERNEL, module_.start + kModuleShift + 4, {}});
  std::string data = write(d, "two-guests.data");
  test::ProgramResult ours =
      vperf_kvm({"--guestmount", mount.string()}, {"report", "--stdio", "--sort", "pid,sym", "-i", data});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  std::vector<std::string> rows = table_rows(ours.out);
  ASSERT_EQ(rows.size(), 3u) << ours.out;
  EXPECT_NE(rows[0].find("50.00%"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("[g] " + schedule_.name), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find("30.00%"), std::string::npos) << rows[1];
  EXPECT_NE(rows[1].find("[g] " + syscall_.name), std::string::npos) << rows[1];
  EXPECT_NE(rows[2].find("20.00%"), std::string::npos) << rows[2];
  EXPECT_NE(rows[2].find("[g] " + module_.name), std::string::npos) << rows[2];
}

// A guest kallsyms copied without root (or under kptr_restrict) has only zero addresses: one
// error line with the fix, exit 1, for report and for record.
TEST_F(KvmGuest, ZeroedGuestKallsymsIsRefused) {
  fs::path zeroed = scratch_.root() / "kallsyms.zeroed";
  {
    std::ifstream in(rig_.kallsyms);
    std::ofstream out(zeroed);
    for (std::string line; std::getline(in, line);) out << std::string(16, '0') << line.substr(16) << "\n";
  }
  std::string data = write(single_guest(false), "zeroed.data");
  test::ProgramResult r = vperf_kvm({"--guestkallsyms", zeroed.string()}, {"report", "--stdio", "-i", data});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("kptr_restrict"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: in the guest, as root"), std::string::npos) << r.err;
  std::string out = (scratch_.root() / "never.data").string();
  test::ProgramResult rec = vperf_kvm({"--guestkallsyms", zeroed.string()}, {"record", "-o", out, "--", "true"});
  EXPECT_EQ(rec.exit_code, 1);
  EXPECT_FALSE(fs::exists(out)) << "nothing recorded, nothing left behind";
}

// `vperf kvm record` opens what `perf kvm record` opens and writes the same guest maps: the
// attr's guest/host bits for --guest (default), --host and --host --no-guest, the default file
// names, and the guest kernel and module MMAP records. (The events sample nothing of the guest
// here: a guest shows up in samples only where the host has a PMU; see the next test.)
TEST_F(KvmGuest, RecordOpensAndWritesWhatPerfKvmRecordDoes) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf kvm record as the reference");
  auto attr_bits = [](const std::string& evlist) {
    std::string bits;
    for (const char* flag : {"exclude_host: 1", "exclude_guest: 1"})
      if (evlist.find(flag) != std::string::npos) bits += std::string(flag) + ";";
    return bits;
  };
  auto guest_maps = [](const std::string& data) {
    test::ProgramResult r = test::run_program({"perf", "script", "--show-mmap-events", "-i", data});
    std::string lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (line.find("PERF_RECORD_MMAP 0/0:") != std::string::npos) lines += line.substr(line.find("PERF_RECORD_MMAP")) + "\n";
    return lines;
  };
  const std::vector<std::vector<std::string>> scopes = {{}, {"--host"}, {"--host", "--no-guest"}};
  const std::vector<std::string> names = {"perf.data.guest", "perf.data.kvm", "perf.data.host"};
  for (size_t i = 0; i < scopes.size(); ++i) {
    fs::path ours_dir = scratch_.root() / ("vperf" + std::to_string(i)), perf_dir = scratch_.root() / ("perf" + std::to_string(i));
    fs::create_directories(ours_dir);
    fs::create_directories(perf_dir);
    std::string options;
    for (const std::string& o : symbol_options()) options += " '" + o + "'";
    for (const std::string& o : scopes[i]) options += " " + o;
    const std::string record = " record -q -e cpu-clock -- " + std::string(VPERF_WORKLOAD) + " sleep 10";
    test::ProgramResult ours = test::run_program({"sh", "-c", "cd '" + ours_dir.string() + "' && '" + VPERF_BINARY + "' kvm" + options + record});
    test::ProgramResult theirs = test::run_program({"sh", "-c", "cd '" + perf_dir.string() + "' && perf kvm" + options + record});
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    ASSERT_TRUE(fs::exists(ours_dir / names[i])) << names[i];
    ASSERT_TRUE(fs::exists(perf_dir / names[i])) << names[i];
    test::ProgramResult our_attr = test::run_program({"perf", "evlist", "-v", "-i", (ours_dir / names[i]).string()});
    test::ProgramResult perf_attr = test::run_program({"perf", "evlist", "-v", "-i", (perf_dir / names[i]).string()});
    EXPECT_EQ(attr_bits(our_attr.out), attr_bits(perf_attr.out)) << names[i] << "\n" << our_attr.out << perf_attr.out;
    std::string our_maps = guest_maps((ours_dir / names[i]).string());
    EXPECT_EQ(our_maps.empty(), names[i] == "perf.data.host") << our_maps;
    EXPECT_EQ(our_maps, guest_maps((perf_dir / names[i]).string())) << names[i];
  }
}

// Where the host has a PMU and KVM runs the guest, a real guest recording: the guest's own
// kernel symbols must show up. Needs hardware counters (cycles sample the guest through KVM's
// perf callbacks); on a host without a PMU (nested, most clouds) it cannot, and skips.
TEST_F(KvmGuest, HostPmuRecordingOfARunningGuest) {
  VPERF_REQUIRE(fs::exists("/sys/bus/event_source/devices/cpu/type"),
                "a host hardware PMU (guest samples come from cycles through KVM's perf callbacks)");
  VPERF_REQUIRE(!fs::exists(rig_.dir / "kvm-silent"), "KVM that boots the guest (this host's KVM leaves it silent)");
  test::ProgramResult boot = test::run_program({"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", "boot", rig_.dir.string()});
  ASSERT_EQ(boot.exit_code, 0) << boot.err;
  const fs::path kallsyms = rig_.dir / "guest-kallsyms", modules = rig_.dir / "guest-modules";
  std::string data = (scratch_.root() / "live.guest").string();
  test::ProgramResult rec = test::run_vperf({"kvm", "--guestkallsyms", kallsyms.string(), "--guestmodules", modules.string(),
                                            "record", "-a", "-e", "cycles", "-o", data, "--", "sleep", "3"});
  test::run_program({"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", "stop", rig_.dir.string()});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  test::ProgramResult rep = test::run_vperf({"kvm", "--guestkallsyms", kallsyms.string(), "--guestmodules", modules.string(),
                                            "report", "--stdio", "--sort", "dso,sym", "-i", data});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("[guest.kernel.kallsyms]  [g] "), std::string::npos) << rep.out;
}

}  // namespace
}  // namespace vperf

namespace vperf {
namespace {

// On a host without a hardware PMU, vperf kvm record (as perf kvm record) falls back to
// cpu-clock, which ignores exclude_host: its samples are the host's. perf kvm report filters
// host samples unless --host and shows an empty guest table; vperf shows the same, and says in
// one line why and what samples a guest on such a host (--qmp/--domain).
TEST(KvmWithoutHostPmu, HostSamplesAreLeftOutAsPerfKvmLeavesThemOut) {
  VPERF_REQUIRE(!test::has_hardware_pmu(), "a host without a hardware PMU (cpu-clock fallback)");
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf kvm report as the oracle");
  test::TempTree scratch;
  const std::string data = (scratch.root() / "kvm.data").string();
  test::ProgramResult rec = test::run_vperf({"kvm", "record", "-q", "-a", "-o", data, "--", VPERF_WORKLOAD, "spin", "200"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  auto without_tip = [](const std::string& text) {
    size_t tip = text.find("#\n# (Tip:");
    return tip == std::string::npos ? text : text.substr(0, tip);
  };
  // The guest's view: every sample is the host's, so both tables are empty.
  test::ProgramResult theirs = test::run_program({"perf", "kvm", "report", "--stdio", "-i", data, "--sort", "comm,dso"});
  test::ProgramResult mine = test::run_vperf({"kvm", "report", "--stdio", "-i", data, "--sort", "comm,dso"});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_EQ(mine.out, without_tip(theirs.out)) << "guest";
  EXPECT_EQ(table_rows(mine.out), std::vector<std::string>{}) << mine.out;
  EXPECT_TRUE(mine.err.starts_with("vperf: warning: all ")) << mine.err;
  EXPECT_EQ(std::count(mine.err.begin(), mine.err.end(), '\n'), 1) << mine.err;
  EXPECT_NE(mine.err.find("needs a host PMU"), std::string::npos) << mine.err;
  EXPECT_NE(mine.err.find("vperf kvm record --qmp"), std::string::npos) << mine.err;
  // The host's view, the rows of the workload's comm (what else ran on the machine meanwhile is
  // not the point), read off the whole table, not with --comm: perf 6.1 lets a row pass --comm
  // (or --pid) or not by the first sample that made it, in an order of its own (vperf follows
  // the rule, not that order). With another task of that comm in the recording (another test's
  // vperf-workload, started from a shell) perf left out the comm's whole [kernel.kallsyms] row,
  // which its own unfiltered table shows at 7.80%, and vperf showed it.
  auto workload_rows = [](const std::string& report) {
    std::vector<std::string> rows;
    for (const std::string& row : table_rows(report)) {
      const size_t percent = row.find('%');
      if (percent != std::string::npos && row.substr(row.find_first_not_of(' ', percent + 1)).starts_with("vperf-workload ")) rows.push_back(row);
    }
    return rows;
  };
  test::ProgramResult host_theirs = test::run_program({"perf", "kvm", "--host", "report", "--stdio", "-i", data, "--sort", "comm,dso"});
  test::ProgramResult host_mine = test::run_vperf({"kvm", "--host", "report", "--stdio", "-i", data, "--sort", "comm,dso"});
  ASSERT_EQ(host_theirs.exit_code, 0) << host_theirs.err;
  ASSERT_EQ(host_mine.exit_code, 0) << host_mine.err;
  EXPECT_EQ(host_mine.err, "");
  EXPECT_FALSE(workload_rows(host_mine.out).empty()) << host_mine.out;
  EXPECT_EQ(workload_rows(host_mine.out), workload_rows(host_theirs.out)) << host_mine.out << host_theirs.out;
  // perf 6.1 has no kvm script; vperf's, like perf script, prints none of the host's samples.
  test::ProgramResult script = test::run_vperf({"kvm", "script", "-i", data});
  EXPECT_EQ(script.exit_code, 0) << script.err;
  EXPECT_EQ(script.out, "");
  EXPECT_TRUE(script.err.starts_with("vperf: warning: all ")) << script.err;
  // A disagreement seen under load and never alone: the recording stays for a look at it.
  if (::testing::Test::HasFailure()) {
    const fs::path kept = fs::temp_directory_path() / ("vperf-kvm-host-samples-" + std::to_string(::getpid()) + ".data");
    fs::copy_file(data, kept, fs::copy_options::overwrite_existing);
    ADD_FAILURE() << "the recording is kept as " << kept.string();
  }
}

}  // namespace
}  // namespace vperf
