#include "pmc/perfmon_bundle.h"

#include <system_error>

#include "core/error.h"
#include "core/strings.h"

// Both set by pmc/CMakeLists.txt.
#ifndef VPERF_PERFMON_BUNDLE_FROM_BINDIR
#error "VPERF_PERFMON_BUNDLE_FROM_BINDIR (the installed bundle, relative to the installed vperf) is not set"
#endif
#ifndef VPERF_PERFMON_BUNDLE_SOURCE_DIR
#error "VPERF_PERFMON_BUNDLE_SOURCE_DIR (pmc/data/perfmon of the source tree) is not set"
#endif

namespace vperf::events {

std::vector<std::filesystem::path> bundled_perfmon_candidates() {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / VPERF_PERFMON_BUNDLE_FROM_BINDIR).lexically_normal());
  out.emplace_back(VPERF_PERFMON_BUNDLE_SOURCE_DIR);
  return out;
}

std::filesystem::path bundled_perfmon_dir() {
  std::vector<std::filesystem::path> candidates = bundled_perfmon_candidates();
  std::vector<std::string> looked;
  for (const std::filesystem::path& dir : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / "mapfile.csv", ec)) return dir;
    looked.push_back(dir.string());
  }
  throw UserError("vperf's bundled Intel perfmon tables are missing (looked in " + join(looked, ", ") + ")",
                  "reinstall vperf with its share/vperf/perfmon directory, or pass --perfmon DIR with a checkout of "
                  "github.com/intel/perfmon");
}

}  // namespace vperf::events
