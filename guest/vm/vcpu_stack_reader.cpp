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
    // The vCPU runs on while QEMU copies its stack (16 bytes at a time, from the stack pointer
    // up, and an interrupt stack's task stack page by page later): a copy can hold the sampled
    // call's lower frames and, above them, what later calls left at the same depth (a read()
    // returned and the next syscall entered on the same stack pointer). Such a mix unwinds to
    // frames no call made, so a stack is kept only when each of its return addresses follows a
    // call of the frame below it (first_unconnected_frame: tail calls through up to two jumps
    // are followed; a longer chain is left out too, as a stack is kept only when it provably
    // belongs to the sample), and when it is whole (one rewritten while copied stops short of
    // its base).
    if (!unwound.reached_end || first_unconnected_frame(unwound, kernel_, layout_)) {
      ++stats_.moved;
      return std::optional<KernelStack>();
    }
    // A mix can still connect: a return address after an indirect call (file->f_op->read in
    // vfs_read) may have called anything. So the stack is dumped once more: the words the unwind
    // read must hold still, and the stack pointer too, for the stack to be the sample's.
    Result<MemoryDump> again = read_guest_memory(monitor_, registers.index, "$sp", bytes_to_stack_end(registers.rsp));
    if (!again) return again.error();
    if (again->address != registers.rsp || !stack.reads_the_same_in(*again)) {
      ++stats_.moved;
      return std::optional<KernelStack>();
    }
  }
  ++stats_.by_method[static_cast<size_t>(unwound.method)];
  stats_.complete += unwound.reached_end ? 1 : 0;
  return std::optional<KernelStack>(std::move(unwound));
}

}  // namespace vperf::guest
