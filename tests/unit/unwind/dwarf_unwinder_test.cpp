// The libdwfl unwinder on this test's own stack: a chain of known functions captures its
// registers and copies its stack as the kernel does for PERF_SAMPLE_STACK_USER, the process's
// executable maps go into a Machine as MMAP2 events would, and the unwound frames must be the
// chain, with the return addresses the functions themselves saw. The test is built with -O2
// (-fomit-frame-pointer is GCC's default there), so only the CFI can unwind it.
#include "unwind/dwarf_unwinder.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "symbols/machine.h"
#include "unwind/perf_regs.h"

namespace vperf::unwind {

// What vperf_unwind_test_capture saw: the registers a sample would carry, and its stack.
struct OwnStack {
  uint64_t ip = 0, sp = 0, bp = 0;
  std::vector<uint8_t> stack;
  uint64_t capture_return = 0;  // into vperf_unwind_test_middle
  uint64_t middle_return = 0;   // into vperf_unwind_test_outer
};

namespace {

// The end of the mapping holding `addr` (the copy must not run past the top of the stack).
uint64_t end_of_mapping(uint64_t addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &start, &end) == 2 && addr >= start && addr < end) return end;
  }
  return addr;
}

// Copies [sp, sp + 8192) like the kernel's user stack dump, bounded by the stack mapping.
// The bytes above sp belong to live frames the sanitizers would flag as out of bounds.
__attribute__((noinline, no_sanitize("address"))) void copy_stack(uint64_t sp, std::vector<uint8_t>& out) {
  const uint64_t size = std::min<uint64_t>(8192, end_of_mapping(sp) - sp);
  const volatile uint8_t* from = reinterpret_cast<const volatile uint8_t*>(sp);
  out.resize(size);
  for (uint64_t i = 0; i < size; ++i) out[i] = from[i];
}

}  // namespace

extern "C" {

__attribute__((noinline, noclone)) void vperf_unwind_test_capture(OwnStack& out) {
  char frame[64];  // a frame bigger than a return address, for the short-stack test
  std::memset(frame, 1, sizeof frame);
  asm volatile("" : : "r"(frame) : "memory");  // the array escapes: it stays in the frame
  uint64_t sp = 0, bp = 0, ip = 0;
  // One asm block: the three values belong to one instruction boundary, where the CFI row
  // for `ip` describes the stack at `sp`.
  asm volatile("movq %%rsp, %0\n\tmovq %%rbp, %1\n\tleaq 0(%%rip), %2" : "=r"(sp), "=r"(bp), "=r"(ip));
  out.sp = sp;
  out.bp = bp;
  out.ip = ip;
  out.capture_return = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  copy_stack(sp, out.stack);
  asm volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) void vperf_unwind_test_middle(OwnStack& out) {
  out.middle_return = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  vperf_unwind_test_capture(out);
  asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack
}

__attribute__((noinline, noclone)) void vperf_unwind_test_outer(OwnStack& out) {
  vperf_unwind_test_middle(out);
  asm volatile("" ::: "memory");
}

}  // extern "C"

