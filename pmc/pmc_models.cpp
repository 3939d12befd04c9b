#include "pmc/pmc_models.h"

#include <cstdio>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstring>

#include "core/arm_midr.h"
#include "core/strings.h"

namespace vperf::events {

std::string CpuSignature::mapfile_key() const {
  char buf[64];
  if (stepping)
    std::snprintf(buf, sizeof buf, "%s-%u-%X-%X", vendor.c_str(), family, model, *stepping);
  else
    std::snprintf(buf, sizeof buf, "%s-%u-%X", vendor.c_str(), family, model);
  return buf;
}

std::optional<CpuSignature> running_cpu_signature() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return std::nullopt;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return std::nullopt;
  // SDM vol. 2A, CPUID leaf 1 EAX: the extended family/model fields add to the base ones.
  uint32_t base_family = (eax >> 8) & 0xf;
  uint32_t family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff) : base_family;
  uint32_t model = (eax >> 4) & 0xf;
  if (base_family == 0x6 || base_family == 0xf) model |= ((eax >> 16) & 0xf) << 4;
  return CpuSignature{vendor, family, model, eax & 0xf};
#else
  return std::nullopt;
#endif
}

namespace {

PmcModel intel(std::string name, std::string pfm, std::vector<std::string> aliases, std::string description,
               uint32_t model, std::optional<uint32_t> stepping, std::vector<std::string> uncore) {
  return PmcModel{std::move(name), std::move(pfm), std::move(aliases), std::move(description),
                  CpuSignature{"GenuineIntel", 6, model, stepping}, std::move(uncore), "rapl", false, std::nullopt};
}

PmcModel amd(std::string name, std::string pfm, std::vector<std::string> aliases, std::string description,
             uint32_t family, uint32_t model, std::vector<std::string> uncore) {
  return PmcModel{std::move(name), std::move(pfm), std::move(aliases), std::move(description),
                  CpuSignature{"AuthenticAMD", family, model, std::nullopt}, std::move(uncore), "amd64_rapl",
                  false, std::nullopt};
}

// libpfm4 has its arm tables only in its arm64 build; an x86 vperf lists these models from
// perf's arm64 tables alone.
PmcModel arm(std::string name, std::string pfm, std::vector<std::string> aliases, std::string description,
             uint32_t midr) {
  return PmcModel{std::move(name), std::move(pfm), std::move(aliases), std::move(description), std::nullopt, {}, "",
                  false, midr};
}

std::vector<PmcModel> build_model_table() {
  // One representative CPUID signature per model (the one Intel's mapfile.csv lists first);
  // Skylake-SP and Cascade Lake share model 0x55 and differ by stepping (0-4 vs 5-F).
  return {
      intel("snb", "snb", {"sandybridge"}, "Intel Sandy Bridge", 0x2A, std::nullopt, {"snb_unc_"}),
      intel("snb_ep", "snb_ep", {"jkt", "sandybridge-ep"}, "Intel Sandy Bridge-EP", 0x2D, std::nullopt,
            {"snbep_unc_"}),
      intel("ivb", "ivb", {"ivybridge"}, "Intel Ivy Bridge", 0x3A, std::nullopt, {"ivb_unc_"}),
      intel("ivb_ep", "ivb_ep", {"ivt", "ivytown"}, "Intel Ivy Bridge-EP", 0x3E, std::nullopt, {"ivbep_unc_"}),
      intel("hsw", "hsw", {"haswell"}, "Intel Haswell", 0x3C, std::nullopt, {}),
      intel("hsw_ep", "hsw_ep", {"hsx", "haswellx"}, "Intel Haswell-EP", 0x3F, std::nullopt, {"hswep_unc_"}),
      intel("bdw", "bdw", {"broadwell"}, "Intel Broadwell", 0x3D, std::nullopt, {}),
      intel("bdw_ep", "bdw_ep", {"bdx", "broadwellx"}, "Intel Broadwell-EP", 0x4F, std::nullopt, {"bdx_unc_"}),
      intel("skl", "skl", {"skylake"}, "Intel Skylake (client)", 0x5E, std::nullopt, {}),
      intel("skx", "skx", {"skylakex", "skylake-sp"}, "Intel Skylake-SP", 0x55, 4, {"skx_unc_"}),
      intel("clx", "clx", {"cascadelakex", "cascadelake"}, "Intel Cascade Lake", 0x55, 7, {"skx_unc_"}),
      intel("icl", "icl", {"icelake"}, "Intel Ice Lake (client)", 0x7E, std::nullopt, {}),
      intel("icx", "icx", {"icelakex", "icelake-sp"}, "Intel Ice Lake-SP", 0x6A, std::nullopt, {}),
      intel("spr", "spr", {"sapphirerapids"}, "Intel Sapphire Rapids", 0x8F, std::nullopt, {}),
      intel("slm", "slm", {"silvermont"}, "Intel Silvermont", 0x37, std::nullopt, {}),
      intel("glm", "glm", {"goldmont"}, "Intel Goldmont", 0x5C, std::nullopt, {}),
      intel("tmt", "tmt", {"tremont"}, "Intel Tremont", 0x86, std::nullopt, {}),
      intel("knl", "knl", {"knightslanding"}, "Intel Knights Landing", 0x57, std::nullopt, {"knl_unc_"}),
      amd("zen1", "amd64_fam17h_zen1", {"zen"}, "AMD Zen (family 17h)", 0x17, 0x01, {}),
      amd("zen2", "amd64_fam17h_zen2", {}, "AMD Zen 2 (family 17h)", 0x17, 0x31, {}),
      amd("zen3", "amd64_fam19h_zen3", {}, "AMD Zen 3 (family 19h)", 0x19, 0x01, {"amd64_fam19h_zen3_l3"}),
      amd("zen4", "amd64_fam19h_zen4", {}, "AMD Zen 4 (family 19h)", 0x19, 0x11, {}),
      // MIDRs as perf's arm64 mapfile.csv lists them (variant and revision zero).
      arm("neoverse-n1", "arm_n1", {"n1", "graviton2", "altra"}, "Arm Neoverse N1 (AWS Graviton2, Ampere Altra)",
          0x410fd0c0),
      arm("neoverse-v1", "arm_v1", {"v1", "graviton3"}, "Arm Neoverse V1 (AWS Graviton3)", 0x410fd400),
      arm("neoverse-n2", "arm_n2", {"n2", "cobalt100"}, "Arm Neoverse N2 (Azure Cobalt 100)", 0x410fd490),
      arm("neoverse-v2", "arm_v2", {"v2", "graviton4", "grace", "axion"},
          "Arm Neoverse V2 (AWS Graviton4, NVIDIA Grace, Google Axion)", 0x410fd4f0),
      arm("ampereone", "", {}, "Ampere AmpereOne", 0xc00fac30),
      arm("ampereonex", "", {}, "Ampere AmpereOneX", 0xc00fac40),
      arm("a64fx", "arm_a64fx", {}, "Fujitsu A64FX", 0x460f0010),
      arm("kunpeng920", "arm_kunpeng", {"hip08", "tsv110"}, "HiSilicon Kunpeng 920 (TSV110)", 0x480fd010),
      arm("thunderx2", "arm_thunderx2", {}, "Marvell ThunderX2", 0x430f0af0),
      arm("emag", "arm_xgene", {"xgene"}, "Ampere eMAG (X-Gene)", 0x500f0000),
      arm("cortex-a53", "arm_ac53", {}, "Arm Cortex-A53", 0x410fd030),
      arm("cortex-a57", "arm_ac57", {}, "Arm Cortex-A57", 0x410fd070),
      arm("cortex-a72", "", {"raspberrypi4"}, "Arm Cortex-A72", 0x410fd080),
      arm("cortex-a76", "", {"raspberrypi5"}, "Arm Cortex-A76", 0x410fd0b0),
  };
}

}  // namespace

