#pragma once
// The guest kernel stack behind each vCPU sample, for `vperf kvm record -g` through a monitor:
// right after a tick's registers, one `x /Ngx $sp` per vCPU in kernel mode dumps its stack from
// the stack pointer to the end of its 16 KiB stack, and kernel_stacks.h unwinds it.
//
// The registers and the dump are two monitor commands (~0.6 ms apart under TCG) while the vCPU
// runs on, and QEMU copies the stack while it may change. So a stack is kept only
// when the dump starts at the registers' RSP, every return address in it follows a call of
// the function of the frame below it (when that call is direct: first_unconnected_frame), the
// unwind reaches the stack's base, and a second dump from the same RSP holds the same words
// where the unwind read them (a return address after an indirect call connects to anything);
// the others have moved on from the sampled IP, or were copied in pieces from different
// moments, and are left out (counted as `moved`). With the VM stopped for each tick (`paused`)
// registers and dump are one instant and every stack is kept, from one dump.
#include <array>
#include <cstdint>
#include <optional>

#include "guest/guest_memory.h"
#include "guest/kernel_stacks.h"
#include "guest/vcpu_registers.h"
#include "guest/vm_monitor.h"

namespace vperf::guest {

struct StackReaderStats {
  std::array<uint64_t, 3> by_method{};  // indexed by StackMethod
  uint64_t moved = 0;                   // the stack had moved on from the sampled IP before its dump
  uint64_t unreadable = 0;              // the monitor could not dump the stack
  uint64_t complete = 0;                // unwound to the kernel's own end (user entry, stack base)
  uint64_t stacks() const { return by_method[0] + by_method[1] + by_method[2]; }
};

class VcpuStackReader {
 public:
  VcpuStackReader(VmMonitor& monitor, KernelMemory& kernel, GuestKernelLayout layout, std::optional<StackMethod> method, bool paused)
      : monitor_(monitor), kernel_(kernel), layout_(std::move(layout)), method_(method), paused_(paused) {}

  // The kernel stack of a vCPU sampled in kernel mode; nullopt when the stack moved on before it
  // could be dumped, or cannot be read. A monitor that stops answering is an Error.
  Result<std::optional<KernelStack>> read(const VcpuRegisters& registers);
  const StackReaderStats& stats() const { return stats_; }
  const GuestKernelLayout& layout() const { return layout_; }

 private:
  VmMonitor& monitor_;
  KernelMemory& kernel_;
  GuestKernelLayout layout_;
  std::optional<StackMethod> method_;
  bool paused_;
  StackReaderStats stats_;
};

}  // namespace vperf::guest
