#pragma once
// The registers of each vCPU as QEMU's monitor prints them (HMP `info registers -a`, also
// reached through QMP's human-monitor-command and libvirt's qemu-monitor-command): the text is
// the only interface QEMU offers for a running vCPU's registers. One block per vCPU:
//
//   CPU#0
//   RAX=... RBX=... RCX=... RDX=...
//   RSI=... RDI=... RBP=... RSP=...
//   R8 =... R9 =... R10=... R11=...
//   R12=... R13=... R14=... R15=...
//   RIP=ffffffff86c592eb RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
//   ... segment, descriptor table and control registers: CR0=... CR2=... CR3=... CR4=...
//
// (QEMU 7.2, target/i386/cpu-dump.c; 32-bit guests print EIP/ESP/EBP, which are read too.)
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::guest {

struct VcpuRegisters {
  int index = 0;        // the N of "CPU#N" (QEMU's cpu-index)
  uint64_t rip = 0;
  uint64_t rsp = 0;
  uint64_t rbp = 0;
  // The other registers the guest kernel's ORC data may name as a frame's base (entry code).
  uint64_t rdi = 0, rdx = 0, r10 = 0, r13 = 0;
  uint64_t cr3 = 0;     // the page-table root: which address space user RIPs belong to
  int cpl = 0;          // current privilege level: 0 kernel, 3 user
  bool halted = false;  // HLT=1: idle in hlt (RIP is the instruction after it)
  bool operator==(const VcpuRegisters&) const = default;

  bool in_kernel() const { return cpl == 0; }
};

// Every vCPU block of `text`, in order. An Error names what is missing when a block lacks RIP
// or CPL, or when there is no block at all (a monitor error message instead of registers).
Result<std::vector<VcpuRegisters>> parse_info_registers(std::string_view text);

}  // namespace vperf::guest
