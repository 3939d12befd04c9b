#pragma once
// The boundary between a sample's copied user registers and stack (PERF_SAMPLE_REGS_USER +
// PERF_SAMPLE_STACK_USER, recorded by --call-graph dwarf) and the call chain they imply.
// report::SampleReplay asks an unwinder for the user frames of every such sample; the libdwfl
// implementation (KDAB perfparser's approach) lives beside this interface.
#include <cstdint>
#include <linux/perf_event.h>

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
};

}  // namespace vperf::unwind
