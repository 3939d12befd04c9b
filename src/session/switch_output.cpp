#include "session/switch_output.h"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <limits>

namespace vperf::session {

Result<SwitchOutput> parse_switch_output(std::string_view value) {
  SwitchOutput out;
  if (value.empty() || value == "signal") {
    out.trigger = SwitchOutput::Trigger::signal;
    return out;
  }
  auto refused = [&] { return Error{"--switch-output takes signal, a size (100K, 5M, 1G) or a time (30s, 5m, 1h, 1d), not '" + std::string(value) + "'"}; };
  uint64_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  const std::string_view unit = value.substr(static_cast<size_t>(end - value.data()));
  if (ec != std::errc() || number == 0 || unit.size() != 1)
    return refused();
  auto scaled = [&](uint64_t scale) -> Result<uint64_t> {
    if (number > std::numeric_limits<uint64_t>::max() / scale) return Error{"--switch-output " + std::string(value) + " is too large"};
    return number * scale;
  };
  // perf's tags, case and all: sizes upper case, times lower case ("5M" and "5m" differ).
  uint64_t size_unit = 0, time_unit = 0;
  switch (unit[0]) {
    case 'B': size_unit = 1; break;
    case 'K': size_unit = 1024; break;
    case 'M': size_unit = 1024 * 1024; break;
    case 'G': size_unit = uint64_t{1} << 30; break;
    case 's': time_unit = 1; break;
    case 'm': time_unit = 60; break;
    case 'h': time_unit = 3600; break;
    case 'd': time_unit = 86400; break;
    default: break;
  }
  if (size_unit) {
    VPERF_TRY(uint64_t bytes, scaled(size_unit));
    out.trigger = SwitchOutput::Trigger::size;
    out.bytes = bytes;
    return out;
  }
  if (time_unit) {
    VPERF_TRY(uint64_t seconds, scaled(time_unit));
    out.trigger = SwitchOutput::Trigger::time;
    out.every = std::chrono::seconds(seconds);
    return out;
  }
  return refused();
}

std::string switched_file_name(const std::string& output, std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  const auto hundredths = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000 / 10;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[96];
  std::snprintf(stamp, sizeof stamp, "%04d%02d%02d%02d%02d%02d%02d", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday,
                local.tm_hour, local.tm_min, local.tm_sec, static_cast<int>(hundredths));
  return output + "." + stamp;
}

}  // namespace vperf::session
