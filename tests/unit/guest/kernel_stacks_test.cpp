// Guest kernel stacks on made-up kernels whose every byte the test chose: the monitor's memory
// dumps, the ORC entry layouts of each kernel generation, call-site decoding, and the three
// unwinders. The real guest's stacks are checked against its own unwinder in
// tests/integration/kvm_monitor_test.cpp.
#include <gtest/gtest.h>

#include <optional>

#include <cstdio>
#include <cstring>
#include <string>

#include "guest/guest_memory.h"
#include "guest/kernel_stacks.h"
#include "guest/vcpu_stack_reader.h"

namespace vperf::guest {
namespace {

TEST(GuestMemoryDump, ParsesQemusWordsUpToAnUnmappedPage) {
  // QEMU 7.2's answer to `x /6gx $sp` on a vCPU whose stack ends two words further on.
  Result<MemoryDump> dump = parse_memory_dump(
      "ffffd1ee8009bfe0: 0xffffffff9383ed0d 0x0000000000000001\r\n"
      "ffffd1ee8009bff0: 0x0000000000000000 0x0000000000000000\r\n"
      "ffffd1ee8009c000: Cannot access memory\r\n");
  ASSERT_TRUE(dump.ok()) << dump.error().describe();
  EXPECT_EQ(dump->address, 0xffffd1ee8009bfe0u);
  ASSERT_EQ(dump->bytes.size(), 32u);
  uint64_t first = 0;
  std::memcpy(&first, dump->bytes.data(), 8);
  EXPECT_EQ(first, 0xffffffff9383ed0du);
  EXPECT_EQ(dump->bytes[8], 1);

  Result<MemoryDump> unmapped = parse_memory_dump("ffffd1ee8009c000: Cannot access memory\n");
  ASSERT_TRUE(unmapped.ok());
  EXPECT_TRUE(unmapped->bytes.empty());
  Result<MemoryDump> bad = parse_memory_dump("unknown register\nTry \"help x\" for more information\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown register"), std::string::npos);
  EXPECT_FALSE(parse_memory_dump("ffff0000: 0x1 0x2\nffff0020: 0x3\n").ok());  // a gap
}

TEST(GuestMemoryDump, ReadsAcrossDumpsOfNeighbouringPages) {
  DumpMemory m;
  m.add({0x1000, std::vector<uint8_t>(0x1000, 0xaa)});
  m.add({0x2000, std::vector<uint8_t>(0x1000, 0xbb)});
  uint8_t regs[168];
  ASSERT_TRUE(m.read(0x2000 - 100, regs));
  EXPECT_EQ(regs[99], 0xaa);
  EXPECT_EQ(regs[100], 0xbb);
  EXPECT_FALSE(m.read(0x3000 - 8, regs));  // runs past the last page
}

TEST(OrcEntries, EachKernelGenerationsBitLayout) {
  // sp_offset 16, bp_offset -16, then sp_reg (bits 0-3) and bp_reg (4-7), then type and flags.
  const auto entry = [](unsigned flags) {
    static uint8_t bytes[6];
    const int16_t sp = 16, bp = -16;
    std::memcpy(bytes, &sp, 2);
    std::memcpy(bytes + 2, &bp, 2);
    bytes[4] = flags & 0xff;
    bytes[5] = flags >> 8;
    return bytes;
  };
  // 6.1: type:2 (0 call, 1 regs, 2 regs_partial), end:1 at bit 10.
  OrcEntry call = decode_orc_entry(entry(0x15), 6, 1);  // sp_reg 5 (SP), bp_reg 1 (PREV_SP), type call
  EXPECT_EQ(call.sp_offset, 16);
  EXPECT_EQ(call.bp_offset, -16);
  EXPECT_EQ(call.sp_reg, 5);
  EXPECT_EQ(call.bp_reg, 1);
  EXPECT_EQ(call.type, OrcEntry::Type::call);
  EXPECT_FALSE(call.signal);
  EXPECT_EQ(decode_orc_entry(entry(0x105), 6, 1).type, OrcEntry::Type::regs);
  EXPECT_TRUE(decode_orc_entry(entry(0x105), 6, 1).signal);
  EXPECT_EQ(decode_orc_entry(entry(0x205), 6, 1).type, OrcEntry::Type::regs_partial);
  EXPECT_EQ(decode_orc_entry(entry(0x400), 6, 1).type, OrcEntry::Type::end_of_stack);  // sp_reg undefined + end
  EXPECT_EQ(decode_orc_entry(entry(0x000), 6, 1).type, OrcEntry::Type::undefined);
  // 6.3: a signal bit at 10 pushes end to bit 11.
  EXPECT_EQ(decode_orc_entry(entry(0x800), 6, 3).type, OrcEntry::Type::end_of_stack);
  EXPECT_TRUE(decode_orc_entry(entry(0x415), 6, 3).signal);
  EXPECT_EQ(decode_orc_entry(entry(0x415), 6, 3).type, OrcEntry::Type::call);
  // 6.4 on: type:3 (0 undefined, 1 end of stack, 2 call, 3 regs, 4 regs_partial), signal at 11.
  EXPECT_EQ(decode_orc_entry(entry(0x100), 6, 4).type, OrcEntry::Type::end_of_stack);
  EXPECT_EQ(decode_orc_entry(entry(0x215), 6, 4).type, OrcEntry::Type::call);
  EXPECT_EQ(decode_orc_entry(entry(0x305), 6, 9).type, OrcEntry::Type::regs);
  EXPECT_EQ(decode_orc_entry(entry(0x405), 6, 9).type, OrcEntry::Type::regs_partial);
  EXPECT_TRUE(decode_orc_entry(entry(0xa15), 6, 4).signal);
}

// A monitor whose vCPU 0 is in user mode under page-table isolation (the kernel page is not
// mapped for it) and whose vCPU 1 is in the kernel: QEMU's answers to `x /512gx ADDRESS`.
class IsolatedMonitor : public VmMonitor {
 public:
  Result<boost::json::value> qmp(std::string_view command, const boost::json::object& arguments) override {
    if (command != "human-monitor-command") return Error{"unexpected " + std::string(command)};
    ++commands;
    const std::string line(arguments.at("command-line").as_string());
    const std::string address = line.substr(line.rfind(' ') + 1);
    if (arguments.at("cpu-index").as_int64() == 0) return boost::json::value(address.substr(2) + ": Cannot access memory\n");
    std::string text;
    for (int row = 0; row < 256; ++row) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%llx: 0x%016llx 0x%016llx\n", std::stoull(address, nullptr, 16) + 16ULL * row,
                    0x1111111100000000ULL + 2ULL * row, 0x1111111100000000ULL + 2ULL * row + 1);
      text += buf;
    }
    return boost::json::value(text);
  }
  int commands = 0;
};

