#pragma once
// Small file-system helpers shared by the sysfs, procfs and tracefs readers.
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace vperf {

// Whole file as a string. Works on procfs/sysfs files, whose stat size is 0. Refuses files
// longer than max_bytes (EFBIG): every file vperf reads whole is text that size bounds
// (perfmon JSON is under 1 MiB), and /dev/zero must not exhaust memory.
inline constexpr size_t kMaxWholeFileBytes = 64 << 20;
Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes = kMaxWholeFileBytes);
// First line of a file without its newline ("2" from /proc/sys/kernel/perf_event_paranoid).
Result<std::string> read_first_line(const std::filesystem::path& path);
// Names of the entries of a directory, sorted; an error if it cannot be opened.
Result<std::vector<std::string>> list_directory(const std::filesystem::path& dir);

}  // namespace vperf
