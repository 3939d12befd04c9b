#pragma once
// A sample's call chain as FrameTable ids, leaf first, for the histogram.
//
// Recorded callchains (frame pointers) are resolved here rather than by SampleReplay: each
// (address space, cpumode, address) is resolved once and remembered until a task or map record
// changes an address space (forget()), so a profile of a hot loop resolves its few hundred
// addresses once instead of ~10 per sample. The PERF_CONTEXT_* markers switch modes exactly as
// SampleReplay::resolve_chain does. Samples whose user frames come from an unwinder (DWARF)
// take SampleReplay's resolved chain (from_resolved).
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "report/report_callchain.h"
#include "report/sample_replay.h"
#include "symbols/machines.h"

namespace vperf::report {

class ChainFrames {
 public:
  ChainFrames(const symbols::Machines& machines, FrameTable& frames) : machines_(machines), frames_(frames) {}

  // From the sample's recorded callchain (its ip alone without one).
  std::span<const uint32_t> from_callchain(const ResolvedSample& sample);
  // From SampleReplay's resolved chain (ReplayOptions::resolve_chain).
  std::span<const uint32_t> from_resolved(const ResolvedSample& sample);
  // An address space changed (MMAP, COMM, FORK, EXIT): resolve everything again.
  void forget() { cache_.clear(); }

 private:
  struct Key {
    const void* space;  // the thread's MapSet, or nullptr for the kernel
    uint64_t ip;
    uint8_t mode;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = reinterpret_cast<uintptr_t>(k.space) * 0x9e3779b97f4a7c15ULL;
      h ^= (k.ip + k.mode) * 0xc2b2ae3d27d4eb4fULL;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  uint32_t frame_id(const ResolvedSample& sample, uint8_t mode, uint64_t ip);

  const symbols::Machines& machines_;
  FrameTable& frames_;
  std::unordered_map<Key, uint32_t, KeyHash> cache_;
  std::vector<uint32_t> ids_;
};

}  // namespace vperf::report