TEST(KernelMemory, ReadsThroughTheVcpuThatMapsTheKernelAndKeepsThePage) {
  IsolatedMonitor monitor;
  KernelMemory kernel(monitor, {0, 1});
  kernel.prefer_vcpu(0);
  EXPECT_EQ(kernel.value<uint64_t>(0xffffffff81000010), 0x1111111100000002ULL);  // vCPU 0 fails, vCPU 1 answers
  EXPECT_EQ(monitor.commands, 2);
  EXPECT_EQ(kernel.value<uint64_t>(0xffffffff81000ff8), 0x1111111100000000ULL + 511);  // the same page, kept
  EXPECT_EQ(monitor.commands, 2);
  EXPECT_EQ(kernel.pages_read(), 1u);
}

// A made-up kernel: text at kText, ORC tables at kOrc, stacks at kStack.
constexpr uint64_t kText = 0xffffffff81000000, kOrc = 0xffffffff82000000, kStack = 0xffffc90000010000;
constexpr uint64_t kA = kText + 0x1000, kB = kText + 0x2000, kC = kText + 0x3000, kEntry = kText + 0x4000, kEnd = kText + 0x5000;
constexpr uint64_t kStart = kEnd + 0x800;

class MadeUpKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    text_.assign(0x6000, 0xcc);
    // B calls A at B+0xb (returns to B+0x10), C calls B at C+0x1b, the entry calls C at +0x10.
    call(kB + 0xb, kA);
    call(kC + 0x1b, kB);
    call(kEntry + 0x10, kC);
    call(kC + 0x30, kA);  // C's second call site: A, directly (returns to C+0x35)
    layout_.core_text = {kText, kText + text_.size()};
    layout_.text = {layout_.core_text};
    layout_.function_starts = {kA, kB, kC, kEntry, kEnd};
    layout_.major = 6;
    layout_.minor = 1;
  }
  void call(uint64_t at, uint64_t target, uint8_t opcode = 0xe8) {
    uint8_t* p = text_.data() + (at - kText);
    p[0] = opcode;
    const int32_t rel = static_cast<int32_t>(target - (at + 5));
    std::memcpy(p + 1, &rel, 4);
  }
  void jump(uint64_t at, uint64_t target) { call(at, target, 0xe9); }
  // ORC tables for A (SP+16), B (SP+8), C (SP+24), the entry (pt_regs at SP) and a hole.
  void orc_tables() {
    struct Row {
      uint64_t ip;
      unsigned flags;
      int16_t sp_offset;
    };
    // ... and, at kStart, code whose stack ends there (an end-of-stack hint, as head_64.S's).
    const Row rows[] = {{kA, 0x05, 16}, {kB, 0x05, 8}, {kC, 0x05, 24}, {kEntry, 0x105, 0}, {kEnd, 0x000, 0}, {kStart, 0x400, 0}};
    MemoryDump ips{kOrc, {}}, entries{kOrc + 0x1000, {}};
    for (size_t i = 0; i < std::size(rows); ++i) {
      const int32_t rel = static_cast<int32_t>(rows[i].ip - (kOrc + 4 * i));
      ips.bytes.insert(ips.bytes.end(), reinterpret_cast<const uint8_t*>(&rel), reinterpret_cast<const uint8_t*>(&rel) + 4);
      uint8_t e[6] = {};
      std::memcpy(e, &rows[i].sp_offset, 2);
      e[4] = rows[i].flags & 0xff;
      e[5] = rows[i].flags >> 8;
      entries.bytes.insert(entries.bytes.end(), e, e + 6);
    }
    layout_.orc_ip_table = kOrc;
    layout_.orc_ip_table_end = kOrc + ips.bytes.size();
    layout_.orc_entries = kOrc + 0x1000;
    kernel_.add(std::move(ips));
    kernel_.add(std::move(entries));
  }
  DumpMemory kernel_memory() {
    DumpMemory k = kernel_;
    k.add({kText, text_});
    return k;
  }
  // A stack of 64-bit words from `sp` upwards.
  static DumpMemory stack_at(uint64_t sp, std::vector<uint64_t> words) {
    DumpMemory m;
    MemoryDump d{sp, std::vector<uint8_t>(words.size() * 8)};
    std::memcpy(d.bytes.data(), words.data(), d.bytes.size());
    m.add(std::move(d));
    return m;
  }

  std::vector<uint8_t> text_;
  GuestKernelLayout layout_;
  DumpMemory kernel_;
};

