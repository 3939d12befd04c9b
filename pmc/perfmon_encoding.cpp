#include "pmc/perfmon_encoding.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/strings.h"

namespace vperf::events {

namespace {

struct FixedCounterAlias {
  std::string_view event_name;
  uint64_t config;
  std::string_view why;
};

constexpr uint64_t kAnyThread = uint64_t{1} << 21;

// Fixed-counter events that perf counts through a general-purpose encoding (perf's jevents
// does the same translation when it builds its tables from these files).
constexpr std::array kFixedCounterAliases{
    FixedCounterAlias{"INST_RETIRED.ANY", 0xc0,
                      "fixed counter 0; perf encodes it as INST_RETIRED.ANY_P (0xc0), which the kernel puts on "
                      "fixed counter 0"},
    FixedCounterAlias{"CPU_CLK_UNHALTED.THREAD", 0x3c,
                      "fixed counter 1; perf encodes it as CPU_CLK_UNHALTED.THREAD_P (0x3c), which the kernel "
                      "puts on fixed counter 1"},
    FixedCounterAlias{"CPU_CLK_UNHALTED.CORE", 0x3c,
                      "fixed counter 1; perf encodes it as 0x3c, which the kernel puts on fixed counter 1"},
    FixedCounterAlias{"CPU_CLK_UNHALTED.THREAD_ANY", 0x3c | kAnyThread,
                      "fixed counter 1 with AnyThread; perf encodes it as 0x3c with any=1"},
};

struct UncoreUnitPmu {
  std::string_view unit;
  std::string_view pmu;
};
// Units whose sysfs PMU name is not simply "uncore_" + lower-case unit.
constexpr std::array kUncoreUnitPmus{
    UncoreUnitPmu{"CBO", "uncore_cbox"},      UncoreUnitPmu{"UPI LL", "uncore_upi"},
    UncoreUnitPmu{"QPI LL", "uncore_qpi"},    UncoreUnitPmu{"iMC", "uncore_imc"},
    UncoreUnitPmu{"M2PCIe", "uncore_m2pcie"}, UncoreUnitPmu{"ARB", "uncore_arb"},
};

}  // namespace

std::string uncore_pmu_for_unit(const std::string& unit) {
  for (const UncoreUnitPmu& u : kUncoreUnitPmus)
    if (equals_nocase(u.unit, unit)) return std::string(u.pmu);
  std::string out = "uncore_";
  for (char c : to_lower(unit))
    if (c != ' ') out += c;
  return out;
}

PerfmonEncoding encode_perfmon_event(const PerfmonEvent& event, CoreLayout layout) {
  PerfmonEncoding enc;
  auto config_for = [&](uint32_t code, uint32_t umask) {
    CoreEventFields f;
    f.event = code;
    f.umask = umask;
    f.edge = event.edge_detect;
    f.any_thread = event.any_thread;
    f.invert = event.invert;
    f.cmask = event.counter_mask;
    return join_core_config(f, layout);
  };
  enc.config = config_for(event.event_codes.front(), event.umask);
  // The i-th EventCode goes with the i-th UMask, one pair per MSR ("0xB7, 0xBB" with one UMask
  // on big cores, "0xB7" with "0x01,0x02" on Atom ones); the shorter list repeats its last entry.
  std::vector<uint32_t> umasks{event.umask};
  umasks.insert(umasks.end(), event.umask_alternatives.begin(), event.umask_alternatives.end());
  size_t pairs = std::max(event.event_codes.size(), umasks.size());
  for (size_t i = 1; i < pairs; ++i)
    enc.alternative_configs.push_back(config_for(event.event_codes[std::min(i, event.event_codes.size() - 1)],
                                                 umasks[std::min(i, umasks.size() - 1)]));

  if (event.fixed_counter) {
    for (const FixedCounterAlias& a : kFixedCounterAliases) {
      if (equals_nocase(a.event_name, event.name)) {
        enc.config = a.config;
        enc.fixed_counter_note = std::string(a.why);
      }
    }
    if (enc.fixed_counter_note.empty())
      enc.fixed_counter_note = "fixed counter " + std::to_string(*event.fixed_counter) + "; " + hex(enc.config) +
                               " is the kernel's pseudo-encoding for it, not a general-purpose event select";
  }

  if (!event.msr_indexes.empty()) {
    enc.config1 = event.msr_value;
    enc.config1_term = std::string(config1_term_for_msr(event.msr_indexes.front()));
  }
  // PEBS events allow precise_ip 1 and 2; 3 needs a counter with precise distribution (PDIST).
  enc.max_precise = event.pebs > 0 ? (event.precise_distribution ? 3 : 2) : 0;

  if (event.is_uncore()) {
    enc.pmu = uncore_pmu_for_unit(event.unit);
    // Uncore boxes use the same event/umask layout for their low 16 bits; UMaskExt and
    // filters differ per box and are spelled out when set.
    std::string s = enc.pmu + "/event=" + hex_padded(event.event_codes.front(), 2) + ",umask=" + hex_padded(event.umask, 2);
    if (event.umask_ext != 0) s += ",umask_ext=" + hex(event.umask_ext);
    if (event.counter_mask != 0) s += ",thresh=" + hex(event.counter_mask);
    enc.pmu_syntax = s + "/";
    return enc;
  }
  enc.pmu = std::string(core_pmu_name(layout));
  enc.raw_syntax = perf_raw_syntax(enc.config);
  enc.pmu_syntax = perf_cpu_pmu_syntax(enc.config, enc.config1, enc.config1_term, layout);
  return enc;
}

}  // namespace vperf::events
