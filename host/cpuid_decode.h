#pragma once
// Decoding the CPUID leaves that say what a CPU (or a hypervisor's idea of one) offers for
// performance monitoring. Layouts are from the Intel SDM vol. 2A (CPUID) and vol. 3B ch. 20
// (architectural performance monitoring), and AMD APM vol. 3 (CPUID Fn8000_0001, Fn8000_0022).
// Hardware layouts live in tables in cpuid_decode.cpp; this header is the decoded shape.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/cpuid_source.h"

namespace vperf::host {

struct CpuIdentity {
  std::string vendor;            // "GenuineIntel", "AuthenticAMD", ... (leaf 0 EBX-EDX-ECX)
  uint32_t max_basic_leaf = 0;   // leaf 0 EAX
  uint32_t max_extended_leaf = 0;  // 0x80000000 EAX, 0 when absent
  uint32_t signature = 0;        // leaf 1 EAX
  // Display family/model: family = base + extended when base is 0xF; model gets the extended
  // model bits when the base family is 6 or 0xF (the SDM rule; AMD uses the 0xF half of it).
  unsigned family = 0;
  unsigned model = 0;
  unsigned stepping = 0;
  std::string brand;             // 0x80000002..4, trimmed; empty when absent
  bool hypervisor_bit = false;   // 1.ECX[31]
  bool pdcm = false;             // 1.ECX[15]: IA32_PERF_CAPABILITIES exists
  bool ds = false;               // 1.EDX[21]: debug store (PEBS, BTS buffer)
  bool vmx = false;              // 1.ECX[5]
  bool svm = false;              // 0x80000001.ECX[2]
  bool aperf_mperf = false;      // 6.ECX[0]: IA32_MPERF/IA32_APERF exist
  std::optional<uint8_t> hybrid_core_type;  // 0x1A EAX[31:24]: 0x20 Atom (E), 0x40 Core (P)

  bool is_intel() const { return vendor == "GenuineIntel"; }
  bool is_amd() const { return vendor == "AuthenticAMD" || vendor == "HygonGenuine"; }
};

struct HypervisorSignature {
  uint32_t base = 0;          // 0x40000000, 0x40000100 ...
  uint32_t max_leaf = 0;      // base EAX
  std::string signature;      // the 12 bytes of EBX-ECX-EDX, trailing NULs dropped
  std::string vendor;         // "KVM", "Xen", "Hyper-V" ... or empty when unknown
  uint32_t interface_eax = 0; // base+1 EAX (0 when absent)
  std::string interface_id;   // base+1 EAX as text when it is 4 printable bytes ("Hv#1")
};

struct HypervisorInfo {
  bool cpuid_bit = false;
  std::vector<HypervisorSignature> signatures;  // in base order
  // Index into signatures of the hypervisor vendor to report; nullopt on bare metal.
  std::optional<size_t> primary;
  const HypervisorSignature* primary_signature() const { return primary ? &signatures[*primary] : nullptr; }
};

struct ArchitecturalEvent {
  int bit;                  // bit in 0xA EBX ("not available") and 0x23.3 EAX ("available")
  std::string_view name;    // vperf's name, used in JSON
  std::string_view sdm_name;
  uint8_t event;
  uint8_t umask;
};
// The 13 architectural events of SDM table 20-1 (leaf 0xA EBX bits 0..12).
std::span<const ArchitecturalEvent> architectural_events();

struct ArchPerfmon {  // leaf 0xA
  bool leaf_present = false;  // max basic leaf >= 0xA and the source has it
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  unsigned version = 0;
  unsigned gp_counters = 0;
  unsigned gp_width = 0;
  unsigned ebx_length = 0;        // how many EBX bits are meaningful
  std::vector<std::string> unavailable_events;  // EBX bits set below the length
  std::vector<std::string> available_events;    // EBX bits clear below the length
  unsigned fixed_counters = 0;    // EDX[4:0] (version >= 2)
  unsigned fixed_width = 0;       // EDX[12:5]
  uint32_t fixed_counter_mask = 0;  // counters usable: ECX[i] || i < EDX[4:0] (ECX since v5)
  bool anythread_deprecated = false;  // EDX[15]
};

struct ArchPerfmonExt {  // leaf 0x23, when the max basic leaf reaches it
  uint32_t subleaf_mask = 0;       // 0x23.0 EAX: which subleaves are valid
  bool umask2 = false;             // 0x23.0 EBX[0]
  bool eq_bit = false;             // 0x23.0 EBX[1]
  std::optional<uint32_t> gp_counter_bitmap;     // 0x23.1 EAX
  std::optional<uint32_t> fixed_counter_bitmap;  // 0x23.1 EBX
  std::optional<CpuidRegs> auto_counter_reload;  // 0x23.2, raw masks
  std::optional<uint32_t> arch_events_bitmap;    // 0x23.3 EAX: bit i set = event i available
  std::vector<std::string> available_events;     // from 0x23.3
  std::vector<std::string> unavailable_events;   // known events whose 0x23.3 bit is clear
};

struct AmdPerfmon {
  bool perf_ctr_ext_core = false;  // 0x80000001 ECX[23]: 6 core counters instead of 4
  bool perf_ctr_ext_nb = false;    // ECX[24]: data-fabric / northbridge counters
  bool perf_ctr_ext_llc = false;   // ECX[28]: L3 counters
  bool ibs = false;                // ECX[10]: instruction-based sampling (AMD's precise sampling)
  bool leaf_80000022_present = false;
  bool perfmon_v2 = false;         // 0x80000022 EAX[0]
  bool lbr_stack = false;          // 0x80000022 EAX[1]
  unsigned num_core_counters_v2 = 0;  // EBX[3:0]
  unsigned lbr_stack_size = 0;        // EBX[9:4]
  unsigned num_nb_counters = 0;       // EBX[15:10]
  unsigned num_umc_counters = 0;      // EBX[21:16]
  // What the core PMU has: EBX[3:0] with PerfMonV2, else 6 with PerfCtrExtCore, else the 4
  // legacy counters that every AMD CPU has on bare metal (no CPUID bit says a VM has them).
  unsigned core_counters() const;
};

struct CpuidReport {
  std::string source;  // CpuidSource::describe()
  CpuIdentity cpu;
  HypervisorInfo hypervisor;
  ArchPerfmon arch;
  std::optional<ArchPerfmonExt> arch_ext;
  std::optional<AmdPerfmon> amd;  // for AMD and Hygon vendors
};

CpuIdentity decode_identity(const CpuidSource& cpuid);
HypervisorInfo decode_hypervisor(const CpuidSource& cpuid, const CpuIdentity& cpu);
ArchPerfmon decode_arch_perfmon(const CpuidSource& cpuid, const CpuIdentity& cpu);
std::optional<ArchPerfmonExt> decode_arch_perfmon_ext(const CpuidSource& cpuid, const CpuIdentity& cpu);
std::optional<AmdPerfmon> decode_amd_perfmon(const CpuidSource& cpuid, const CpuIdentity& cpu);
CpuidReport decode_cpuid(const CpuidSource& cpuid);

// "KVM" for "KVMKVMKVM"; empty when the signature is not in the table.
std::string_view hypervisor_vendor_for_signature(std::string_view signature);

}  // namespace vperf::host