TEST_F(MadeUpKernel, CallSitesAreRecognisedInEveryEncoding) {
  DumpMemory kernel = kernel_memory();
  EXPECT_TRUE(follows_call(kernel, kB + 0x10));
  EXPECT_EQ(direct_call_target(kernel, kB + 0x10), kA);
  EXPECT_FALSE(follows_call(kernel, kB + 0x11));
  EXPECT_FALSE(follows_call(kernel, kA + 0x20));  // int3 padding
  const struct {
    std::vector<uint8_t> bytes;
    bool is_call;
  } cases[] = {
      {{0xff, 0xd0}, true},                          // call *%rax
      {{0x41, 0xff, 0xd3}, true},                    // call *%r11
      {{0xff, 0x15, 1, 2, 3, 4}, true},              // call *disp32(%rip)
      {{0xff, 0x14, 0x25, 1, 2, 3, 4}, true},        // call *disp32 (SIB, no base)
      {{0xff, 0x50, 0x08}, true},                    // call *8(%rax)
      {{0xff, 0x54, 0x24, 0x08}, true},              // call *8(%rsp)
      {{0xff, 0x90, 1, 2, 3, 4}, true},              // call *disp32(%rax)
      {{0xe9, 1, 2, 3, 4}, false},                   // jmp rel32
      {{0xff, 0xe0}, false},                         // jmp *%rax (ff /4)
      {{0x48, 0x89, 0xe5}, false},                   // mov %rsp,%rbp
  };
  for (const auto& c : cases) {
    std::vector<uint8_t> bytes(16, 0x90);
    std::copy(c.bytes.begin(), c.bytes.end(), bytes.end() - static_cast<long>(c.bytes.size()));
    DumpMemory m;
    m.add({0x1000, bytes});
    EXPECT_EQ(follows_call(m, 0x1000 + bytes.size()), c.is_call) << static_cast<int>(c.bytes[0]) << " " << c.bytes.size();
  }
}

