#include "guest/kernel_stacks.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "symbols/kallsyms.h"

namespace vperf::guest {

std::string_view method_name(StackMethod method) {
  switch (method) {
    case StackMethod::orc: return "orc";
    case StackMethod::frame_pointer: return "fp";
    case StackMethod::scan: return "scan";
  }
  return "?";
}

std::optional<StackMethod> parse_stack_method(std::string_view name) {
  for (StackMethod m : {StackMethod::orc, StackMethod::frame_pointer, StackMethod::scan})
    if (name == method_name(m)) return m;
  return std::nullopt;
}

OrcEntry decode_orc_entry(const uint8_t bytes[6], int major, int minor) {
  OrcEntry e;
  std::memcpy(&e.sp_offset, bytes, 2);
  std::memcpy(&e.bp_offset, bytes + 2, 2);
  const unsigned flags = static_cast<unsigned>(bytes[4]) | static_cast<unsigned>(bytes[5]) << 8;
  e.sp_reg = flags & 0xf;
  e.bp_reg = (flags >> 4) & 0xf;
  const int version = major * 100 + minor;
  if (version >= 604) {  // type:3 signal:1, with explicit undefined and end-of-stack types
    static constexpr OrcEntry::Type kTypes[] = {OrcEntry::Type::undefined, OrcEntry::Type::end_of_stack, OrcEntry::Type::call,
                                                OrcEntry::Type::regs, OrcEntry::Type::regs_partial};
    const unsigned type = (flags >> 8) & 7;
    e.type = type < 5 ? kTypes[type] : OrcEntry::Type::undefined;
    e.signal = (flags >> 11) & 1;
    return e;
  }
  // 4.14-6.3: type:2 (call, regs, regs_partial), then 6.3's signal bit, then end; an undefined
  // SP base marks the end of the stack when `end` is set and a hole in the table otherwise.
  const bool end = version >= 603 ? (flags >> 11) & 1 : (flags >> 10) & 1;
  e.signal = version >= 603 && ((flags >> 10) & 1);
  if (e.sp_reg == 0) {
    e.type = end ? OrcEntry::Type::end_of_stack : OrcEntry::Type::undefined;
    return e;
  }
  static constexpr OrcEntry::Type kTypes[] = {OrcEntry::Type::call, OrcEntry::Type::regs, OrcEntry::Type::regs_partial,
                                              OrcEntry::Type::undefined};
  e.type = kTypes[(flags >> 8) & 3];
  if (version < 603 && e.type != OrcEntry::Type::call) e.signal = true;  // 6.3 on: the bit says it
  return e;
}

bool GuestKernelLayout::in_text(uint64_t address) const {
  auto it = std::upper_bound(text.begin(), text.end(), address, [](uint64_t a, const auto& range) { return a < range.first; });
  return it != text.begin() && address < std::prev(it)->second;
}

bool GuestKernelLayout::is_trampoline(uint64_t address) const {
  return std::binary_search(trampolines.begin(), trampolines.end(), function_of(address));
}

uint64_t GuestKernelLayout::function_of(uint64_t address) const {
  auto it = std::upper_bound(function_starts.begin(), function_starts.end(), address);
  return it == function_starts.begin() ? 0 : *std::prev(it);
}

uint64_t GuestKernelLayout::next_function(uint64_t address) const {
  auto it = std::upper_bound(function_starts.begin(), function_starts.end(), address);
  return it == function_starts.end() ? 0 : *it;
}

Result<GuestKernelLayout> guest_kernel_layout(const symbols::Kallsyms& kallsyms, std::string_view proc_modules, MemoryView& kernel) {
  GuestKernelLayout layout;
  // The image's code: head text from _text, core text to _etext, and init text (a boot CPU's
  // idle stack still returns through start_kernel there; the ORC tables cover it).
  const std::optional<uint64_t> text = kallsyms.address_of("_text");
  const std::optional<uint64_t> etext = kallsyms.address_of("_etext");
  if (!text || !etext || *etext <= *text) return Error{"the guest's kallsyms has no _text/_etext"};
  layout.core_text = {*text, *etext};
  const std::optional<uint64_t> sinittext = kallsyms.address_of("_sinittext");
  const std::optional<uint64_t> einittext = kallsyms.address_of("_einittext");
  if (sinittext && einittext && *einittext > *sinittext) {
    layout.core_text.second = std::max(*etext, *einittext);
    layout.init_text = {*sinittext, *einittext};
    layout.text.emplace_back(*sinittext, *einittext);
  }
  layout.text.emplace_back(*text, *etext);
  // /proc/modules: "NAME SIZE REFS DEPS STATE ADDRESS": the module's core, text first.
  std::istringstream modules{std::string(proc_modules)};
  for (std::string line; std::getline(modules, line);) {
    std::istringstream fields(line);
    std::string name, refs, deps, state, address;
    uint64_t size = 0, start = 0;
    if (!(fields >> name >> size >> refs >> deps >> state >> address) || !address.starts_with("0x")) continue;
    auto [end, err] = std::from_chars(address.data() + 2, address.data() + address.size(), start, 16);
    if (err == std::errc() && start != 0) layout.text.emplace_back(start, start + size);
  }
  std::sort(layout.text.begin(), layout.text.end());
  for (const symbols::Symbol& sym : kallsyms.kernel().symbols()) {
    layout.function_starts.push_back(sym.start);
    if (sym.name.starts_with("__x86_indirect_") || sym.name.starts_with("__SCT__")) layout.trampolines.push_back(sym.start);
  }
  for (const auto& [name, table] : kallsyms.modules())
    for (const symbols::Symbol& sym : table.symbols()) layout.function_starts.push_back(sym.start);
  std::sort(layout.function_starts.begin(), layout.function_starts.end());
  // The thunks and trampolines fill sections of their own (.static_call.text, then the
  // retpoline thunks): every symbol between the first and the last is one, whatever name the
  // symbol table kept for its address (of __x86_indirect_thunk_rax, __x86_indirect_thunk_array,
  // __indirect_thunk_start and __static_call_text_end, all at one address, one name is kept).
  if (!layout.trampolines.empty()) {
    const auto [first, last] = std::minmax_element(layout.trampolines.begin(), layout.trampolines.end());
    const auto from = std::lower_bound(layout.function_starts.begin(), layout.function_starts.end(), *first);
    const auto to = std::upper_bound(layout.function_starts.begin(), layout.function_starts.end(), *last);
    layout.trampolines.assign(from, to);
  }

  // The version decides the ORC entry layout: "Linux version 6.1.0-28-amd64 ...".
  if (const std::optional<uint64_t> banner = kallsyms.address_of("linux_banner")) {
    char banner_text[32] = {};
    if (kernel.read(*banner, {reinterpret_cast<uint8_t*>(banner_text), sizeof banner_text - 1})) {
      std::string_view s(banner_text);
      if (s.starts_with("Linux version ")) {
        s.remove_prefix(14);
        auto [dot, err] = std::from_chars(s.data(), s.data() + s.size(), layout.major);
        if (err == std::errc() && dot < s.data() + s.size() && *dot == '.') std::from_chars(dot + 1, s.data() + s.size(), layout.minor);
      }
    }
  }
  const auto ip = kallsyms.address_of("__start_orc_unwind_ip");
  const auto ip_end = kallsyms.address_of("__stop_orc_unwind_ip");
  const auto entries = kallsyms.address_of("__start_orc_unwind");
  if (ip && ip_end && entries && layout.major > 0) {
    layout.orc_ip_table = *ip;
    layout.orc_ip_table_end = *ip_end;
    layout.orc_entries = *entries;
  }
  return layout;
}

namespace {

// The length of an ff /2 (call near indirect) instruction whose ModRM byte is `modrm` and whose
// SIB byte, when it has one, is `sib`; 0 when `modrm` is not /2.
size_t indirect_call_length(uint8_t modrm, uint8_t sib) {
  if (((modrm >> 3) & 7) != 2) return 0;
  const unsigned mod = modrm >> 6, rm = modrm & 7;
  if (mod == 3) return 2;
  size_t length = 2;
  if (rm == 4) {
    ++length;                                  // SIB
    if (mod == 0 && (sib & 7) == 5) length += 4;  // no base: disp32
  }
  if (mod == 0 && rm == 5) length += 4;  // RIP-relative disp32
  if (mod == 1) length += 1;
  if (mod == 2) length += 4;
  return length;
}

}  // namespace

bool follows_call(MemoryView& kernel, uint64_t return_address) {
  uint8_t before[8];
  if (return_address < sizeof before || !kernel.read(return_address - sizeof before, before)) return false;
  const auto at = [&](size_t back) { return before[sizeof before - back]; };  // the byte `back` bytes before the return address
  if (at(5) == 0xe8) return true;                                            // call rel32
  for (size_t back = 2; back <= 7; ++back) {
    if (at(back) != 0xff) continue;
    if (indirect_call_length(at(back - 1), back >= 3 ? at(back - 2) : 0) == back) return true;
  }
  // The same behind a REX prefix: 41 ff d3 is call *%r11.
  for (size_t back = 3; back <= 8; ++back)
    if ((at(back) & 0xf0) == 0x40 && at(back - 1) == 0xff && indirect_call_length(at(back - 2), back >= 4 ? at(back - 3) : 0) == back - 1)
      return true;
  return false;
}

std::optional<uint64_t> direct_call_target(MemoryView& kernel, uint64_t return_address) {
  uint8_t call[5];
  if (return_address < sizeof call || !kernel.read(return_address - sizeof call, call) || call[0] != 0xe8) return std::nullopt;
  int32_t rel = 0;
  std::memcpy(&rel, call + 1, sizeof rel);
  return return_address + static_cast<int64_t>(rel);
}

namespace {

// The targets of the jumps (jmp rel32) in the code of the function starting at `function`: the
// functions it can tail-call. The bytes are matched, not decoded, so a pattern inside another
// instruction can match too; that only ever keeps a stack, never drops one. A function's first
// 16 KiB are searched (x64_sys_call, the syscall switch, is 4.7 KiB).
std::vector<uint64_t> jump_targets(MemoryView& kernel, const GuestKernelLayout& layout, uint64_t function) {
  constexpr uint64_t kMaxFunctionBytes = 16384;
  const uint64_t next = layout.next_function(function);
  const uint64_t size = next > function ? std::min(next - function, kMaxFunctionBytes) : 0;
  std::vector<uint8_t> code(size);
  std::vector<uint64_t> targets;
  if (size < 5 || !kernel.read(function, code)) return targets;
  for (size_t at = 0; at + 5 <= code.size(); ++at) {
    if (code[at] != 0xe9) continue;
    int32_t rel = 0;
    std::memcpy(&rel, &code[at + 1], sizeof rel);
    const uint64_t destination = layout.function_of(function + at + 5 + static_cast<int64_t>(rel));
    if (destination != function && destination != 0) targets.push_back(destination);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  return targets;
}

// Whether the function starting at `function`, called, can end up in `target` by tail calls: it
// jumps there, or to a trampoline (whose target is unknown), or to a function that does (two
// jumps: do_syscall_64 calls x64_sys_call, which jumps to __x64_sys_read, which jumps to
// ksys_read).
bool may_jump_to(MemoryView& kernel, const GuestKernelLayout& layout, uint64_t function, uint64_t target, int jumps = 2) {
  const std::vector<uint64_t> targets = jump_targets(kernel, layout, function);
  for (uint64_t t : targets)
    if (t == target || layout.is_trampoline(t)) return true;
  if (jumps > 1)
    for (uint64_t t : targets)
      if (may_jump_to(kernel, layout, t, target, jumps - 1)) return true;
  return false;
}

}  // namespace

std::optional<size_t> first_unconnected_frame(const KernelStack& stack, MemoryView& kernel, const GuestKernelLayout& layout) {
  auto called = [&](size_t i) { return i > 0 && std::find(stack.not_called.begin(), stack.not_called.end(), i) == stack.not_called.end(); };
  auto in_init_text = [&](uint64_t address) { return address >= layout.init_text.first && address < layout.init_text.second; };
  for (size_t i = 1; i < stack.frames.size(); ++i) {
    const uint64_t return_address = stack.frames[i];
    // The frame below: the sample's or an interrupted IP as it is, a return address minus one
    // (a call that ends its function returns to the next one's first byte).
    const uint64_t below = layout.function_of(stack.frames[i - 1] - (called(i - 1) ? 1 : 0));
    const uint64_t caller = layout.function_of(return_address - 1);
    const std::optional<uint64_t> callee = direct_call_target(kernel, return_address);
    // A call into the middle of its own function is a retpoline thunk's step to its target or
    // the return-stack stuffing of a context switch: the address it pushes is replaced or
    // dropped at once, a frame only right above that function. Elsewhere it is a stale word,
    // and the thunks' speculation traps carry end-of-stack hints, so a torn copy unwinds into
    // one as if the stack started there: checked whether or not the frame counts as called.
    if (callee && *callee != caller && layout.function_of(*callee) == caller && below != caller) return i;
    if (!called(i) || in_init_text(return_address - 1)) continue;
    if (!follows_call(kernel, return_address)) return i;
    // An indirect call, or one through a trampoline: the callee is unknown, but it is not the
    // caller itself (no kernel function calls itself through a pointer at one site; a torn copy
    // shows `vfs_read+0xa5 vfs_read+0xa5`, a later read's frame under an earlier one's).
    if (!callee || layout.is_trampoline(*callee)) {
      if (below == caller) return i;
      continue;
    }
    const uint64_t target = layout.function_of(*callee);
    if (target != below && !may_jump_to(kernel, layout, target, below)) return i;
  }
  return std::nullopt;
}

namespace {

// pt_regs as the x86_64 entry code saves it: the offsets the ORC unwinder reads.
constexpr uint64_t kRegsBp = 4 * 8, kRegsDx = 12 * 8, kRegsDi = 14 * 8, kRegsR10 = 7 * 8, kRegsR13 = 2 * 8;
constexpr uint64_t kRegsIp = 16 * 8, kRegsCs = 17 * 8, kRegsSp = 19 * 8, kPtRegsSize = 21 * 8;
constexpr uint64_t kIretFrameOffset = kRegsIp;  // a partial frame is the hardware's iret frame only

class OrcUnwinder {
 public:
  OrcUnwinder(MemoryView& stack, MemoryView& kernel, const GuestKernelLayout& layout) : stack_(stack), kernel_(kernel), layout_(layout) {}

