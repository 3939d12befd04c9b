#pragma once
// The libdwfl (elfutils) UserStackUnwinder: recovers the user call chain of a --call-graph dwarf
// sample from its copied registers and stack, with the call frame information (.eh_frame, or
// .debug_frame from the file or its separate debuginfo) of every ELF file the thread maps.
// KDAB perfparser's approach, which is also perf's unwind-libdw.c:
//
//  - one Dwfl per process, holding a module per mapped ELF file (dwfl_report_elf at the file's
//    load bias, the [vdso] from this machine's own image), built when a sample of the process
//    first needs it and rebuilt only when the process's maps change;
//  - dwfl_attach_state with callbacks that present the sample being unwound as the process's
//    one stopped thread: its registers are the sample's (perf_regs.h maps them to DWARF
//    numbers), its memory is the stack copy, and outside it the file contents of the mapped
//    ELF files;
//  - dwfl_getthread_frames walks the frames.
//
// Frames, leaf first: the sample's user ip, then for each caller its return address minus one,
// as dwfl_frame_pc advises and perf prints them (perf script shows "spin_phase_hash+0x4" for a
// 5-byte call at +0): the address inside the call instruction, so a call that ends a function
// resolves to that function, not to the next one.
//
// Outside input: the stack bytes, registers and maps come from perf.data and may be anything.
// Memory reads are bounds-checked against the copied stack (addresses [sp, sp + dyn_size)) and
// the file image of the module containing the address (within a PT_LOAD's file bytes); nothing
// else is read, and a walk stops after `max_frames`, so garbage ends in a short chain.
//
// Not thread-safe: one unwinder per replay.
#include <cstddef>
#include <memory>

#include "unwind/perf_regs.h"
#include "unwind/user_stack_unwinder.h"

namespace vperf::unwind {

struct DwarfUnwinderOptions {
  // Frames per sample at most, the ip included (perf's default kernel.perf_event_max_stack).
  size_t max_frames = 127;
  // Processes whose Dwfl (open ELF files, parsed CFI) is kept; the least recently used one is
  // dropped beyond this, so a system-wide recording does not keep thousands of files open.
  size_t max_cached_processes = 64;
  // The machine the recording was made on: how its samples' registers are numbered.
  RegisterArch arch = RegisterArch::X86;
};

class DwarfUnwinder final : public UserStackUnwinder {
 public:
  explicit DwarfUnwinder(DwarfUnwinderOptions options = {});
  ~DwarfUnwinder() override;
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // Appends the ip, then what libdwfl can unwind; only the ip when the stack, the maps or the
  // CFI give out; nothing when the registers lack the ip.
  void unwind(const symbols::Machine& machine, const symbols::Thread& thread, const data::Sample& sample,
              const perf_event_attr& attr, std::vector<uint64_t>& ips) override;
  // Two frames unwound from the leaf's pc and the recorded link register, with no stack (perf
  // gives it none either): the second is the caller when the CFI finds it in the register.
  std::optional<uint64_t> leaf_caller(const symbols::Machine& machine, const symbols::Thread& thread, const data::Sample& sample,
                                      const perf_event_attr& attr, uint64_t leaf_ip) override;

  // How many Dwfls were built: once per process, again each time its maps changed.
  uint64_t dwfl_builds() const;

 private:
  class Cache;
  DwarfUnwinderOptions options_;
  std::unique_ptr<Cache> cache_;
};

std::unique_ptr<UserStackUnwinder> make_dwarf_unwinder(DwarfUnwinderOptions options = {});

}  // namespace vperf::unwind