TEST_F(MadeUpKernel, OrcFollowsEachFunctionsFrameToTheUserEntry) {
  orc_tables();
  DumpMemory kernel = kernel_memory();
  // A's frame: one word, then the return into B; B's: the return into C; C's: two words and
  // the return into the entry, whose pt_regs (from user mode: CS 0x33) end the kernel stack.
  const uint64_t sp = kStack + 0x3e00;
  std::vector<uint64_t> words = {0x1111, kB + 0x10, kC + 0x20, 0x2222, 0x3333, kEntry + 0x15};
  std::vector<uint64_t> regs(21, 0);
  regs[16] = 0x401000;  // ip
  regs[17] = 0x33;      // cs: user
  regs[19] = 0x7ffe0000;
  words.insert(words.end(), regs.begin(), regs.end());
  DumpMemory stack = stack_at(sp, words);
  VcpuRegisters r;
  r.rip = kA + 0x7;
  r.rsp = sp;
  KernelStack s = unwind_kernel_stack(r, stack, kernel, layout_, std::nullopt);
  EXPECT_EQ(s.method, StackMethod::orc);
  EXPECT_EQ(s.frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kC + 0x20, kEntry + 0x15}));
  EXPECT_TRUE(s.reached_end);

  // Bad data (a return address pointing back up the same stack) stops instead of looping.
  DumpMemory loop = stack_at(sp, {0x1111, kB + 0x10, kB + 0x10, kB + 0x10});
  layout_.orc_entries = kOrc + 0x1000;
  KernelStack bad = unwind_kernel_stack(r, loop, kernel, layout_, StackMethod::orc);
  EXPECT_LE(bad.frames.size(), 4u);
  EXPECT_FALSE(bad.reached_end);

  // A return into module code (no ORC data of its own here) ends the stack at that frame.
  const uint64_t module = 0xffffffffc0001000;
  layout_.text.emplace_back(module, module + 0x1000);
  DumpMemory into_module = stack_at(sp, {0x1111, kB + 0x10, kC + 0x20, 0x2222, 0x3333, module + 0x20, 0x4444});
  KernelStack cut = unwind_kernel_stack(r, into_module, kernel, layout_, std::nullopt);
  EXPECT_EQ(cut.frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kC + 0x20, module + 0x20}));
  EXPECT_FALSE(cut.reached_end);

  // An IP in a hole of the table (an undefined entry) has no frame beyond itself.
  r.rip = kEnd + 0x10;
  EXPECT_EQ(unwind_kernel_stack(r, stack, kernel, layout_, StackMethod::orc).frames.size(), 1u);
}

// QEMU's monitor over a made-up guest: `x /Ngx ADDRESS` answered as QEMU prints it (two words a
// line, "Cannot access memory" where it ends), each byte from the first of `layers` that has
// it, "$sp" being the vCPU's `sp`.
class DumpingMonitor : public VmMonitor {
 public:
  DumpingMonitor(std::vector<DumpMemory> layers, uint64_t sp) : layers_(std::move(layers)), sp_(sp) {}
  // From the second dump of the stack pointer on, these words are read first: the vCPU ran on.
  void change_stack_after_first_dump(DumpMemory changed) { changed_ = std::move(changed); }
  Result<boost::json::value> qmp(std::string_view command, const boost::json::object& arguments) override {
    if (command != "human-monitor-command") return Error{"unexpected " + std::string(command)};
    const std::string line(arguments.at("command-line").as_string());  // "x /512gx 0xffffffff81000000"
    const uint64_t words = std::stoull(line.substr(line.find('/') + 1));
    const std::string where = line.substr(line.rfind(' ') + 1);
    const uint64_t address = where == "$sp" ? sp_ : std::stoull(where, nullptr, 16);
    const bool changed = where == "$sp" && ++stack_dumps_ > 1 && changed_.has_value();
    std::string text;
    for (uint64_t w = 0; w < words; w += 2) {
      char buf[96];
      uint64_t pair[2] = {};
      if (!(changed && changed_->read(address + 8 * w, {reinterpret_cast<uint8_t*>(pair), 16})) &&
          !read(address + 8 * w, reinterpret_cast<uint8_t*>(pair))) {
        std::snprintf(buf, sizeof buf, "%llx: Cannot access memory\n", static_cast<unsigned long long>(address + 8 * w));
        text += buf;
        break;
      }
      std::snprintf(buf, sizeof buf, "%llx: 0x%016llx 0x%016llx\n", static_cast<unsigned long long>(address + 8 * w),
                    static_cast<unsigned long long>(pair[0]), static_cast<unsigned long long>(pair[1]));
      text += buf;
    }
    return boost::json::value(text);
  }

