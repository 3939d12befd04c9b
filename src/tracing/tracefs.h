#pragma once
// One tracefs (the kernel's tracing directory, or a tree laid out like one in tests): where its
// files are, and whether they exist. What is written into them goes through the owner of what
// it changes, each checking its text first (kernel_control_text.h): ftrace_buffer.h (instances
// and the top-level buffer), dynamic_events.h (kprobes and uprobes), ftrace_setup.h (a run's
// settings). libtracefs is not used: its 1.6 header is not C++, and each operation vperf needs
// is one read or one write().
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
