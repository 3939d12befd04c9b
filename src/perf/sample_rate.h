#pragma once
// -F as perf record takes it: a rate in Hz, or "max" for the kernel's limit
// (/proc/sys/kernel/perf_event_max_sample_rate, which the kernel lowers by itself when sampling
// interrupts take too long). A rate above the limit is lowered to it with perf's warning: the
// kernel would refuse the event (EINVAL) otherwise.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"

namespace vperf::perf {

inline constexpr const char* kMaxSampleRatePath = "/proc/sys/kernel/perf_event_max_sample_rate";

Result<uint64_t> max_sample_rate(const std::filesystem::path& path = kMaxSampleRatePath);

struct SampleRateChoice {
  uint64_t hz = 0;
  std::string info;     // what -F max chose, as perf's "info:" line says it
  std::string warning;  // the rate was lowered to the limit
};

// `text`: "max" or a whole number >= 1; `limit`: max_sample_rate(). An error for anything else.
Result<SampleRateChoice> choose_sample_rate(std::string_view text, uint64_t limit);

}  // namespace vperf::perf