 private:
  bool read(uint64_t address, uint8_t out[16]) {
    for (int i = 0; i < 16; ++i) {
      bool found = false;
      for (DumpMemory& layer : layers_)
        if ((found = layer.read(address + i, {out + i, 1}))) break;
      if (!found) return false;
    }
    return true;
  }
  std::vector<DumpMemory> layers_;
  uint64_t sp_;
  std::optional<DumpMemory> changed_;
  int stack_dumps_ = 0;
};

// Stacks that no single instant holds, as a copy of a running vCPU's stack gives them (seen on
// a real guest: "vfs_read+0xa5 ksys_read+0x6b ksys_read+0x6b do_syscall_64+0x5d", and
// "do_syscall_64+0x69" where the call was at +0x5d): a frame whose return address comes
// from a call of another function than the frame below it.
TEST_F(MadeUpKernel, AStackNoCallCanHaveLeftIsNotConnected) {
  orc_tables();
  DumpMemory kernel = kernel_memory();
  const uint64_t sp = kStack + 0x3e00;
  std::vector<uint64_t> regs(21, 0);
  regs[16] = 0x401000;
  regs[17] = 0x33;
  regs[19] = 0x7ffe0000;
  auto unwound = [&](std::vector<uint64_t> words) {
    words.insert(words.end(), regs.begin(), regs.end());
    DumpMemory stack = stack_at(sp, words);
    VcpuRegisters r;
    r.rip = kA + 0x7;
    r.rsp = sp;
    return unwind_kernel_stack(r, stack, kernel, layout_, StackMethod::orc);
  };
  // A <- B <- C <- entry: every return address follows a call of the frame below.
  KernelStack whole = unwound({0x1111, kB + 0x10, kC + 0x20, 0x2222, 0x3333, kEntry + 0x15});
  ASSERT_TRUE(whole.reached_end);
  EXPECT_EQ(first_unconnected_frame(whole, kernel, layout_), std::nullopt);
  EXPECT_EQ(whole.not_called, std::vector<size_t>{});  // ends at user registers: every frame was called
  // B twice: B's own call of A cannot return into the B below it.
  KernelStack repeated = unwound({0x1111, kB + 0x10, kB + 0x10, kC + 0x20, 0x2222, 0x3333, kEntry + 0x15});
  ASSERT_TRUE(repeated.reached_end);
  EXPECT_EQ(repeated.frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kB + 0x10, kC + 0x20, kEntry + 0x15}));
  EXPECT_EQ(first_unconnected_frame(repeated, kernel, layout_), 2u);
  // C's other call site, which calls A, above B.
  KernelStack other_site = unwound({0x1111, kB + 0x10, kC + 0x35, 0x2222, 0x3333, kEntry + 0x15});
  ASSERT_TRUE(other_site.reached_end);
  EXPECT_EQ(first_unconnected_frame(other_site, kernel, layout_), 2u);
  // The same through a trampoline: the callee is unknown, so any is accepted.
  layout_.trampolines = {kA};
  EXPECT_EQ(first_unconnected_frame(other_site, kernel, layout_), std::nullopt);
  layout_.trampolines.clear();
  // A tail call: A, called from C, jumps on to B (as arch_cpu_idle jumps to the idle routine).
  jump(kA + 0x40, kB);
  DumpMemory tail_calling = kernel_memory();
  EXPECT_EQ(first_unconnected_frame(other_site, tail_calling, layout_), std::nullopt);
  // ... or through a static-call trampoline (here E, said to be one), to whatever it jumps to.
  jump(kA + 0x40, kEnd);
  layout_.trampolines = {kEnd};
  DumpMemory through_trampoline = kernel_memory();
  EXPECT_EQ(first_unconnected_frame(other_site, through_trampoline, layout_), std::nullopt);
  // A jump to another function explains nothing...
  layout_.trampolines.clear();
  jump(kA + 0x40, kC);
  DumpMemory elsewhere = kernel_memory();
  EXPECT_EQ(first_unconnected_frame(other_site, elsewhere, layout_), 2u);
  // ... unless that one jumps on to B (do_syscall_64 -> x64_sys_call -> __x64_sys_read -> ksys_read).
  jump(kC + 0x50, kB);
  DumpMemory two_jumps = kernel_memory();
  EXPECT_EQ(first_unconnected_frame(other_site, two_jumps, layout_), std::nullopt);
  // A return address not after any call.
  KernelStack no_call = unwound({0x1111, kB + 0x11, kC + 0x20, 0x2222, 0x3333, kEntry + 0x15});
  EXPECT_EQ(first_unconnected_frame(no_call, kernel, layout_), 1u);
  // ... unless it is in init text, whose code the guest freed after boot: taken as it is.
  layout_.init_text = {kB, kC};
  EXPECT_EQ(first_unconnected_frame(no_call, kernel, layout_), std::nullopt);
  layout_.init_text = {};
  // A stack that ends where its CPU started: that last address was pushed, not called.
  KernelStack started = unwound({0x1111, kB + 0x10, kStart + 0x5});
  ASSERT_TRUE(started.reached_end);
  EXPECT_EQ(started.frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kStart + 0x5}));
  EXPECT_EQ(started.not_called, std::vector<size_t>{2});
  EXPECT_EQ(first_unconnected_frame(started, kernel, layout_), std::nullopt);
  // An IP saved by an interrupt is not a return address: it is where the code was, after no call.
  KernelStack interrupted{StackMethod::orc, {kA + 0x7, kB + 0x10, kC + 0x3, kEntry + 0x15}, true, {2}};
  EXPECT_EQ(first_unconnected_frame(interrupted, kernel, layout_), std::nullopt);
  interrupted.not_called.clear();
  EXPECT_EQ(first_unconnected_frame(interrupted, kernel, layout_), 2u);
}