  KernelStack unwind(const VcpuRegisters& r) {
    KernelStack out;
    out.method = StackMethod::orc;
    out.frames.push_back(r.rip);
    State s{r.rip, r.rsp, r.rbp, 0, true, true};
    first_ = &r;
    while (out.frames.size() < kMaxKernelFrames) {
      Step step = next(s);
      if (step == Step::end) {
        out.reached_end = true;
        // The last frame is where the CPU or task started (an end-of-stack hint), after no call.
        if (at_stack_start_ && out.frames.size() > 1) out.not_called.push_back(out.frames.size() - 1);
        break;
      }
      if (step == Step::error) break;
      if (s.regs != 0) out.not_called.push_back(out.frames.size());
      out.frames.push_back(s.ip);
    }
    return out;
  }

 private:
  struct State {
    uint64_t ip, sp, bp;
    uint64_t regs;  // address of the pt_regs the current frame came from; 0: none (or the vCPU's own)
    bool full_regs;
    bool signal;
  };
  enum class Step { frame, end, error };

  std::optional<OrcEntry> find(uint64_t ip) {
    const uint64_t count = (layout_.orc_ip_table_end - layout_.orc_ip_table) / 4;
    // The last table entry at or below ip: ip_table[i] is relative to its own address.
    auto ip_at = [&](uint64_t i) -> std::optional<uint64_t> {
      const uint64_t where = layout_.orc_ip_table + 4 * i;
      std::optional<int32_t> rel = kernel_.value<int32_t>(where);
      if (!rel) return std::nullopt;
      return where + static_cast<int64_t>(*rel);
    };
    uint64_t lo = 0, hi = count;  // answer in [lo, hi)
    std::optional<uint64_t> first = ip_at(0);
    if (!first || ip < *first) return std::nullopt;
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      std::optional<uint64_t> at = ip_at(mid);
      if (!at) return std::nullopt;
      (*at <= ip ? lo : hi) = mid;
    }
    uint8_t bytes[6];
    if (!kernel_.read(layout_.orc_entries + 6 * lo, bytes)) return std::nullopt;
    return decode_orc_entry(bytes, layout_.major, layout_.minor);
  }

