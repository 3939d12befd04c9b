#pragma once
// Decoding MSR_TURBO_RATIO_LIMIT (0x1AD) and MSR_TURBO_RATIO_LIMIT1 (0x1AE) into "with N cores
// active, the core may run at ratio R = R x 100 MHz". Byte i of 0x1AD is a ratio; what it is the
// ratio *for* has two layouts (Intel SDM vol. 4):
//   ActiveCores  byte i of 0x1AD: i+1 active cores; byte i of 0x1AE: i+9 active cores
//                (client parts and servers up to Broadwell);
//   CoreGroups   byte i of 0x1AE is the active-core count of group i, whose ratio is byte i of
//                0x1AD (Skylake-SP and later Xeons, Goldmont Atoms).
// A zero byte is a limit the part does not define and is left out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vperf::msr {

enum class TurboLimitLayout { ActiveCores, CoreGroups };

struct TurboStep {
  unsigned active_cores = 0;  // up to this many cores active
  unsigned ratio = 0;         // x bus clock
  double mhz = 0;
  bool operator==(const TurboStep&) const = default;
};

// Which layout the pair of values is in when the CPU model is not known: 0x1AE's nonzero bytes
// are core counts (CoreGroups) when they rise strictly from byte to byte; ratios by active cores
// never rise with more cores. Without 0x1AE it is ActiveCores.
TurboLimitLayout infer_turbo_limit_layout(uint64_t limit, std::optional<uint64_t> limit1);

// Steps sorted by active cores, ascending. `bus_mhz` is 100 on every part with these MSRs
// since Sandy Bridge.
std::vector<TurboStep> decode_turbo_ratio_limits(uint64_t limit, std::optional<uint64_t> limit1,
                                                 TurboLimitLayout layout, double bus_mhz = 100.0);

// "1 active core: 39 -> 3900 MHz", "4 active cores: 35 -> 3500 MHz"
std::string describe(const TurboStep& step);

}  // namespace vperf::msr