// Two torn copies a real guest kept (2 in 7 racy recordings): "clear_user_rep_good+0xe
// __x86_indirect_thunk_rax+0x5", a retpoline thunk's own return address left on the stack,
// where ORC's end-of-stack hint made it look like where the stack started; and "vfs_read+0xa5
// vfs_read+0xa5", a later read's frame under an earlier one's through an indirect call.
TEST_F(MadeUpKernel, ATornCopyThroughAThunkOrAnIndirectCallIsNotConnected) {
  orc_tables();
  // In the code at kStart (end-of-stack, as the thunks' speculation traps are): a retpoline's
  // call to its own next step at +0x40, returning to +0x45.
  call(kStart + 0x40, kStart + 0x60);
  layout_.trampolines = {kEnd};
  // C calls through a register at +0x60 (ff d0, returning to +0x62).
  text_[kC + 0x60 - kText] = 0xff;
  text_[kC + 0x61 - kText] = 0xd0;
  DumpMemory kernel = kernel_memory();
  const uint64_t sp = kStack + 0x3e00;
  DumpMemory stack = stack_at(sp, {0x1111, kStart + 0x45});
  VcpuRegisters r;
  r.rip = kA + 0x7;
  r.rsp = sp;
  KernelStack stale = unwind_kernel_stack(r, stack, kernel, layout_, StackMethod::orc);
  ASSERT_TRUE(stale.reached_end);  // the hint ends the unwind, as on the guest
  EXPECT_EQ(stale.frames, (std::vector<uint64_t>{kA + 0x7, kStart + 0x45}));
  EXPECT_EQ(first_unconnected_frame(stale, kernel, layout_), 1u);
  // Right above the thunk's own next step, that address is the thunk's frame.
  KernelStack in_thunk{StackMethod::orc, {kStart + 0x60, kStart + 0x45}, true, {1}};
  EXPECT_EQ(first_unconnected_frame(in_thunk, kernel, layout_), std::nullopt);
  // A stack that really starts there (pushed, after no call) is kept, as before.
  KernelStack started{StackMethod::orc, {kA + 0x7, kB + 0x10, kStart + 0x5}, true, {2}};
  EXPECT_EQ(first_unconnected_frame(started, kernel, layout_), std::nullopt);

  // B's call of A through a trampoline, twice: the callee is unknown, but not B itself.
  layout_.trampolines = {kA};
  KernelStack through_trampoline{StackMethod::orc, {kA + 0x7, kB + 0x10, kC + 0x20, kEntry + 0x15}, true, {}};
  EXPECT_EQ(first_unconnected_frame(through_trampoline, kernel, layout_), std::nullopt);
  KernelStack repeated{StackMethod::orc, {kA + 0x7, kB + 0x10, kB + 0x10, kC + 0x20, kEntry + 0x15}, true, {}};
  EXPECT_EQ(first_unconnected_frame(repeated, kernel, layout_), 2u);
  // The same through a register: any callee but C.
  KernelStack through_register{StackMethod::orc, {kA + 0x7, kC + 0x62, kEntry + 0x15}, true, {}};
  EXPECT_EQ(first_unconnected_frame(through_register, kernel, layout_), std::nullopt);
  KernelStack into_itself{StackMethod::orc, {kC + 0x10, kC + 0x62, kEntry + 0x15}, true, {}};
  EXPECT_EQ(first_unconnected_frame(into_itself, kernel, layout_), 1u);
}

