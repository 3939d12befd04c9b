#pragma once
// Call stacks of a guest's kernel, unwound on the host from a vCPU's registers and a dump of
// its stack (guest_memory.h), by one of three methods, best first:
//
//   orc   the guest kernel's own ORC tables (__start_orc_unwind_ip..., read from guest memory
//         like the stack): exact, what the guest's own unwinder does (arch/x86/kernel/
//         unwind_orc.c), including the step from pt_regs at an interrupt or syscall entry;
//   fp    the chain of saved frame pointers, for kernels built with frame pointers;
//   scan  every word of the stack that is a kernel text address right after the bytes of a call
//         instruction: return sites, but stale ones left by earlier calls are included (and a
//         byte pattern can match by chance), so a scanned stack is a superset, labelled as such.
//
// The method that produced a stack travels with it (KernelStack::method); recordings name
// their events after it (vcpu-clock.orc, vcpu-clock.fp, vcpu-clock.scan).
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "guest/guest_memory.h"
#include "guest/vcpu_registers.h"

namespace vperf::symbols {
class Kallsyms;
}

namespace vperf::guest {

enum class StackMethod { orc, frame_pointer, scan };
std::string_view method_name(StackMethod method);  // "orc", "fp", "scan"
std::optional<StackMethod> parse_stack_method(std::string_view name);

// One ORC entry as the unwinder uses it, whatever the kernel's layout (Linux 4.14-6.3 keep an
// `end` bit and three types; 6.4 and later an explicit type for undefined and end of stack).
struct OrcEntry {
  enum class Type { undefined, end_of_stack, call, regs, regs_partial };
  int16_t sp_offset = 0;
  int16_t bp_offset = 0;
  uint8_t sp_reg = 0;  // ORC_REG_*: 0 undefined, 1 prev_sp, 2 dx, 3 di, 4 bp, 5 sp, 6 r10, 7 r13, 8 bp_indirect, 9 sp_indirect
  uint8_t bp_reg = 0;
  Type type = Type::undefined;
  bool signal = false;  // the frame was interrupted, not called: its IP is not a return address
};
// The 6-byte struct orc_entry of a kernel whose version is `major.minor`.
OrcEntry decode_orc_entry(const uint8_t bytes[6], int major, int minor);

// Where a guest kernel's code and ORC tables are: its core text, each module's, and the tables'
// addresses, from its kallsyms and /proc/modules and the version in its linux_banner.
struct GuestKernelLayout {
  std::pair<uint64_t, uint64_t> core_text;           // the kernel image's code, [_text, max(_etext, _einittext))
  std::pair<uint64_t, uint64_t> init_text;           // [_sinittext, _einittext): freed after boot, its bytes gone
  std::vector<std::pair<uint64_t, uint64_t>> text;  // [start, end) ranges, sorted: core and modules
  uint64_t orc_ip_table = 0, orc_ip_table_end = 0, orc_entries = 0;  // 0: no ORC data
  int major = 0, minor = 0;
  std::vector<uint64_t> function_starts;  // every kernel and module text symbol, sorted

  std::vector<uint64_t> trampolines;      // starts of indirect-call thunks and static-call trampolines, sorted

  // The start of the function `address` lies in; 0 when it is below every symbol.
  uint64_t function_of(uint64_t address) const;
  // The start of the next function after the one `address` lies in; 0 when there is none.
  uint64_t next_function(uint64_t address) const;
  // Whether a call to `address` reaches its real callee through a jump (retpoline and call-depth
  // thunks __x86_indirect_*, static-call trampolines __SCT__*): the callee is then unknown.
  bool is_trampoline(uint64_t address) const;
  bool has_orc() const { return orc_ip_table != 0 && orc_ip_table_end > orc_ip_table && orc_entries != 0; }
  bool in_text(uint64_t address) const;
};
// The layout from the guest's symbols; the version comes from linux_banner in `kernel` memory.
Result<GuestKernelLayout> guest_kernel_layout(const symbols::Kallsyms& kallsyms, std::string_view proc_modules, MemoryView& kernel);

// True when the bytes before `return_address` end with a call instruction (e8 rel32, or ff /2
// in any of its addressing forms, with or without a REX prefix).
bool follows_call(MemoryView& kernel, uint64_t return_address);
// The target of the direct call (e8 rel32) right before `return_address`; nullopt for an
// indirect call or none.
std::optional<uint64_t> direct_call_target(MemoryView& kernel, uint64_t return_address);

struct KernelStack {
  StackMethod method = StackMethod::orc;
  std::vector<uint64_t> frames;  // the sample's IP first, then return addresses (or interrupted IPs)
  bool reached_end = false;      // orc: the unwind ended where the kernel's own does (user entry, end of stack)
  // Indexes of the frames (after the first) that are not return addresses: IPs saved on an
  // interrupt or exception (pt_regs), and the outermost frame of a stack that ends where a CPU
  // or task started (head_64.S pushes that address itself, after no call).
  std::vector<size_t> not_called;
};

// The first frame of an unwound stack that the frame below it cannot have been called from: a
// return address that does not follow a call instruction, or follows a direct call to another
// function than the one the frame below lies in, which does not jump there either, directly or
// through one more function (tail calls: arch_cpu_idle jumps through a retpoline thunk to the
// idle routine, and do_syscall_64's call of x64_sys_call returns from ksys_read after two
// jumps). Through a retpoline thunk, a static-call trampoline or a register the callee is
// unknown and any is accepted but the caller itself. A return address of a call into the middle
// of its own function (a retpoline's step, return-stack stuffing) is a frame only right above
// that function, called or not. A stack read while its vCPU ran on is made of words from
// different moments and shows this way (`ksys_read+0x6b ksys_read+0x6b`: ksys_read's call of
// vfs_read returns into ksys_read). nullopt when every return address follows a call of the
// frame below. Return addresses in init text are taken as they are: the guest freed that code
// after boot (a boot CPU's idle stack still returns through start_kernel). Scanned stacks are
// not for this.
std::optional<size_t> first_unconnected_frame(const KernelStack& stack, MemoryView& kernel, const GuestKernelLayout& layout);

// The kernel stack of a vCPU in kernel mode. `stack` holds memory from registers.rsp upwards;
// `kernel` the guest kernel's text and ORC tables. With `method` unset the best method the
// layout allows is used: orc when the kernel has ORC tables, else frame pointers when they give
// at least one frame, else a scan; a forced method is used as it is.
KernelStack unwind_kernel_stack(const VcpuRegisters& registers, MemoryView& stack, MemoryView& kernel, const GuestKernelLayout& layout,
                                std::optional<StackMethod> method);

// The bytes from `rsp` to the end of the 16 KiB-aligned block it lies in: a task stack's end on
// x86_64 (THREAD_SIZE 16 KiB, aligned to it; 32 KiB under KASAN, where the dump stops short and
// the rest is read page by page). Interrupt stacks are only page-aligned under VMAP_STACK: the
// dump may then end early or run into the guard page, which QEMU reports and vperf stops at.
inline uint64_t bytes_to_stack_end(uint64_t rsp) {
  constexpr uint64_t kStackSize = 16384;
  return kStackSize - (rsp & (kStackSize - 1));
}

inline constexpr size_t kMaxKernelFrames = 127;  // perf's default kernel.perf_event_max_stack

}  // namespace vperf::guest
