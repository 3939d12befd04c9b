#pragma once
// CPU models that `--model NAME` can name, as data: vperf's short name, the libpfm4 core PMU
// that describes it, the CPUID signature that picks its perfmon JSON files from mapfile.csv (the
// MIDR that picks perf's arm64 tables, for arm64 cores), and the libpfm4 uncore and RAPL PMUs
// that belong to the same part.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::events {

// What CPUID leaf 0/1 say: "GenuineIntel", family 6, model 0x55, stepping 4.
struct CpuSignature {
  std::string vendor;
  uint32_t family = 0;
  uint32_t model = 0;
  std::optional<uint32_t> stepping;
  bool operator==(const CpuSignature&) const = default;
  // Intel's perfmon tables describe Intel CPUs only.
  bool is_intel() const { return vendor == "GenuineIntel"; }
  // mapfile.csv spelling, as perf writes it: "GenuineIntel-6-55-4" (family in decimal, model and
  // stepping in upper-case hex, stepping only when known).
  std::string mapfile_key() const;
};

// The signature of the CPU this process runs on (CPUID instruction; x86 only).
std::optional<CpuSignature> running_cpu_signature();

struct PmcModel {
  std::string name;        // "skx", or the libpfm4 PMU name for models without a table entry
  std::string libpfm_pmu;  // libpfm4 core PMU: "skx", "amd64_fam19h_zen3"
  std::vector<std::string> aliases;
  std::string description;
  std::optional<CpuSignature> cpu;              // nullopt when no table entry knows it
  std::vector<std::string> uncore_pmu_prefixes;  // libpfm4 PMU names starting with these
  std::string rapl_pmu;                          // libpfm4 RAPL PMU ("rapl", "amd64_rapl"), or empty
  bool running_cpu = false;                      // chosen because it is this machine's CPU
  // arm64: the MIDR (variant and revision zero) that picks its tables from perf's arm64
  // mapfile.csv; nullopt for x86 models.
  std::optional<uint32_t> midr;
  bool is_arm() const { return midr.has_value(); }
};

// The models vperf knows by name (the data table), in table order.
const std::vector<PmcModel>& known_pmc_models();
// Finds a model by vperf name, alias or libpfm4 PMU name (case-insensitive) in the table.
std::optional<PmcModel> find_known_pmc_model(std::string_view name);
// The table entry whose CPU signature matches `cpu` (family/model, stepping when the entry has one).
std::optional<PmcModel> find_pmc_model_by_cpu(const CpuSignature& cpu);
// The arm64 table entry for a MIDR (implementer, architecture and part; any variant/revision).
std::optional<PmcModel> find_pmc_model_by_midr(uint32_t midr);
// This machine's MIDR (CPU 0's; arm64 only), or nullopt.
std::optional<uint32_t> running_midr();

}  // namespace vperf::events