// Through the monitor: a running vCPU's stack that is not the sample's is left out and counted;
// the same words read from a paused VM (one instant, where a tail call can explain them) are kept.
TEST_F(MadeUpKernel, TheReaderLeavesOutARunningVcpusStackThatNoCallMade) {
  orc_tables();
  const uint64_t sp = kStack + 0x3e00;
  std::vector<uint64_t> words = {0x1111, kB + 0x10, kB + 0x10, kC + 0x20, 0x2222, 0x3333, kEntry + 0x15};
  std::vector<uint64_t> regs(21, 0);
  regs[16] = 0x401000;
  regs[17] = 0x33;
  regs[19] = 0x7ffe0000;
  words.insert(words.end(), regs.begin(), regs.end());
  DumpMemory whole_pages;  // the kernel reads whole pages: the ORC tables' pages end in zeros
  whole_pages.add({kOrc, std::vector<uint8_t>(2 * kGuestPageSize)});
  DumpingMonitor monitor({kernel_memory(), stack_at(sp, words), whole_pages}, sp);
  KernelMemory kernel(monitor, {0});
  VcpuRegisters r;
  r.rip = kA + 0x7;
  r.rsp = sp;
  r.cpl = 0;

  VcpuStackReader running(monitor, kernel, layout_, StackMethod::orc, /*paused=*/false);
  Result<std::optional<KernelStack>> left_out = running.read(r);
  ASSERT_TRUE(left_out.ok()) << left_out.error().describe();
  EXPECT_FALSE(left_out->has_value());
  EXPECT_EQ(running.stats().moved, 1u);
  EXPECT_EQ(running.stats().stacks(), 0u);

  VcpuStackReader paused(monitor, kernel, layout_, StackMethod::orc, /*paused=*/true);
  Result<std::optional<KernelStack>> kept = paused.read(r);
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kB + 0x10, kC + 0x20, kEntry + 0x15}));
  EXPECT_EQ(paused.stats().moved, 0u);
}

