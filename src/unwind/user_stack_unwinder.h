#pragma once
// The boundary between a sample's copied user registers and stack (PERF_SAMPLE_REGS_USER +
// PERF_SAMPLE_STACK_USER, recorded by --call-graph dwarf) and the call chain they imply.
// report::SampleReplay asks an unwinder for the user frames of every such sample; the libdwfl
// implementation (KDAB perfparser's approach) lives beside this interface.
#include <cstdint>
#include <linux/perf_event.h>

#include <optional>
#include <vector>

#include "data/perf_record.h"
#include "symbols/machine.h"

namespace vperf::unwind {

class UserStackUnwinder {
 public:
  virtual ~UserStackUnwinder() = default;
  // Appends the user frames' instruction addresses to `ips`, leaf first, starting with the
  // instruction pointer in the copied registers; each caller's entry is its return address
  // minus one (inside the call instruction), as perf's unwinders give them. `machine` and
  // `thread` give the maps the addresses fall into.
  virtual void unwind(const symbols::Machine& machine, const symbols::Thread& thread, const data::Sample& sample,
                      const perf_event_attr& attr, std::vector<uint64_t>& ips) = 0;
  // perf's leaf frame caller of an arm64 frame-pointer call chain (get_leaf_frame_caller_aarch64):
  // a leaf function saves no frame record, so the kernel's walk skips its caller; perf records
  // the link register with each such sample, and when the leaf's CFI at `leaf_ip` says the return
  // address is still in it, that caller (as return address minus one) goes into the chain after
  // the leaf. nullopt for every other recording, and where the CFI does not say so.
  virtual std::optional<uint64_t> leaf_caller(const symbols::Machine& machine, const symbols::Thread& thread,
                                              const data::Sample& sample, const perf_event_attr& attr, uint64_t leaf_ip) = 0;
};

}  // namespace vperf::unwind