namespace {

constexpr uint64_t kMask = (uint64_t{1} << kPerfRegBp) | (uint64_t{1} << kPerfRegSp) | (uint64_t{1} << kPerfRegIp);

class DwarfUnwinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vperf_unwind_test_outer(own_);
    pid_ = ::getpid();
    feed_own_maps(machine_, MapKinds::Code);
    attr_.sample_regs_user = kMask;
  }

  // This process's maps as MMAP2 events: its code maps, as vperf record's MMAP2 events (and
  // perf's synthesized ones) carry them, or every map, as perf record --call-graph dwarf
  // records them (it turns on mmap_data): the files' data segments, [stack], [heap], anon.
  enum class MapKinds { Code, All };
  void feed_own_maps(symbols::Machine& machine, MapKinds kinds) const {
    machine.process_comm(pid_, pid_, "unwind_test", false);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      uint64_t start = 0, end = 0, offset = 0;
      char perms[8] = {};
      int path_at = 0;
      if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &offset,
                      &path_at) < 4)
        continue;
      std::string path = line.substr(static_cast<size_t>(path_at));
      const bool code = perms[2] == 'x';
      if (kinds == MapKinds::Code && (!code || (!path.starts_with("/") && path != "[vdso]"))) continue;
      symbols::MmapEvent e;
      e.pid = pid_;
      e.tid = pid_;
      e.start = start;
      e.len = end - start;
      e.pgoff = path.empty() ? start : offset;  // perf's pgoff for anonymous memory
      e.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | (code ? PROT_EXEC : 0);
      e.filename = path.empty() ? "//anon" : path;
      machine.process_mmap(e);
    }
  }

  data::Sample sample_with(std::vector<uint8_t> stack) const {
    data::Sample s;
    s.ip = own_.ip;
    s.regs_user_abi = PERF_SAMPLE_REGS_ABI_64;
    s.regs_user = {own_.bp, own_.sp, own_.ip};  // the order of their bits in kMask
    s.stack_user_dyn_size = stack.size();
    s.stack_user = std::move(stack);
    return s;
  }
  const symbols::Thread& thread() const { return *machine_.find_thread(pid_); }
  std::vector<uint64_t> unwind(DwarfUnwinder& unwinder, const data::Sample& s) const {
    std::vector<uint64_t> ips;
    unwinder.unwind(machine_, thread(), s, attr_, ips);
    return ips;
  }
  std::string symbol(uint64_t ip) const {
    return std::string(machine_.resolve(pid_, pid_, PERF_RECORD_MISC_USER, ip).symbol_name());
  }

  OwnStack own_;
  pid_t pid_ = 0;
  symbols::Machine machine_{symbols::SymbolConfig{}};
  perf_event_attr attr_{};
};

TEST_F(DwarfUnwinderTest, UnwindsItsOwnStackThroughTheCallChain) {
  ASSERT_GE(own_.stack.size(), 256u);
  DwarfUnwinder unwinder;
  std::vector<uint64_t> ips = unwind(unwinder, sample_with(own_.stack));
  ASSERT_GE(ips.size(), 4u);
  EXPECT_EQ(ips[0], own_.ip) << "the first frame is the sampled ip";
  // Callers are their return address minus one, inside the call instruction (as perf shows).
  EXPECT_EQ(ips[1], own_.capture_return - 1);
  EXPECT_EQ(ips[2], own_.middle_return - 1);
  EXPECT_EQ(symbol(ips[0]), "vperf_unwind_test_capture");
  EXPECT_EQ(symbol(ips[1]), "vperf_unwind_test_middle");
  EXPECT_EQ(symbol(ips[2]), "vperf_unwind_test_outer");
  // Beyond: the test body, GoogleTest, main, libc: every frame in some function of a file.
  std::vector<std::string> names;
  for (uint64_t ip : ips) names.push_back(symbol(ip));
  EXPECT_NE(std::find(names.begin(), names.end(), "main"), names.end()) << ::testing::PrintToString(names);
  EXPECT_LE(ips.size(), 127u);
}

TEST_F(DwarfUnwinderTest, DataMapsAsPerfRecordsThemChangeNothing) {
  symbols::Machine everything{symbols::SymbolConfig{}};
  feed_own_maps(everything, MapKinds::All);
  ASSERT_GT(everything.find_thread(pid_)->maps->size(), thread().maps->size());
  DwarfUnwinder unwinder;
  std::vector<uint64_t> with_data_maps;
  unwinder.unwind(everything, *everything.find_thread(pid_), sample_with(own_.stack), attr_, with_data_maps);
  std::vector<uint64_t> code_only = unwind(unwinder, sample_with(own_.stack));
  EXPECT_GE(code_only.size(), 4u);
  EXPECT_EQ(with_data_maps, code_only);
}

TEST_F(DwarfUnwinderTest, EmptyStackGivesJustTheIp) {
  DwarfUnwinder unwinder;
  EXPECT_EQ(unwind(unwinder, sample_with({})), std::vector<uint64_t>{own_.ip});
}

