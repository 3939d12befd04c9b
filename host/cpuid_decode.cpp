#include "host/cpuid_decode.h"

#include <algorithm>
#include <array>
#include <bit>

namespace vperf::host {

namespace {

constexpr uint32_t kHypervisorBase = 0x40000000;
constexpr uint32_t kHypervisorScanEnd = 0x40010000;  // exclusive, as Linux's hypervisor_cpuid_base
constexpr uint32_t kHypervisorStep = 0x100;

struct HypervisorVendor {
  std::string_view signature;  // trailing NULs dropped
  std::string_view vendor;
};

// Signatures at 0x400000xx EBX-ECX-EDX. Several VMMs copy another's signature (VirtualBox's
// KVM paravirt provider says "KVMKVMKVM"), so this names the interface, not the product.
constexpr std::array kHypervisorVendors{
    HypervisorVendor{"KVMKVMKVM", "KVM"},
    HypervisorVendor{"Linux KVM Hv", "KVM (Hyper-V emulation)"},
    HypervisorVendor{"XenVMMXenVMM", "Xen"},
    HypervisorVendor{"Microsoft Hv", "Hyper-V"},
    HypervisorVendor{"VMwareVMware", "VMware"},
    HypervisorVendor{"TCGTCGTCGTCG", "QEMU TCG"},
    HypervisorVendor{"bhyve bhyve ", "bhyve"},
    HypervisorVendor{"QNXQVMBSQG", "QNX"},
    HypervisorVendor{"ACRNACRNACRN", "ACRN"},
    HypervisorVendor{" lrpepyh  vr", "Parallels"},
    HypervisorVendor{"VBoxVBoxVBox", "VirtualBox"},
    HypervisorVendor{"Jailhouse", "Jailhouse"},
    HypervisorVendor{"HAXMHAXMHAXM", "Intel HAXM"},
    HypervisorVendor{"OpenBSDVMM58", "OpenBSD vmm"},
    HypervisorVendor{"EVMMEVMMEVMM", "Intel KGT"},
    HypervisorVendor{"UnisysSpar64", "Unisys s-Par"},
    HypervisorVendor{"SRESRESRESRE", "Lockheed Martin LMHS"},
};

constexpr std::array<ArchitecturalEvent, 13> kArchitecturalEvents{{
    {0, "core-cycles", "UnHalted Core Cycles", 0x3c, 0x00},
    {1, "instructions", "Instructions Retired", 0xc0, 0x00},
    {2, "ref-cycles", "UnHalted Reference Cycles", 0x3c, 0x01},
    {3, "llc-references", "LLC Reference", 0x2e, 0x4f},
    {4, "llc-misses", "LLC Misses", 0x2e, 0x41},
    {5, "branch-instructions", "Branch Instructions Retired", 0xc4, 0x00},
    {6, "branch-misses", "Branch Mispredicts Retired", 0xc5, 0x00},
    {7, "topdown-slots", "Topdown Slots", 0xa4, 0x01},
    {8, "topdown-backend-bound", "Topdown Backend Bound", 0xa4, 0x02},
    {9, "topdown-bad-speculation", "Topdown Bad Speculation", 0x73, 0x00},
    {10, "topdown-frontend-bound", "Topdown Frontend Bound", 0x9c, 0x01},
    {11, "topdown-retiring", "Topdown Retiring", 0xc2, 0x02},
    {12, "lbr-inserts", "LBR Inserts", 0xe4, 0x01},
}};

// A register field as data: bits [low, high] of one register.
struct Field {
  int low;
  int high;
  uint32_t of(uint32_t reg) const {
    const int width = high - low + 1;
    const uint32_t mask = width >= 32 ? ~0u : ((1u << width) - 1);
    return (reg >> low) & mask;
  }
};

namespace leaf1 {
constexpr Field kStepping{0, 3}, kModel{4, 7}, kFamily{8, 11}, kExtModel{16, 19}, kExtFamily{20, 27};
constexpr Field kVmx{5, 5}, kPdcm{15, 15}, kHypervisor{31, 31};  // ECX
constexpr Field kDs{21, 21};                                     // EDX
}  // namespace leaf1

namespace leafA {
constexpr Field kVersion{0, 7}, kGpCounters{8, 15}, kGpWidth{16, 23}, kEbxLength{24, 31};  // EAX
constexpr Field kFixedCounters{0, 4}, kFixedWidth{5, 12}, kAnyThreadDeprecated{15, 15};   // EDX
}  // namespace leafA

namespace amd {
constexpr Field kSvm{2, 2}, kIbs{10, 10}, kExtCore{23, 23}, kExtNb{24, 24}, kExtLlc{28, 28};  // 0x80000001 ECX
constexpr Field kPerfMonV2{0, 0}, kLbrStack{1, 1};                                          // 0x80000022 EAX
constexpr Field kNumCore{0, 3}, kLbrSize{4, 9}, kNumNb{10, 15}, kNumUmc{16, 21};             // 0x80000022 EBX
}  // namespace amd

bool bit(uint32_t reg, int n) { return ((reg >> n) & 1u) != 0; }

std::string regs_text(std::initializer_list<uint32_t> regs) {
  std::string out;
  for (uint32_t r : regs)
    for (int i = 0; i < 4; ++i) out += static_cast<char>((r >> (8 * i)) & 0xff);
  return out;
}

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// Leaves above the maximum return other leaves' data on real CPUs; treat them as absent.
std::optional<CpuidRegs> basic_leaf(const CpuidSource& cpuid, const CpuIdentity& cpu, uint32_t leaf,
                                    uint32_t subleaf = 0) {
  if (leaf > cpu.max_basic_leaf) return std::nullopt;
  return cpuid.query(leaf, subleaf);
}

std::optional<CpuidRegs> extended_leaf(const CpuidSource& cpuid, const CpuIdentity& cpu, uint32_t leaf) {
  if (cpu.max_extended_leaf < 0x80000000u || leaf > cpu.max_extended_leaf) return std::nullopt;
  return cpuid.query(leaf, 0);
}

}  // namespace

std::span<const ArchitecturalEvent> architectural_events() { return kArchitecturalEvents; }

std::string_view hypervisor_vendor_for_signature(std::string_view signature) {
  for (const auto& v : kHypervisorVendors)
    if (v.signature == signature) return v.vendor;
  return {};
}

unsigned AmdPerfmon::core_counters() const {
  if (perfmon_v2) return num_core_counters_v2;
  return perf_ctr_ext_core ? 6 : 4;
}

CpuIdentity decode_identity(const CpuidSource& cpuid) {
  CpuIdentity id;
  auto leaf0 = cpuid.query(0, 0);
  if (!leaf0) return id;
  id.max_basic_leaf = leaf0->eax;
  id.vendor = regs_text({leaf0->ebx, leaf0->edx, leaf0->ecx});
  id.vendor.erase(std::find(id.vendor.begin(), id.vendor.end(), '\0'), id.vendor.end());

  if (auto ext = cpuid.query(0x80000000u, 0); ext && ext->eax >= 0x80000000u && ext->eax <= 0x8000ffffu)
    id.max_extended_leaf = ext->eax;

  if (auto l1 = basic_leaf(cpuid, id, 1)) {
    id.signature = l1->eax;
    const unsigned base_family = leaf1::kFamily.of(l1->eax);
    id.family = base_family == 0xF ? base_family + leaf1::kExtFamily.of(l1->eax) : base_family;
    id.model = leaf1::kModel.of(l1->eax);
    if (base_family == 0x6 || base_family == 0xF) id.model += leaf1::kExtModel.of(l1->eax) << 4;
    id.stepping = leaf1::kStepping.of(l1->eax);
    id.hypervisor_bit = leaf1::kHypervisor.of(l1->ecx) != 0;
    id.pdcm = leaf1::kPdcm.of(l1->ecx) != 0;
    id.vmx = leaf1::kVmx.of(l1->ecx) != 0;
    id.ds = leaf1::kDs.of(l1->edx) != 0;
  }
  if (auto l6 = basic_leaf(cpuid, id, 6)) id.aperf_mperf = bit(l6->ecx, 0);
  if (auto l1a = basic_leaf(cpuid, id, 0x1A); l1a && l1a->eax != 0)
    id.hybrid_core_type = static_cast<uint8_t>(l1a->eax >> 24);
  if (auto e1 = extended_leaf(cpuid, id, 0x80000001u)) id.svm = amd::kSvm.of(e1->ecx) != 0;

  if (id.max_extended_leaf >= 0x80000004u) {
    std::string brand;
    for (uint32_t leaf = 0x80000002u; leaf <= 0x80000004u; ++leaf)
      if (auto r = cpuid.query(leaf, 0)) brand += regs_text({r->eax, r->ebx, r->ecx, r->edx});
    brand.erase(std::find(brand.begin(), brand.end(), '\0'), brand.end());
    const auto first = brand.find_first_not_of(' ');
    const auto last = brand.find_last_not_of(' ');
    id.brand = first == std::string::npos ? "" : brand.substr(first, last - first + 1);
  }
  return id;
}

HypervisorInfo decode_hypervisor(const CpuidSource& cpuid, const CpuIdentity& cpu) {
  HypervisorInfo info;
  info.cpuid_bit = cpu.hypervisor_bit;
  // Without the hypervisor bit, leaves 0x4000xxxx are not defined and bare-metal CPUs answer
  // with the highest basic leaf: scanning them would invent a hypervisor (Linux checks too).
  if (!cpu.hypervisor_bit) return info;
  for (uint32_t base = kHypervisorBase; base < kHypervisorScanEnd; base += kHypervisorStep) {
    auto r = cpuid.query(base, 0);
    if (!r || (r->ebx == 0 && r->ecx == 0 && r->edx == 0)) continue;
    std::string sig = regs_text({r->ebx, r->ecx, r->edx});
    while (!sig.empty() && sig.back() == '\0') sig.pop_back();
    std::string_view vendor = hypervisor_vendor_for_signature(sig);
    // An unknown signature counts only if it looks like one: printable, and a max leaf within
    // this base's range of 0x100 leaves.
    const bool plausible = printable(sig) && r->eax >= base && r->eax < base + kHypervisorStep;
    if (vendor.empty() && !plausible) continue;
    HypervisorSignature s;
    s.base = base;
    s.max_leaf = r->eax;
    s.signature = sig;
    s.vendor = std::string(vendor);
    if (r->eax >= base + 1 || r->eax == 0) {  // old KVM left EAX 0 but still had base+1
      if (auto iface = cpuid.query(base + 1, 0)) {
        s.interface_eax = iface->eax;
        std::string id = regs_text({iface->eax});
        if (printable(id)) s.interface_id = id;
      }
    }
    info.signatures.push_back(std::move(s));
  }
  if (!info.signatures.empty()) {
    // KVM, Xen and QEMU put Hyper-V's signature at 0x40000000 for Windows guests and their own
    // one higher up; the one higher up is the hypervisor really running.
    info.primary = 0;
    if (info.signatures[0].vendor == "Hyper-V" && info.signatures.size() > 1) info.primary = 1;
  }
  return info;
}

ArchPerfmon decode_arch_perfmon(const CpuidSource& cpuid, const CpuIdentity& cpu) {
  ArchPerfmon a;
  auto r = basic_leaf(cpuid, cpu, 0xA);
  if (!r) return a;
  a.leaf_present = true;
  a.eax = r->eax;
  a.ebx = r->ebx;
  a.ecx = r->ecx;
  a.edx = r->edx;
  a.version = leafA::kVersion.of(r->eax);
  if (a.version == 0) return a;  // no architectural perfmon: the other fields mean nothing
  a.gp_counters = leafA::kGpCounters.of(r->eax);
  a.gp_width = leafA::kGpWidth.of(r->eax);
  a.ebx_length = leafA::kEbxLength.of(r->eax);
  for (const ArchitecturalEvent& e : kArchitecturalEvents) {
    // Bits at or beyond the length are not defined, whatever they hold (VMware sets bit 7).
    if (static_cast<unsigned>(e.bit) >= a.ebx_length) break;
    (bit(r->ebx, e.bit) ? a.unavailable_events : a.available_events).emplace_back(e.name);
  }
  if (a.version >= 2) {
    a.fixed_counters = leafA::kFixedCounters.of(r->edx);
    a.fixed_width = leafA::kFixedWidth.of(r->edx);
    a.anythread_deprecated = leafA::kAnyThreadDeprecated.of(r->edx) != 0;
    const uint32_t below_count = a.fixed_counters >= 32 ? ~0u : ((1u << a.fixed_counters) - 1);
    a.fixed_counter_mask = below_count | (a.version >= 5 ? r->ecx : 0u);
  }
  return a;
}

std::optional<ArchPerfmonExt> decode_arch_perfmon_ext(const CpuidSource& cpuid, const CpuIdentity& cpu) {
  auto s0 = basic_leaf(cpuid, cpu, 0x23, 0);
  if (!s0) return std::nullopt;
  ArchPerfmonExt x;
  x.subleaf_mask = s0->eax;
  x.umask2 = bit(s0->ebx, 0);
  x.eq_bit = bit(s0->ebx, 1);
  if (bit(x.subleaf_mask, 1))
    if (auto s1 = basic_leaf(cpuid, cpu, 0x23, 1)) {
      x.gp_counter_bitmap = s1->eax;
      x.fixed_counter_bitmap = s1->ebx;
    }
  if (bit(x.subleaf_mask, 2)) x.auto_counter_reload = basic_leaf(cpuid, cpu, 0x23, 2);
  if (bit(x.subleaf_mask, 3))
    if (auto s3 = basic_leaf(cpuid, cpu, 0x23, 3)) {
      x.arch_events_bitmap = s3->eax;
      for (const ArchitecturalEvent& e : kArchitecturalEvents)
        (bit(s3->eax, e.bit) ? x.available_events : x.unavailable_events).emplace_back(e.name);
    }
  return x;
}

std::optional<AmdPerfmon> decode_amd_perfmon(const CpuidSource& cpuid, const CpuIdentity& cpu) {
  if (!cpu.is_amd()) return std::nullopt;
  AmdPerfmon p;
  if (auto e1 = extended_leaf(cpuid, cpu, 0x80000001u)) {
    p.perf_ctr_ext_core = amd::kExtCore.of(e1->ecx) != 0;
    p.perf_ctr_ext_nb = amd::kExtNb.of(e1->ecx) != 0;
    p.perf_ctr_ext_llc = amd::kExtLlc.of(e1->ecx) != 0;
    p.ibs = amd::kIbs.of(e1->ecx) != 0;
  }
  if (auto e22 = extended_leaf(cpuid, cpu, 0x80000022u)) {
    p.leaf_80000022_present = true;
    p.perfmon_v2 = amd::kPerfMonV2.of(e22->eax) != 0;
    p.lbr_stack = amd::kLbrStack.of(e22->eax) != 0;
    p.num_core_counters_v2 = amd::kNumCore.of(e22->ebx);
    p.lbr_stack_size = amd::kLbrSize.of(e22->ebx);
    p.num_nb_counters = amd::kNumNb.of(e22->ebx);
    p.num_umc_counters = amd::kNumUmc.of(e22->ebx);
  }
  return p;
}

CpuidReport decode_cpuid(const CpuidSource& cpuid) {
  CpuidReport report;
  report.source = cpuid.describe();
  report.cpu = decode_identity(cpuid);
  report.hypervisor = decode_hypervisor(cpuid, report.cpu);
  report.arch = decode_arch_perfmon(cpuid, report.cpu);
  report.arch_ext = decode_arch_perfmon_ext(cpuid, report.cpu);
  report.amd = decode_amd_perfmon(cpuid, report.cpu);
  return report;
}

}  // namespace vperf::host
