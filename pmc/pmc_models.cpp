#include "pmc/pmc_models.h"

#include <cstdio>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstring>

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
                  CpuSignature{"GenuineIntel", 6, model, stepping}, std::move(uncore), "rapl", false};
}

PmcModel amd(std::string name, std::string pfm, std::vector<std::string> aliases, std::string description,
             uint32_t family, uint32_t model, std::vector<std::string> uncore) {
  return PmcModel{std::move(name), std::move(pfm), std::move(aliases), std::move(description),
                  CpuSignature{"AuthenticAMD", family, model, std::nullopt}, std::move(uncore), "amd64_rapl",
                  false};
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
  };
}

}  // namespace

const std::vector<PmcModel>& known_pmc_models() {
  static const std::vector<PmcModel> table = build_model_table();  // immutable data
  return table;
}

std::optional<PmcModel> find_known_pmc_model(std::string_view name) {
  for (const PmcModel& m : known_pmc_models()) {
    if (equals_nocase(m.name, name) || equals_nocase(m.libpfm_pmu, name)) return m;
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

}  // namespace vperf::events
