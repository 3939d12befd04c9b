#pragma once
// Small file-system helpers shared by the sysfs, procfs and tracefs readers.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf {

// Opens a file for reading only if it is a regular file (checked before the open and again on
// the open descriptor). Paths that input names (a perf.data's mappings, DWARF's source files,
// /tmp/perf-PID.map, --cpuid-dump, --perfmon) could name a FIFO, whose open or read blocks
// forever, or a device node, which root must never open because a file said so. An error
// (EINVAL) names the path and what it is instead.
Result<ScopedFd> open_regular_file(const std::filesystem::path& path);

// Whole file as a string, from a regular file only (open_regular_file). Works on procfs/sysfs files, whose stat size is 0. Refuses files
// longer than max_bytes (EFBIG): every file vperf reads whole is text that size bounds
// (perfmon JSON is under 1 MiB), and /dev/zero must not exhaust memory.
inline constexpr size_t kMaxWholeFileBytes = 64 << 20;
Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes = kMaxWholeFileBytes);
// Creates (or truncates) a regular file for writing, never through a symlink (O_NOFOLLOW) and
// never a FIFO or device: a perf.data written in place as it grows (crash-safe, so not via
// replace_file) in a shared directory such as /tmp must not land where a planted link points.
Result<ScopedFd> create_regular_file(const std::filesystem::path& path, mode_t mode);

// Moves an existing output file aside to PATH.old before a new one is created, as perf keeps
// the previous perf.data. Only a regular file or a symbolic link (the link itself) moves: a
// device, FIFO or directory at the path is an Error and stays where it is (renaming /dev/null
// as root would take it from the whole machine). Nothing at the path is not an error.
Result<void> move_aside_to_old(const std::filesystem::path& path);

// Writes `content` to `path` whole or not at all: into a new temporary file beside it (created
// with O_EXCL, so never through a symlink an attacker planted in a shared directory), renamed
// over `path` once complete. A symlink at `path` is replaced, not followed; a path that is a
// directory, FIFO or device is refused. On any failure `path` is as it was and the temporary
// file is gone. Returns the bytes written.
Result<size_t> replace_file(const std::filesystem::path& path, std::string_view content);

// Writes `value` to a kernel control file (tracefs, /proc/sys) in one write() call, truncating
// it or appending to it: the kernel parses each write on its own, so a value split over two
// writes would be two values. An empty value still opens (and so truncates) the file.
Result<void> write_kernel_file(const std::filesystem::path& path, std::string_view value, bool append = false);

// First line of a file without its newline ("2" from /proc/sys/kernel/perf_event_paranoid).
Result<std::string> read_first_line(const std::filesystem::path& path);
// Names of the entries of a directory, sorted; an error if it cannot be opened.
Result<std::vector<std::string>> list_directory(const std::filesystem::path& dir);

}  // namespace vperf
