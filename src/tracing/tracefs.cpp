#include "tracing/tracefs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/files.h"
#include "tracing/trace_text.h"
#include "tracing/tracefs_events.h"

// libtracefs 1.6 would name these files, but its header does not compile as C++ under clang
// (an inline function passes 0 for an enum; gcc accepts it only with -fpermissive), and the
// fuzz build is clang's. The layout it would return is tracefs's own, written out here.

namespace vperf::tracing {

Result<Tracefs> Tracefs::open(const std::filesystem::path& root) {
  struct stat st{};
  if (::stat(root.c_str(), &st) != 0) return Error::from_errno("tracefs at " + root.string() + " is not a directory");
  if (!S_ISDIR(st.st_mode)) return Error::from_errno("tracefs at " + root.string() + " is not a directory", ENOTDIR);
  return Tracefs(root);
}

Result<Tracefs> Tracefs::open_mounted(const std::filesystem::path& proc_mounts) {
  constexpr const char* kMount = "mount -t tracefs nodev /sys/kernel/tracing";
  Result<std::filesystem::path> root = find_tracefs_root(proc_mounts);
  if (!root) return Error{root.error().describe(), 0, kMount};
  Result<Tracefs> tracefs = open(*root);
  if (!tracefs) return Error{tracefs.error().describe(), 0, kMount};
  return tracefs;
}

std::filesystem::path Tracefs::event_file(std::string_view system, std::string_view event, std::string_view file) const {
  return root_ / "events" / std::string(system) / std::string(event) / std::string(file);
}

bool Tracefs::event_file_exists(std::string_view system, std::string_view event, std::string_view file) const {
  struct stat st{};
  return ::stat(event_file(system, event, file).c_str(), &st) == 0;
}

std::filesystem::path Tracefs::file(std::string_view name) const { return root_ / std::string(name); }

Result<std::string> Tracefs::read(std::string_view name, size_t limit) const { return read_file(file(name), limit); }

Result<void> Tracefs::write(const std::filesystem::path& file, std::string_view value, WriteMode mode,
                            const std::filesystem::path& error_log) const {
  const std::string log_before = read_file(error_log).value_or("");
  Result<void> written = write_kernel_file(file, value, mode == WriteMode::Append);
  if (written) return {};
  Error error = written.error();
  if (Result<std::string> log = read_file(error_log))
    if (std::string entry = error_log_entry_of_write(log_before, *log, value); !entry.empty())
      error.message += " (the kernel's error_log says: " + entry + ")";
  return error;
}

Result<void> require_tracefs_access(const Tracefs& tracefs, std::string_view needed_for) {
  if (::access(tracefs.root().c_str(), R_OK | W_OK | X_OK) == 0 || (errno != EACCES && errno != EPERM)) return {};
  return Error{"no permission to use tracefs at " + tracefs.root().string() + " (" + std::string(needed_for) + " writes to it)", 0,
               "run as root: tracefs needs CAP_SYS_ADMIN"};
}

bool tracefs_file_exists(const Tracefs& tracefs, std::string_view name) {
  struct stat st{};
  return ::stat(tracefs.file(name).c_str(), &st) == 0;
}

}  // namespace vperf::tracing