TEST_F(DwarfUnwinderTest, StackShorterThanTheFrameGivesJustTheIp) {
  DwarfUnwinder unwinder;
  std::vector<uint8_t> eight(own_.stack.begin(), own_.stack.begin() + 8);  // the return address is further up
  EXPECT_EQ(unwind(unwinder, sample_with(eight)), std::vector<uint64_t>{own_.ip});
}

TEST_F(DwarfUnwinderTest, OnlyTheDynSizeOfTheCopyIsStack) {
  DwarfUnwinder unwinder;
  data::Sample s = sample_with(own_.stack);
  s.stack_user_dyn_size = 0;  // the kernel could copy nothing; the bytes are not the stack
  EXPECT_EQ(unwind(unwinder, s), std::vector<uint64_t>{own_.ip});
}

TEST_F(DwarfUnwinderTest, GarbageStacksEndWithinTheFrameLimit) {
  DwarfUnwinder unwinder;
  std::mt19937_64 random(42);
  for (int round = 0; round < 50; ++round) {
    std::vector<uint8_t> stack(8192);
    for (size_t i = 0; i < stack.size(); i += 8) {
      uint64_t word = random();
      // Mix in words that look like stack and code addresses, so the walk goes somewhere.
      if (round % 3 == 1) word = own_.sp + (word % 8192);
      if (round % 3 == 2) word = own_.ip + (word % 64);
      std::memcpy(stack.data() + i, &word, 8);
    }
    std::vector<uint64_t> ips = unwind(unwinder, sample_with(std::move(stack)));
    ASSERT_FALSE(ips.empty());
    EXPECT_EQ(ips[0], own_.ip);
    EXPECT_LE(ips.size(), 127u);
  }
}

TEST_F(DwarfUnwinderTest, ALoopingStackStopsAtMaxFrames) {
  // Every word is the capture function's own ip: each frame "returns" into the same function,
  // one frame higher, until the limit.
  DwarfUnwinder unwinder(DwarfUnwinderOptions{.max_frames = 5});
  std::vector<uint8_t> stack(8192);
  for (size_t i = 0; i < stack.size(); i += 8) std::memcpy(stack.data() + i, &own_.ip, 8);
  std::vector<uint64_t> ips = unwind(unwinder, sample_with(std::move(stack)));
  EXPECT_EQ(ips.size(), 5u);
  EXPECT_EQ(ips[0], own_.ip);
}

TEST_F(DwarfUnwinderTest, NoMapsOrNoIpRegister) {
  DwarfUnwinder unwinder;
  symbols::Thread stranger{.pid = 1, .tid = 1, .comm = "init", .maps = nullptr, .exited = false};
  std::vector<uint64_t> ips;
  unwinder.unwind(machine_, stranger, sample_with(own_.stack), attr_, ips);
  EXPECT_EQ(ips, std::vector<uint64_t>{own_.ip});

  data::Sample kernel_thread = sample_with(own_.stack);
  kernel_thread.regs_user_abi = PERF_SAMPLE_REGS_ABI_NONE;
  kernel_thread.regs_user.clear();
  ips.clear();
  unwinder.unwind(machine_, thread(), kernel_thread, attr_, ips);
  EXPECT_TRUE(ips.empty());
}

TEST_F(DwarfUnwinderTest, PerfsFullRegisterMaskUnwindsTheSame) {
  // The mask perf record --call-graph dwarf uses, with the registers this test did not capture
  // as zeros: only SP, BP and IP matter to this chain's CFI.
  perf_event_attr full{};
  full.sample_regs_user = 0xff0fff;
  data::Sample s = sample_with(own_.stack);
  s.regs_user.assign(20, 0);
  s.regs_user[kPerfRegBp] = own_.bp;
  s.regs_user[kPerfRegSp] = own_.sp;
  s.regs_user[kPerfRegIp] = own_.ip;
  DwarfUnwinder unwinder;
  std::vector<uint64_t> ips;
  unwinder.unwind(machine_, thread(), s, full, ips);
  EXPECT_EQ(ips, unwind(unwinder, sample_with(own_.stack)));
}

