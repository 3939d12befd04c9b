#include "perf/sample_rate.h"

#include "core/files.h"
#include "core/strings.h"

namespace vperf::perf {

Result<uint64_t> max_sample_rate(const std::filesystem::path& path) {
  Result<std::string> text = read_first_line(path);
  if (!text) return text.error();
  std::optional<uint64_t> rate = parse_u64(trim(*text));
  if (!rate || *rate == 0) return Error{path.string() + " holds '" + *text + "', not a sample rate"};
  return *rate;
}

Result<SampleRateChoice> choose_sample_rate(std::string_view text, uint64_t limit) {
  if (text == "max") return SampleRateChoice{limit, "Using a maximum frequency rate of " + std::to_string(limit) + " Hz", ""};
  std::optional<uint64_t> hz = parse_u64(text);
  if (!hz || *hz == 0)
    return Error{"-F " + std::string(text) + " must be a whole number of samples per second (1 or more) or max", 0,
                 "e.g. -F 999, or -F max for the kernel's limit"};
  if (*hz <= limit) return SampleRateChoice{*hz, "", ""};
  return SampleRateChoice{limit, "",
                          "Maximum frequency rate (" + std::to_string(limit) + " Hz) exceeded, throttling from " +
                              std::to_string(*hz) + " Hz to " + std::to_string(limit) +
                              " Hz (hint: the limit can be raised via " + kMaxSampleRatePath + ")"};
}

}  // namespace vperf::perf
