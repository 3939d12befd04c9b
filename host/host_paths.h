#pragma once
// Where the host probes look. Real paths by default; unit tests point every one of them into a
// fake tree under a temp directory, which is the seam in front of /proc, sysfs and tracefs.
#include <filesystem>

#include "events/sysfs_pmu.h"

namespace vperf::host {

struct HostPaths {
  std::filesystem::path proc = "/proc";
  std::filesystem::path sys = "/sys";  // cpu*/regs (MIDR), class/dmi/id, firmware/devicetree, hypervisor
  std::filesystem::path tracefs_default = "/sys/kernel/tracing";  // where tracefs belongs
  std::filesystem::path pmu_root = events::kSysfsPmuRoot;
  std::filesystem::path dev_cpu = "/dev/cpu";  // msr driver: <dev_cpu>/<N>/msr
  std::filesystem::path dev_kvm = "/dev/kvm";
};

}  // namespace vperf::host