TEST_F(DwarfUnwinderTest, RebuildsItsDwflOnlyWhenTheCodeMapsChange) {
  DwarfUnwinder unwinder;
  const data::Sample s = sample_with(own_.stack);
  std::vector<uint64_t> first = unwind(unwinder, s);
  unwind(unwinder, s);
  unwind(unwinder, s);
  EXPECT_EQ(unwinder.dwfl_builds(), 1u);

  symbols::MmapEvent data;  // anonymous memory (malloc), as perf's mmap_data records it
  data.pid = pid_;
  data.tid = pid_;
  data.start = 0x20000000000ULL;
  data.len = 0x21000;
  data.pgoff = data.start;
  data.prot = PROT_READ | PROT_WRITE;
  data.filename = "//anon";
  machine_.process_mmap(data);
  EXPECT_EQ(unwind(unwinder, s), first);
  EXPECT_EQ(unwinder.dwfl_builds(), 1u) << "data maps do not change the modules";

  symbols::MmapEvent more;  // a library loaded later, far from everything else
  more.pid = pid_;
  more.tid = pid_;
  more.start = 0x10000000000ULL;
  more.len = 0x1000;
  more.filename = "/bin/true";
  machine_.process_mmap(more);
  EXPECT_EQ(unwind(unwinder, s), first);
  EXPECT_EQ(unwinder.dwfl_builds(), 2u);
  unwind(unwinder, s);
  EXPECT_EQ(unwinder.dwfl_builds(), 2u);
}

TEST_F(DwarfUnwinderTest, KeepsOnlyTheMostRecentProcesses) {
  // A forked copy of this process: same maps, another pid.
  const pid_t child = pid_ + 100000;
  machine_.process_fork(child, pid_, child, pid_);
  const symbols::Thread& other = *machine_.find_thread(child);
  const data::Sample s = sample_with(own_.stack);
  auto alternate = [&](DwarfUnwinder& unwinder) {
    for (int i = 0; i < 3; ++i) {
      std::vector<uint64_t> ips;
      unwinder.unwind(machine_, thread(), s, attr_, ips);
      unwinder.unwind(machine_, other, s, attr_, ips);
    }
  };
  DwarfUnwinder roomy;
  alternate(roomy);
  EXPECT_EQ(roomy.dwfl_builds(), 2u);
  DwarfUnwinder cramped(DwarfUnwinderOptions{.max_cached_processes = 1});
  alternate(cramped);
  EXPECT_EQ(cramped.dwfl_builds(), 6u) << "each switch evicts the other process";
}

// A process that has exited gets no more samples: its Dwfl (a mapping of each of its ELF files)
// is let go when the next one is built, while a live process keeps its own.
TEST_F(DwarfUnwinderTest, ExitedProcessesLetGoOfTheirDwfl) {
  const pid_t gone = pid_ + 100000, next = pid_ + 100001;
  machine_.process_fork(gone, pid_, gone, pid_);
  machine_.process_fork(next, pid_, next, pid_);
  const data::Sample s = sample_with(own_.stack);
  DwarfUnwinder unwinder;
  auto unwind_as = [&](pid_t pid) {
    std::vector<uint64_t> ips;
    unwinder.unwind(machine_, *machine_.find_thread(pid), s, attr_, ips);
  };
  unwind_as(pid_);
  unwind_as(gone);
  EXPECT_EQ(unwinder.dwfl_builds(), 2u);
  machine_.process_exit(gone, gone);
  unwind_as(next);
  EXPECT_EQ(unwinder.dwfl_builds(), 3u);
  unwind_as(pid_);
  EXPECT_EQ(unwinder.dwfl_builds(), 3u) << "a live process keeps its Dwfl";
  unwind_as(gone);
  EXPECT_EQ(unwinder.dwfl_builds(), 4u) << "the exited process's Dwfl was let go";
}

TEST(MakeDwarfUnwinder, GivesTheLibdwflUnwinder) {
  std::unique_ptr<UserStackUnwinder> unwinder = make_dwarf_unwinder();
  EXPECT_NE(dynamic_cast<DwarfUnwinder*>(unwinder.get()), nullptr);
}

}  // namespace
}  // namespace vperf::unwind
