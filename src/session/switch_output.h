#pragma once
// record --switch-output: a long recording in a series of files, as perf record 6.1 writes
// them. The file being written is finished (its features, as at the end of a recording) and
// renamed to OUTPUT.TIMESTAMP whenever the trigger fires and when the recording ends; the next
// one begins with the maps and tasks synthesized again, so each file reads on its own.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace vperf::session {

struct SwitchOutput {
  enum class Trigger { none, signal, size, time };
  Trigger trigger = Trigger::none;
  uint64_t bytes = 0;             // size: a file's data reaching this many bytes
  std::chrono::seconds every{0};  // time: this long after the file began
  unsigned max_files = 0;         // --switch-max-files: only the newest N kept (0: all)
};

// perf's values: "signal" (SIGUSR2, the default), a size with a unit B/K/M/G ("100K") or a time
// with a unit s/m/h/d ("30s"; "5m" is minutes, "5M" megabytes). Anything else is an Error.
Result<SwitchOutput> parse_switch_output(std::string_view value);

// perf's file name for a file finished at `when`: OUTPUT.YYYYMMDDhhmmsscc (local time and
// hundredths of a second, "perf.data.2026113007042595").
std::string switched_file_name(const std::string& output, std::chrono::system_clock::time_point when);

}  // namespace vperf::session
