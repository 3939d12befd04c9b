#include "report/report_chain_frames.h"

#include <linux/perf_event.h>

namespace vperf::report {

uint32_t ChainFrames::frame_id(const ResolvedSample& sample, uint8_t mode, uint64_t ip) {
  bool kernel = mode == PERF_RECORD_MISC_KERNEL;
  bool user = mode == PERF_RECORD_MISC_USER;
  // Only host addresses whose space is known are remembered (guest machines go by pid).
  const void* space = kernel ? nullptr : (user && sample.thread ? sample.thread->maps.get() : nullptr);
  bool cacheable = kernel || (user && space != nullptr);
  if (cacheable)
    if (auto it = cache_.find(Key{space, ip, mode}); it != cache_.end()) return it->second;
  ChainFrame frame{ip, mode, machines_.resolve(sample.pid, sample.tid, mode, ip), {}};
  uint32_t id = frames_.intern(frame);
  if (cacheable) cache_.emplace(Key{space, ip, mode}, id);
  return id;
}

std::span<const uint32_t> ChainFrames::from_callchain(const ResolvedSample& sample) {
  ids_.clear();
  const std::vector<uint64_t>& callchain = sample.sample.callchain;
  if (callchain.empty()) {
    ids_.push_back(frames_.intern(ChainFrame{sample.sample.ip, sample.cpumode, sample.at, {}}));
    return ids_;
  }
  uint8_t mode = sample.cpumode;
  for (uint64_t entry : callchain) {
    if (std::optional<uint8_t> switched = SampleReplay::context_mode(entry)) {
      mode = *switched;
      continue;
    }
    if (entry >= PERF_CONTEXT_MAX) continue;  // another marker
    ids_.push_back(frame_id(sample, mode, entry));
  }
  return ids_;
}

std::span<const uint32_t> ChainFrames::from_resolved(const ResolvedSample& sample) {
  ids_.clear();
  for (const ChainFrame& frame : sample.chain) ids_.push_back(frames_.intern(frame));
  return ids_;
}

}  // namespace vperf::report