  // A pt_regs field of the frame's saved registers; for the first frame, the vCPU's own.
  std::optional<uint64_t> saved_register(const State& s, uint64_t offset, uint64_t vcpu_value) {
    if (s.regs == 0) return s.full_regs ? std::optional<uint64_t>(vcpu_value) : std::nullopt;
    if (!s.full_regs) return std::nullopt;
    return stack_.value<uint64_t>(s.regs + offset);
  }

  Step next(State& s) {
    // Return addresses minus one, so a call at a function's end finds the caller's entry. The
    // tables cover the kernel image's text only.
    std::optional<OrcEntry> found =
        s.ip >= layout_.core_text.first && s.ip < layout_.core_text.second ? find(s.signal ? s.ip : s.ip - 1) : std::nullopt;
    // Module code's ORC tables live in its struct module, which vperf does not read: the stack
    // ends at the module frame (guessing a frame pointer, as the kernel does for code with no ORC
    // data at all, would be wrong in modules built without one).
    if (!found) return Step::error;
    const OrcEntry orc = *found;
    if (orc.type == OrcEntry::Type::end_of_stack) {
      at_stack_start_ = true;
      return Step::end;
    }
    if (orc.type == OrcEntry::Type::undefined) return Step::error;
    const uint64_t prev_sp = s.sp;
    uint64_t sp = 0;
    bool indirect = false;
    switch (orc.sp_reg) {
      case 5: sp = s.sp + orc.sp_offset; break;  // SP
      case 4: sp = s.bp + orc.sp_offset; break;  // BP
      case 9: sp = s.sp; indirect = true; break;  // SP_INDIRECT: the offset applies after the load
      case 8: sp = s.bp + orc.sp_offset; indirect = true; break;  // BP_INDIRECT
      case 6: case 7: case 3: case 2: {  // R10, R13, DI, DX: entry code, from saved registers
        const uint64_t offset = orc.sp_reg == 6 ? kRegsR10 : orc.sp_reg == 7 ? kRegsR13 : orc.sp_reg == 3 ? kRegsDi : kRegsDx;
        const uint64_t own = orc.sp_reg == 6 ? first_->r10 : orc.sp_reg == 7 ? first_->r13 : orc.sp_reg == 3 ? first_->rdi : first_->rdx;
        std::optional<uint64_t> v = saved_register(s, offset, own);
        if (!v) return Step::error;
        sp = *v;
        break;
      }
      default: return Step::error;
    }
    if (indirect) {
      std::optional<uint64_t> v = stack_.value<uint64_t>(sp);
      if (!v) return Step::error;
      sp = *v;
      if (orc.sp_reg == 9) sp += orc.sp_offset;
    }
    switch (orc.type) {
      case OrcEntry::Type::call: {
        std::optional<uint64_t> ip = stack_.value<uint64_t>(sp - 8);
        if (!ip) return Step::error;
        s.ip = *ip;
        s.sp = sp;
        s.regs = 0;
        s.full_regs = false;
        s.signal = orc.signal;
        break;
      }
      case OrcEntry::Type::regs: {
        std::optional<uint64_t> ip = stack_.value<uint64_t>(sp + kRegsIp), new_sp = stack_.value<uint64_t>(sp + kRegsSp);
        uint8_t whole[kPtRegsSize];
        if (!ip || !new_sp || !stack_.read(sp, whole)) return Step::error;
        s.ip = *ip;
        s.sp = *new_sp;
        s.regs = sp;
        s.full_regs = true;
        s.signal = true;
        break;
      }
      case OrcEntry::Type::regs_partial: {
        std::optional<uint64_t> ip = stack_.value<uint64_t>(sp), new_sp = stack_.value<uint64_t>(sp + (kRegsSp - kRegsIp));
        if (!ip || !new_sp) return Step::error;
        s.ip = *ip;
        s.sp = *new_sp;
        s.regs = sp - kIretFrameOffset;
        s.full_regs = false;
        s.signal = true;
        break;
      }
      default: return Step::error;
    }
    switch (orc.bp_reg) {
      case 0:  // undefined: unchanged, unless full saved registers say otherwise
        if (s.regs != 0 && s.full_regs) {
          std::optional<uint64_t> bp = stack_.value<uint64_t>(s.regs + kRegsBp);
          if (!bp) return Step::error;
          s.bp = *bp;
        }
        break;
      case 1: {  // PREV_SP
        std::optional<uint64_t> bp = stack_.value<uint64_t>(sp + orc.bp_offset);
        if (!bp) return Step::error;
        s.bp = *bp;
        break;
      }
      case 4: {  // BP
        std::optional<uint64_t> bp = stack_.value<uint64_t>(s.bp + orc.bp_offset);
        if (!bp) return Step::error;
        s.bp = *bp;
        break;
      }
      default: return Step::error;
    }
    // A stack that does not grow towards its base is bad data, on the same 16 KiB stack.
    if ((s.sp & ~uint64_t{16383}) == (prev_sp & ~uint64_t{16383}) && s.sp <= prev_sp) return Step::error;
    if (s.regs != 0) {  // registers saved on entry from user space end the kernel stack (perf stops there too)
      std::optional<uint64_t> cs = stack_.value<uint64_t>(s.regs + kRegsCs);
      if (cs && (*cs & 3) != 0) return Step::end;
    }
    // Like the kernel's perf callchains, a frame outside kernel code ends the stack.
    if (!layout_.in_text(s.ip)) return Step::error;
    return Step::frame;
  }