// A running vCPU's stack whose return addresses all connect (B's call goes through a
// trampoline, so it may have called anything) is dumped a second time: kept when the words the
// unwind read held still, left out when one changed in between (the vCPU ran on, and the first
// copy could have mixed moments: seen on a real guest as "clear_user_rep_good vfs_read+0xa5",
// vfs_read's indirect call of read_zero standing where read_zero's return address had been).
TEST_F(MadeUpKernel, TheReaderKeepsARunningVcpusStackOnlyWhenItsWordsHeldStill) {
  orc_tables();
  layout_.trampolines = {kA};
  const uint64_t sp = kStack + 0x3e00;
  std::vector<uint64_t> words = {0x1111, kB + 0x10, kC + 0x20, 0x2222, 0x3333, kEntry + 0x15};
  std::vector<uint64_t> regs(21, 0);
  regs[16] = 0x401000;
  regs[17] = 0x33;
  regs[19] = 0x7ffe0000;
  words.insert(words.end(), regs.begin(), regs.end());
  words.push_back(0);  // the monitor answers in pairs of words: the last pt_regs word needs its pair
  DumpMemory whole_pages;
  whole_pages.add({kOrc, std::vector<uint8_t>(2 * kGuestPageSize)});
  VcpuRegisters r;
  r.rip = kA + 0x7;
  r.rsp = sp;
  r.cpl = 0;

  DumpingMonitor still({kernel_memory(), stack_at(sp, words), whole_pages}, sp);
  KernelMemory still_kernel(still, {0});
  VcpuStackReader reader(still, still_kernel, layout_, StackMethod::orc, /*paused=*/false);
  Result<std::optional<KernelStack>> kept = reader.read(r);
  ASSERT_TRUE(kept.ok()) << kept.error().describe();
  ASSERT_TRUE(kept->has_value());
  EXPECT_EQ((*kept)->frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kC + 0x20, kEntry + 0x15}));
  EXPECT_EQ(reader.stats().moved, 0u);

  // Between the dumps a word the unwind read changed (B's frame now returns elsewhere in C); a
  // word below the stack pointer's frames that it never read changing would not matter.
  std::vector<uint64_t> later = words;
  later[2] = kC + 0x24;
  DumpingMonitor ran_on({kernel_memory(), stack_at(sp, words), whole_pages}, sp);
  ran_on.change_stack_after_first_dump(stack_at(sp, later));
  KernelMemory ran_on_kernel(ran_on, {0});
  VcpuStackReader second(ran_on, ran_on_kernel, layout_, StackMethod::orc, /*paused=*/false);
  Result<std::optional<KernelStack>> left_out = second.read(r);
  ASSERT_TRUE(left_out.ok()) << left_out.error().describe();
  EXPECT_FALSE(left_out->has_value());
  EXPECT_EQ(second.stats().moved, 1u);

  std::vector<uint64_t> unread_change = words;
  unread_change[0] = 0x9999;  // A's own slot below its return address: the unwind never reads it
  DumpingMonitor scribbled({kernel_memory(), stack_at(sp, words), whole_pages}, sp);
  scribbled.change_stack_after_first_dump(stack_at(sp, unread_change));
  KernelMemory scribbled_kernel(scribbled, {0});
  VcpuStackReader third(scribbled, scribbled_kernel, layout_, StackMethod::orc, /*paused=*/false);
  Result<std::optional<KernelStack>> still_kept = third.read(r);
  ASSERT_TRUE(still_kept.ok() && still_kept->has_value());
  EXPECT_EQ(third.stats().moved, 0u);
}

TEST_F(MadeUpKernel, FramePointersAndScanWithoutOrc) {
  DumpMemory kernel = kernel_memory();
  EXPECT_FALSE(layout_.has_orc());
  // Frame records [saved bp, return address], each above the last; the outermost bp is 0.
  const uint64_t sp = kStack + 0x3f00;
  DumpMemory stack = stack_at(sp, {kC + 0x20,  // a stale return address below the first frame
                                   sp + 0x28, kB + 0x10, 0xdead, 0xbeef, 0, kC + 0x20, kA + 0x3});
  VcpuRegisters r;
  r.rip = kA + 0x7;
  r.rsp = sp;
  r.rbp = sp + 8;
  KernelStack fp = unwind_kernel_stack(r, stack, kernel, layout_, std::nullopt);
  EXPECT_EQ(fp.method, StackMethod::frame_pointer);
  EXPECT_EQ(fp.frames, (std::vector<uint64_t>{kA + 0x7, kB + 0x10, kC + 0x20}));
  EXPECT_TRUE(fp.reached_end);

  // The scan keeps every word that returns right after a call — the stale one too — and
  // nothing else (kA + 0x3 is text, but not after a call).
  KernelStack scan = unwind_kernel_stack(r, stack, kernel, layout_, StackMethod::scan);
  EXPECT_EQ(scan.method, StackMethod::scan);
  EXPECT_EQ(scan.frames, (std::vector<uint64_t>{kA + 0x7, kC + 0x20, kB + 0x10, kC + 0x20}));

  // No frame pointer chain at all: the automatic choice falls back to the scan.
  r.rbp = 0;
  EXPECT_EQ(unwind_kernel_stack(r, stack, kernel, layout_, std::nullopt).method, StackMethod::scan);
  EXPECT_EQ(layout_.function_of(kB + 0x10), kB);
  layout_.trampolines = {kEnd};  // say the last function were a retpoline thunk
  EXPECT_TRUE(layout_.is_trampoline(kEnd));
  EXPECT_FALSE(layout_.is_trampoline(kB + 0x10));
  EXPECT_EQ(layout_.function_of(kText), 0u);
}

}  // namespace
}  // namespace vperf::guest