const std::vector<PmcModel>& known_pmc_models() {
  static const std::vector<PmcModel> table = build_model_table();  // immutable data
  return table;
}

std::optional<PmcModel> find_known_pmc_model(std::string_view name) {
  for (const PmcModel& m : known_pmc_models()) {
    if (equals_nocase(m.name, name) || (!m.libpfm_pmu.empty() && equals_nocase(m.libpfm_pmu, name))) return m;
    for (const std::string& alias : m.aliases)
      if (equals_nocase(alias, name)) return m;
  }
  return std::nullopt;
}

std::optional<PmcModel> find_pmc_model_by_cpu(const CpuSignature& cpu) {
  const PmcModel* family_model_match = nullptr;
  for (const PmcModel& m : known_pmc_models()) {
    if (!m.cpu || m.cpu->vendor != cpu.vendor || m.cpu->family != cpu.family || m.cpu->model != cpu.model) continue;
    if (!m.cpu->stepping) return m;
    // 0x55: steppings 0-4 are Skylake-SP, 5 and up Cascade Lake (mapfile.csv's split).
    bool stepping_fits = cpu.stepping && ((*m.cpu->stepping <= 4) == (*cpu.stepping <= 4));
    if (stepping_fits) return m;
    if (family_model_match == nullptr) family_model_match = &m;
  }
  if (family_model_match != nullptr) return *family_model_match;
  return std::nullopt;
}

std::optional<PmcModel> find_pmc_model_by_midr(uint32_t midr) {
  constexpr uint32_t kVariantAndRevision = 0x00f0000f;
  for (const PmcModel& m : known_pmc_models())
    if (m.midr && (*m.midr & ~kVariantAndRevision) == (midr & ~kVariantAndRevision)) return m;
  return std::nullopt;
}

std::optional<uint32_t> running_midr() {
#if defined(__aarch64__)
  MidrReading reading = read_midrs("/sys", "/proc");
  if (!reading.cpus.empty()) return reading.cpus.front().second.value;
#endif
  return std::nullopt;
}

}  // namespace vperf::events
