#pragma once
// What an arm64 machine says of itself before any counter is opened: each CPU's MIDR_EL1
// (implementer, variant, part, revision) named from a table of the cores clouds and boards run,
// and the platform read from the firmware tables a VMM or a board provides (DMI, the device
// tree, /sys/hypervisor). arm64 has no CPUID hypervisor bit and user space cannot read
// ID_AA64DFR0_EL1.PMUVer, so whether this is a VM, and whose, comes from those tables, and
// whether it has a PMU from the kernel's sysfs and live probes (capability_check.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arm_midr.h"
#include "host/host_paths.h"

namespace vperf::host {


struct ArmCoreModel {
  unsigned implementer;
  unsigned part;
  std::string_view name;   // "Neoverse N1"
  std::string_view where;  // the machines that run it, "" when none worth naming
};

// The core a MIDR names, or nullptr when the table does not know it (variant and revision
// are ignored: they are steppings of one design).
const ArmCoreModel* find_arm_core(Midr midr);
// "Arm", "Ampere", "Fujitsu" ...; empty when unknown.
std::string_view arm_implementer_name(unsigned implementer);
// "Neoverse N1 r3p1" or "unknown core (implementer 0x41 Arm, part 0xd99) r0p0".
std::string describe_midr(Midr midr);
// QEMU's own `-cpu max` under TCG: implementer 0 ("reserved for software use"), part 'Q'.
bool is_qemu_max_cpu(Midr midr);

struct ArmCoreGroup {
  Midr midr;
  std::vector<unsigned> cpus;  // the CPUs that report this MIDR, ascending
};

enum class ArmPlatformKind { BareMetal, VirtualMachine, Unknown };
std::string_view arm_platform_kind_name(ArmPlatformKind kind);

struct ArmPlatform {
  ArmPlatformKind kind = ArmPlatformKind::Unknown;
  std::string hypervisor;  // "KVM", "QEMU TCG", "Xen", "Hyper-V", "AWS Nitro" ...; empty when none is known
  std::string machine;     // "AWS EC2 c7g.large", "QEMU virt machine" ...
  std::string evidence;    // the file and value that decided, for the report
  // The raw facts, empty when the file is absent.
  std::string dmi_vendor, dmi_product;
  std::string dt_compatible;  // the root node's first compatible string
  std::string dt_hypervisor;  // /hypervisor's compatible
  std::string sys_hypervisor_type;
};

struct ArmCpuReport {
  std::string midr_source;  // where the MIDRs came from
  std::vector<ArmCoreGroup> cores;  // one per distinct MIDR, in order of their first CPU
  std::string midr_error;   // why none could be read, when cores is empty
  ArmPlatform platform;

  bool is_guest() const { return platform.kind == ArmPlatformKind::VirtualMachine; }
  // "Neoverse N1 r3p1 x 64" or "Cortex-A55 r2p0 x 4 + Cortex-A76 r4p0 x 4"
  std::string summary() const;
};

// Reads MIDRs from sysfs (cpuN/regs/identification/midr_el1), else from /proc/cpuinfo, and the
// platform; every file is optional, and a missing one is said in the report, not an error.
ArmCpuReport read_arm_cpu(const HostPaths& paths);

// The decision table: who runs this machine, from the raw facts in `platform` and the MIDR.
void classify_arm_platform(ArmPlatform& platform, std::optional<Midr> first_midr);

}  // namespace vperf::host
