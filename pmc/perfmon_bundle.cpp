#include "pmc/perfmon_bundle.h"

#include <optional>
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

namespace {

// The bundle directories share a parent: <datadir>/vperf installed, pmc/data in the source tree.
std::vector<std::filesystem::path> candidates_for(std::string_view subdir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec)
    out.push_back((exe.parent_path() / VPERF_PERFMON_BUNDLE_FROM_BINDIR).lexically_normal().parent_path() / subdir);
  out.push_back(std::filesystem::path(VPERF_PERFMON_BUNDLE_SOURCE_DIR).parent_path() / subdir);
  return out;
}

std::optional<std::filesystem::path> first_with_mapfile(const std::vector<std::filesystem::path>& candidates,
                                                        std::vector<std::string>& looked) {
  for (const std::filesystem::path& dir : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / "mapfile.csv", ec)) return dir;
    looked.push_back(dir.string());
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::filesystem::path> bundled_perfmon_candidates() { return candidates_for("perfmon"); }

std::filesystem::path bundled_perfmon_dir() {
  std::vector<std::string> looked;
  if (auto dir = first_with_mapfile(bundled_perfmon_candidates(), looked)) return *dir;
  throw UserError("vperf's bundled Intel perfmon tables are missing (looked in " + join(looked, ", ") + ")",
                  "reinstall vperf with its share/vperf/perfmon directory, or pass --perfmon DIR with a checkout of "
                  "github.com/intel/perfmon");
}

std::vector<std::filesystem::path> bundled_perf_arm64_candidates() { return candidates_for("perf-arm64"); }

std::filesystem::path bundled_perf_arm64_dir() {
  std::vector<std::string> looked;
  if (auto dir = first_with_mapfile(bundled_perf_arm64_candidates(), looked)) return *dir;
  throw UserError("vperf's bundled copy of perf's arm64 event tables is missing (looked in " + join(looked, ", ") + ")",
                  "reinstall vperf with its share/vperf/perf-arm64 directory");
}

}  // namespace vperf::events
