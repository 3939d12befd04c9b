#pragma once
// One tracefs (the kernel's tracing directory, or a tree laid out like one in tests): where its
// files are, whether they exist, and the one reader and the one writer of them. Tests give a
// directory tree laid out like tracefs (the seam is the root: real files, real write() errors,
// /dev/full for a refusal). What is written goes through the owner of what it changes, each
// checking its text first (kernel_control_text.h) and then calling Tracefs::write:
// ftrace_buffer.h (instances and the top-level buffer), dynamic_events.h (kprobes and uprobes),
// ftrace_setup.h (a run's settings). libtracefs is not used: its 1.6 header is not C++, and
// each operation vperf needs is one read or one write().
//
// Where tracefs is mounted stays vperf's own finding (tracing/tracefs_events.h,
// find_tracefs_root): libtracefs's tracefs_tracing_dir() mounts tracefs when it is not mounted
// (vperf must not change the machine's mounts), reads only /proc/mounts (tests give another),
// does not unescape "\040" in mount paths, and takes <debugfs>/tracing without checking that
// it holds events/.
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/files.h"

namespace vperf::tracing {

class Tracefs {
 public:
  // The tracefs at `root`; an error when `root` is not a directory.
  static Result<Tracefs> open(const std::filesystem::path& root);
  // The machine's tracefs, wherever /proc/mounts says it is; the error's hint says how to mount it.
  static Result<Tracefs> open_mounted(const std::filesystem::path& proc_mounts = "/proc/mounts");

  const std::filesystem::path& root() const { return root_; }
  // <root>/events/SYSTEM/EVENT/FILE ("format", "id", "filter").
  std::filesystem::path event_file(std::string_view system, std::string_view event, std::string_view file) const;
  bool event_file_exists(std::string_view system, std::string_view event, std::string_view file) const;
  // <root>/NAME ("printk_formats", "saved_cmdlines", "events/header_page").
  std::filesystem::path file(std::string_view name) const;

  // The text of <root>/NAME, at most `limit` bytes.
  Result<std::string> read(std::string_view name, size_t limit = kMaxWholeFileBytes) const;
  // Writes `value` to `file` (a file of this tracefs: the top level's or an instance's) in one
  // write(), appended or replacing what it held: the kernel parses each write on its own. A
  // refusal's error keeps the errno and ends with the entry this write added to `error_log`
  // (the buffer's own), where the kernel explains a bad filter, trigger or probe; never an
  // older entry (the top level's error_log holds every tool's refusals, and is not cleared).
  // The caller has checked `value` for `file` (kernel_control_text.h).
  enum class WriteMode { Replace, Append };
  Result<void> write(const std::filesystem::path& file, std::string_view value, WriteMode mode,
                     const std::filesystem::path& error_log) const;

 private:
  explicit Tracefs(std::filesystem::path root) : root_(std::move(root)) {}

  std::filesystem::path root_;
};

// An error when this process may not use tracefs (root's, mode 0700, on most kernels), naming
// what needed it ("vperf ftrace", "inline probes") and the fix.
Result<void> require_tracefs_access(const Tracefs& tracefs, std::string_view needed_for);

// Whether <root>/NAME exists; false where it cannot be seen (a tracefs only root may enter),
// never an exception.
bool tracefs_file_exists(const Tracefs& tracefs, std::string_view name);

}  // namespace vperf::tracing