  MemoryView& stack_;
  MemoryView& kernel_;
  const GuestKernelLayout& layout_;
  const VcpuRegisters* first_ = nullptr;
  bool at_stack_start_ = false;  // the unwind ended at an end-of-stack entry, not at saved user registers
};

// Saved frame pointers: [bp] is the caller's bp, [bp + 8] the return address. Each frame must
// lie above the last on the same stack and return right after a call into kernel text.
KernelStack unwind_frame_pointers(const VcpuRegisters& r, MemoryView& stack, MemoryView& kernel, const GuestKernelLayout& layout) {
  KernelStack out;
  out.method = StackMethod::frame_pointer;
  out.frames.push_back(r.rip);
  const uint64_t stack_end = r.rsp + bytes_to_stack_end(r.rsp);
  uint64_t bp = r.rbp, floor = r.rsp;
  while (out.frames.size() < kMaxKernelFrames && bp >= floor && bp + 16 <= stack_end && bp % 8 == 0) {
    std::optional<uint64_t> next = stack.value<uint64_t>(bp), ret = stack.value<uint64_t>(bp + 8);
    if (!next || !ret || !layout.in_text(*ret) || !follows_call(kernel, *ret)) break;
    out.frames.push_back(*ret);
    if (*next == 0) {
      out.reached_end = true;
      break;
    }
    floor = bp + 16;
    bp = *next;
  }
  return out;
}

KernelStack scan_stack(const VcpuRegisters& r, MemoryView& stack, MemoryView& kernel, const GuestKernelLayout& layout) {
  KernelStack out;
  out.method = StackMethod::scan;
  out.frames.push_back(r.rip);
  const uint64_t stack_end = r.rsp + bytes_to_stack_end(r.rsp);
  for (uint64_t at = r.rsp & ~uint64_t{7}; at + 8 <= stack_end && out.frames.size() < kMaxKernelFrames; at += 8) {
    std::optional<uint64_t> word = stack.value<uint64_t>(at);
    if (!word) break;
    if (layout.in_text(*word) && follows_call(kernel, *word)) out.frames.push_back(*word);
  }
  out.reached_end = false;  // a scan has no notion of the stack's base frame
  return out;
}

}  // namespace

KernelStack unwind_kernel_stack(const VcpuRegisters& registers, MemoryView& stack, MemoryView& kernel, const GuestKernelLayout& layout,
                                std::optional<StackMethod> method) {
  if (!method) {
    if (layout.has_orc()) method = StackMethod::orc;
    else if (KernelStack fp = unwind_frame_pointers(registers, stack, kernel, layout); fp.frames.size() > 1) return fp;
    else method = StackMethod::scan;
  }
  switch (*method) {
    case StackMethod::orc:
      if (layout.has_orc()) return OrcUnwinder(stack, kernel, layout).unwind(registers);
      return KernelStack{StackMethod::orc, {registers.rip}, false, {}};
    case StackMethod::frame_pointer: return unwind_frame_pointers(registers, stack, kernel, layout);
    case StackMethod::scan: return scan_stack(registers, stack, kernel, layout);
  }
  return {};
}

}  // namespace vperf::guest
