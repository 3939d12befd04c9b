#include "msr/turbo_ratio_limit.h"

#include <algorithm>
#include <cmath>

namespace vperf::msr {

namespace {
constexpr int kBytes = 8;
unsigned byte_at(uint64_t value, int i) { return static_cast<unsigned>((value >> (8 * i)) & 0xFF); }
}  // namespace

TurboLimitLayout infer_turbo_limit_layout(uint64_t /*limit*/, std::optional<uint64_t> limit1) {
  if (!limit1) return TurboLimitLayout::ActiveCores;
  unsigned previous = 0;
  int nonzero = 0;
  for (int i = 0; i < kBytes; ++i) {
    const unsigned b = byte_at(*limit1, i);
    if (b == 0) continue;
    if (b <= previous) return TurboLimitLayout::ActiveCores;
    previous = b;
    ++nonzero;
  }
  return nonzero >= 2 ? TurboLimitLayout::CoreGroups : TurboLimitLayout::ActiveCores;
}

std::vector<TurboStep> decode_turbo_ratio_limits(uint64_t limit, std::optional<uint64_t> limit1,
                                                 TurboLimitLayout layout, double bus_mhz) {
  std::vector<TurboStep> steps;
  auto add = [&](unsigned cores, unsigned ratio) {
    if (ratio != 0 && cores != 0) steps.push_back({cores, ratio, ratio * bus_mhz});
  };
  if (layout == TurboLimitLayout::CoreGroups && limit1) {
    for (int i = 0; i < kBytes; ++i) add(byte_at(*limit1, i), byte_at(limit, i));
  } else {
    for (int i = 0; i < kBytes; ++i) add(static_cast<unsigned>(i + 1), byte_at(limit, i));
    if (limit1)
      for (int i = 0; i < kBytes; ++i) add(static_cast<unsigned>(i + 1 + kBytes), byte_at(*limit1, i));
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const TurboStep& a, const TurboStep& b) { return a.active_cores < b.active_cores; });
  return steps;
}

std::string describe(const TurboStep& step) {
  return std::to_string(step.active_cores) + (step.active_cores == 1 ? " active core: " : " active cores: ") +
         std::to_string(step.ratio) + " -> " + std::to_string(std::llround(step.mhz)) + " MHz";
}

}  // namespace vperf::msr
