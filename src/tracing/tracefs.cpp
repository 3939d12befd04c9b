#include "tracing/tracefs.h"

#include <sys/stat.h>

#include <cerrno>

// libtracefs 1.6 would name these files, but its header does not compile as C++ under clang
// (an inline function passes 0 for an enum; gcc accepts it only with -fpermissive), and the
// fuzz build is clang's. The layout it would return is tracefs's own, written out here; ftrace
// instances and dynamic events will reach libtracefs through a C translation unit.

namespace vperf::tracing {

Result<Tracefs> Tracefs::open(const std::filesystem::path& root) {
  struct stat st{};
  if (::stat(root.c_str(), &st) != 0) return Error::from_errno("tracefs at " + root.string() + " is not a directory");
  if (!S_ISDIR(st.st_mode)) return Error::from_errno("tracefs at " + root.string() + " is not a directory", ENOTDIR);
  return Tracefs(root);
}

std::filesystem::path Tracefs::event_file(std::string_view system, std::string_view event, std::string_view file) const {
  return root_ / "events" / std::string(system) / std::string(event) / std::string(file);
}

bool Tracefs::event_file_exists(std::string_view system, std::string_view event, std::string_view file) const {
  struct stat st{};
  return ::stat(event_file(system, event, file).c_str(), &st) == 0;
}

std::filesystem::path Tracefs::file(std::string_view name) const { return root_ / std::string(name); }

}  // namespace vperf::tracing
