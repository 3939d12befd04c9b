#include "guest/vcpu_stack_reader.h"

namespace vperf::guest {

namespace {
// Stack pages beyond the first dump an unwind may read (an interrupt stack's way back to the
// task stack, the deep end of a KASAN-sized stack); each is a monitor command, so a runaway
// unwind stays cheap.
constexpr int kExtraStackPages = 4;
}  // namespace

Result<std::optional<KernelStack>> VcpuStackReader::read(const VcpuRegisters& registers) {
  Result<MemoryDump> dump = read_guest_memory(monitor_, registers.index, "$sp", bytes_to_stack_end(registers.rsp));
  if (!dump) return dump.error();
  if (dump->bytes.empty()) {
    ++stats_.unreadable;
    return std::optional<KernelStack>();
  }
  if (dump->address != registers.rsp) {
    ++stats_.moved;
    return std::optional<KernelStack>();
  }
  kernel_.prefer_vcpu(registers.index);
  VcpuStackMemory stack(&monitor_, registers.index, std::move(dump).value(), kExtraStackPages);
  KernelStack unwound = unwind_kernel_stack(registers, stack, kernel_, layout_, method_);
  if (!paused_ && unwound.method != StackMethod::scan) {
    // A return address at the same stack pointer from a later call: the call before it goes
    // to another function than the sampled one (tail calls are dropped too: a stack is kept only
    // when it provably belongs to the sample). A stack rewritten while QEMU copied it stops
    // short of its base: kept only when whole.
    const std::optional<uint64_t> callee =
        unwound.frames.size() > 1 ? direct_call_target(kernel_, unwound.frames[1]) : std::nullopt;
    const bool other_callee =
        callee && !layout_.is_trampoline(*callee) && layout_.function_of(*callee) != layout_.function_of(registers.rip);
    if (!unwound.reached_end || other_callee) {
      ++stats_.moved;
      return std::optional<KernelStack>();
    }
  }
  ++stats_.by_method[static_cast<size_t>(unwound.method)];
  stats_.complete += unwound.reached_end ? 1 : 0;
  return std::optional<KernelStack>(std::move(unwound));
}

}  // namespace vperf::guest
