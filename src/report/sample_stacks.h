#pragma once
// perf.data -> StackProfile: replays the task and map records into perf's machine model
// (src/symbols) and turns every sample into a stack of symbol names, root first, with the
// process (comm) at the bottom: the same stacks `perf script | stackcollapse-perf.pl` folds.
//
// A sample's frames: its callchain when it has one (leaf first; PERF_CONTEXT_* markers switch
// between kernel, user and guest addresses, as perf does), else its ip alone. Frames whose
// address no map covers are "[unknown]", as perf script prints them. Each sample counts its
// period, as stackcollapse-perf.pl adds up the periods perf script prints (1 without one).
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "report/sample_replay.h"
#include "report/stack_profile.h"
#include "symbols/machines.h"

namespace vperf::report {

struct SampleStacks {
  StackProfile profile;
  uint64_t samples = 0;
  std::vector<std::string> warnings;  // from the reader (truncation, unknown ids, ...)
};

// `unwinder`: recovers user frames of --call-graph dwarf samples (nullptr: their user stack
// copies are ignored); `inline_frames`: those frames expanded into their inline chains.
Result<SampleStacks> sample_stacks(data::PerfDataReader& reader, symbols::Machines& machines,
                                   unwind::UserStackUnwinder* unwinder = nullptr, bool inline_frames = true);

}  // namespace vperf::report
