#include "core/process.h"

#include <filesystem>
#include <string>

namespace vperf {

bool is_running_vperf(pid_t pid) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  return !ec && exe.filename() == "vperf";
}

}  // namespace vperf
