#include "host/arm_cpu.h"

#include <algorithm>
#include <array>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::host {

namespace {

struct Implementer {
  unsigned code;
  std::string_view name;
};

// MIDR_EL1.Implementer codes (Arm ARM D17.2.100, and the kernel's arch/arm64/include/asm/cputype.h).
constexpr std::array kImplementers{
    Implementer{0x41, "Arm"},      Implementer{0x42, "Broadcom"}, Implementer{0x43, "Cavium"},
    Implementer{0x46, "Fujitsu"},  Implementer{0x48, "HiSilicon"}, Implementer{0x4e, "NVIDIA"},
    Implementer{0x50, "APM"},      Implementer{0x51, "Qualcomm"}, Implementer{0x61, "Apple"},
    Implementer{0x6d, "Microsoft"}, Implementer{0xc0, "Ampere"},
};

// The cores people profile on: the Neoverse line the clouds run, the Cortex cores of boards and
// phones, and the server cores of other implementers. Part numbers as the kernel's cputype.h.
constexpr std::array kCores{
    ArmCoreModel{0x41, 0xd0c, "Neoverse N1", "AWS Graviton2, Ampere Altra (Azure Dpsv5/Epsv5, GCP T2A, OCI A1)"},
    ArmCoreModel{0x41, 0xd40, "Neoverse V1", "AWS Graviton3/3E"},
    ArmCoreModel{0x41, 0xd49, "Neoverse N2", "Azure Cobalt 100, Alibaba Yitian 710"},
    ArmCoreModel{0x41, 0xd4f, "Neoverse V2", "AWS Graviton4, NVIDIA Grace, Google Axion"},
    ArmCoreModel{0x41, 0xd4a, "Neoverse E1", ""},
    ArmCoreModel{0x41, 0xd8e, "Neoverse N3", ""},
    ArmCoreModel{0x41, 0xd84, "Neoverse V3", ""},
    ArmCoreModel{0x41, 0xd03, "Cortex-A53", "Raspberry Pi 3"},
    ArmCoreModel{0x41, 0xd04, "Cortex-A35", ""},
    ArmCoreModel{0x41, 0xd05, "Cortex-A55", ""},
    ArmCoreModel{0x41, 0xd07, "Cortex-A57", "AMD Opteron A1100, NVIDIA Jetson TX1"},
    ArmCoreModel{0x41, 0xd08, "Cortex-A72", "AWS Graviton (a1), Raspberry Pi 4"},
    ArmCoreModel{0x41, 0xd09, "Cortex-A73", ""},
    ArmCoreModel{0x41, 0xd0a, "Cortex-A75", ""},
    ArmCoreModel{0x41, 0xd0b, "Cortex-A76", "Raspberry Pi 5"},
    ArmCoreModel{0x41, 0xd0d, "Cortex-A77", ""},
    ArmCoreModel{0x41, 0xd0e, "Cortex-A76AE", ""},
    ArmCoreModel{0x41, 0xd41, "Cortex-A78", ""},
    ArmCoreModel{0x41, 0xd42, "Cortex-A78AE", ""},
    ArmCoreModel{0x41, 0xd44, "Cortex-X1", ""},
    ArmCoreModel{0x41, 0xd46, "Cortex-A510", ""},
    ArmCoreModel{0x41, 0xd47, "Cortex-A710", ""},
    ArmCoreModel{0x41, 0xd48, "Cortex-X2", ""},
    ArmCoreModel{0x41, 0xd4b, "Cortex-A78C", ""},
    ArmCoreModel{0x41, 0xd4d, "Cortex-A715", ""},
    ArmCoreModel{0x41, 0xd4e, "Cortex-X3", ""},
    ArmCoreModel{0x41, 0xd80, "Cortex-A520", ""},
    ArmCoreModel{0x41, 0xd81, "Cortex-A720", ""},
    ArmCoreModel{0x41, 0xd82, "Cortex-X4", ""},
    ArmCoreModel{0x42, 0x516, "ThunderX2 (Vulcan)", ""},
    ArmCoreModel{0x43, 0x0a1, "ThunderX", ""},
    ArmCoreModel{0x43, 0x0af, "ThunderX2", ""},
    ArmCoreModel{0x46, 0x001, "A64FX", "Fugaku, HPE Apollo 80"},
    ArmCoreModel{0x48, 0xd01, "TSV110", "HiSilicon Kunpeng 920"},
    ArmCoreModel{0x4e, 0x004, "Carmel", "NVIDIA Xavier"},
    ArmCoreModel{0x50, 0x000, "X-Gene", ""},
    ArmCoreModel{0xc0, 0xac3, "AmpereOne", "Ampere AmpereOne (OCI A2, GCP C3A, Azure Dpldsv6)"},
    ArmCoreModel{0x00, 0x051, "QEMU 'max'", "QEMU TCG's emulated CPU (-cpu max)"},
};

constexpr unsigned kQemuImplementer = 0x00;  // "reserved for software use"
constexpr unsigned kQemuMaxPart = 0x051;     // 'Q'

std::string first_string(std::string_view text) {
  // Device-tree properties are NUL-separated string lists; sysfs files end with a newline.
  std::string_view s = text.substr(0, text.find('\0'));
  return std::string(trim(s));
}

std::string read_fact(const std::filesystem::path& path) {
  auto text = read_file(path, 4096);
  return text ? first_string(*text) : std::string();
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<ArmCoreGroup> group_by_midr(const std::vector<std::pair<unsigned, Midr>>& midrs) {
  std::vector<ArmCoreGroup> groups;
  for (const auto& cpu_midr : midrs) {  // not a structured binding: clang 14 (the fuzz build) cannot capture one
    const uint32_t value = cpu_midr.second.value;
    auto it = std::find_if(groups.begin(), groups.end(), [value](const ArmCoreGroup& g) { return g.midr.value == value; });
    if (it == groups.end()) {
      groups.push_back({cpu_midr.second, {cpu_midr.first}});
    } else {
      it->cpus.push_back(cpu_midr.first);
    }
  }
  return groups;
}

}  // namespace

const ArmCoreModel* find_arm_core(Midr midr) {
  for (const auto& core : kCores)
    if (core.implementer == midr.implementer() && core.part == midr.part()) return &core;
  return nullptr;
}

std::string_view arm_implementer_name(unsigned implementer) {
  for (const auto& i : kImplementers)
    if (i.code == implementer) return i.name;
  return "";
}

bool is_qemu_max_cpu(Midr midr) { return midr.implementer() == kQemuImplementer && midr.part() == kQemuMaxPart; }

std::string describe_midr(Midr midr) {
  const std::string stepping = "r" + std::to_string(midr.variant()) + "p" + std::to_string(midr.revision());
  if (const ArmCoreModel* core = find_arm_core(midr)) return std::string(core->name) + " " + stepping;
  std::string_view implementer = arm_implementer_name(midr.implementer());
  return "unknown core (implementer " + hex(midr.implementer()) +
         (implementer.empty() ? "" : " " + std::string(implementer)) + ", part " + hex(midr.part()) + ") " + stepping;
}

std::string_view arm_platform_kind_name(ArmPlatformKind kind) {
  switch (kind) {
    case ArmPlatformKind::BareMetal: return "bare metal";
    case ArmPlatformKind::VirtualMachine: return "virtual machine";
    case ArmPlatformKind::Unknown: return "unknown";
  }
  return "unknown";
}

std::string ArmCpuReport::summary() const {
  std::vector<std::string> parts;
  for (const auto& g : cores) parts.push_back(describe_midr(g.midr) + " x " + std::to_string(g.cpus.size()));
  return parts.empty() ? "no MIDR readable" : join(parts, " + ");
}

void classify_arm_platform(ArmPlatform& p, std::optional<Midr> first_midr) {
  auto decide = [&p](ArmPlatformKind kind, std::string hypervisor, std::string machine, std::string evidence) {
    p.kind = kind;
    p.hypervisor = std::move(hypervisor);
    p.machine = std::move(machine);
    p.evidence = std::move(evidence);
  };
  const std::string dmi = "DMI '" + p.dmi_vendor + "' / '" + p.dmi_product + "'";
  if (!p.sys_hypervisor_type.empty())
    return decide(ArmPlatformKind::VirtualMachine, p.sys_hypervisor_type == "xen" ? "Xen" : p.sys_hypervisor_type,
                  "", "/sys/hypervisor/type = " + p.sys_hypervisor_type);
  if (p.dt_hypervisor.find("xen") != std::string::npos)
    return decide(ArmPlatformKind::VirtualMachine, "Xen", "", "device tree /hypervisor = " + p.dt_hypervisor);
  if (p.dmi_vendor == "Amazon EC2") {
    // EC2 names the instance type in the product; .metal types run on the Nitro cards alone.
    if (ends_with(p.dmi_product, ".metal") || ends_with(p.dmi_product, ".metal-24xl") ||
        ends_with(p.dmi_product, ".metal-48xl"))
      return decide(ArmPlatformKind::BareMetal, "", "AWS EC2 " + p.dmi_product, dmi);
    return decide(ArmPlatformKind::VirtualMachine, "AWS Nitro (KVM)", "AWS EC2 " + p.dmi_product, dmi);
  }
  if (p.dmi_vendor == "QEMU") {
    // QEMU's arm virt machine says "KVM Virtual Machine" under KVM and "QEMU Virtual Machine" under TCG.
    const bool kvm = p.dmi_product.find("KVM") != std::string::npos;
    return decide(ArmPlatformKind::VirtualMachine, kvm ? "KVM" : "QEMU TCG", "QEMU " + p.dmi_product, dmi);
  }
  if (p.dmi_vendor == "Microsoft Corporation" && p.dmi_product == "Virtual Machine")
    return decide(ArmPlatformKind::VirtualMachine, "Hyper-V", "Hyper-V virtual machine (Azure)", dmi);
  if (p.dmi_vendor == "Google")
    return decide(ArmPlatformKind::VirtualMachine, "KVM", "Google Compute Engine", dmi);
  if (p.dmi_vendor == "Alibaba Cloud")
    return decide(ArmPlatformKind::VirtualMachine, "KVM", "Alibaba Cloud ECS", dmi);
  if (p.dt_compatible == "linux,dummy-virt") {
    // QEMU's -M virt without firmware tables: TCG when the CPU is QEMU's own 'max', else KVM
    // passing the host's MIDR through.
    const bool tcg = first_midr && is_qemu_max_cpu(*first_midr);
    return decide(ArmPlatformKind::VirtualMachine, tcg ? "QEMU TCG" : "KVM (or QEMU TCG with a named -cpu)",
                  "QEMU virt machine", "device tree compatible = linux,dummy-virt" +
                                           std::string(tcg ? ", MIDR of QEMU's -cpu max" : ""));
  }
  if (first_midr && is_qemu_max_cpu(*first_midr))
    return decide(ArmPlatformKind::VirtualMachine, "QEMU TCG", "", "MIDR of QEMU's -cpu max");
  if (!p.dmi_vendor.empty())
    return decide(ArmPlatformKind::Unknown, "", p.dmi_vendor + " " + p.dmi_product,
                  dmi + ": no hypervisor vendor vperf knows (a VMM that hides itself looks the same)");
  if (!p.dt_compatible.empty())
    return decide(ArmPlatformKind::Unknown, "", p.dt_compatible,
                  "device tree compatible = " + p.dt_compatible + ": no hypervisor node");
  decide(ArmPlatformKind::Unknown, "", "", "no DMI, device tree or /sys/hypervisor facts");
}

ArmCpuReport read_arm_cpu(const HostPaths& paths) {
  ArmCpuReport report;
  MidrReading midrs = read_midrs(paths.sys, paths.proc);
  if (midrs.cpus.empty())
    report.midr_error = midrs.source;
  else
    report.midr_source = midrs.source;
  report.cores = group_by_midr(midrs.cpus);

  ArmPlatform& p = report.platform;
  const std::filesystem::path dmi = paths.sys / "class/dmi/id";
  p.dmi_vendor = read_fact(dmi / "sys_vendor");
  p.dmi_product = read_fact(dmi / "product_name");
  const std::filesystem::path dt = paths.sys / "firmware/devicetree/base";
  p.dt_compatible = read_fact(dt / "compatible");
  p.dt_hypervisor = read_fact(dt / "hypervisor/compatible");
  p.sys_hypervisor_type = read_fact(paths.sys / "hypervisor/type");
  classify_arm_platform(p, midrs.cpus.empty() ? std::nullopt : std::optional<Midr>(midrs.cpus.front().second));
  return report;
}

}  // namespace vperf::host
