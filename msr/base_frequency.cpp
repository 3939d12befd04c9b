#include "msr/base_frequency.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "core/strings.h"
#include "msr/msr_register.h"

namespace vperf::msr {

namespace {
std::string mhz_text(double mhz) {
  // Whole MHz as an integer, otherwise with the digits /proc/cpuinfo gave.
  if (mhz == std::floor(mhz)) return std::to_string(static_cast<long long>(mhz));
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, mhz, std::chars_format::fixed, 3);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(mhz);
}
}  // namespace

Result<BaseFrequency> choose_base_frequency(const BaseFrequencyInputs& inputs) {
  std::vector<std::string> tried;
  if (inputs.platform_info) {
    const MsrRegister& reg = *find_register(address::kPlatformInfo);
    const uint64_t ratio = field_value(reg, "max_non_turbo_ratio", *inputs.platform_info).value_or(0);
    if (ratio != 0)
      return BaseFrequency{
          static_cast<double>(ratio) * kBusClockMhz, BaseFrequencySource::PlatformInfo,
          "MSR_PLATFORM_INFO[15:8] = " + std::to_string(ratio) + " x " + mhz_text(kBusClockMhz) + " MHz"};
    tried.push_back("MSR_PLATFORM_INFO[15:8] is 0");
  } else {
    tried.push_back("MSR_PLATFORM_INFO unreadable");
  }
  if (inputs.cpuid_16_eax) {
    const uint32_t mhz = *inputs.cpuid_16_eax & 0xFFFF;
    if (mhz != 0) return BaseFrequency{static_cast<double>(mhz), BaseFrequencySource::CpuidLeaf16, "CPUID.16H:EAX"};
    tried.push_back("CPUID.16H:EAX is 0");
  } else {
    tried.push_back("no CPUID leaf 0x16");
  }
  if (inputs.cpuinfo_mhz && *inputs.cpuinfo_mhz > 0)
    return BaseFrequency{*inputs.cpuinfo_mhz, BaseFrequencySource::ProcCpuinfo, "/proc/cpuinfo cpu MHz"};
  tried.push_back(inputs.cpuinfo_mhz ? "/proc/cpuinfo cpu MHz is 0" : "no cpu MHz in /proc/cpuinfo");
  return Error{"no base frequency: " + join(tried, ", ")};
}

std::string_view source_key(BaseFrequencySource source) {
  switch (source) {
    case BaseFrequencySource::PlatformInfo:
      return "msr_platform_info";
    case BaseFrequencySource::CpuidLeaf16:
      return "cpuid_0x16";
    case BaseFrequencySource::ProcCpuinfo:
      return "proc_cpuinfo";
  }
  return "unknown";
}

std::optional<double> parse_cpuinfo_mhz(std::string_view cpuinfo) {
  for (std::string_view line : split(cpuinfo, '\n')) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || trim(line.substr(0, colon)) != "cpu MHz") continue;
    std::string_view value = trim(line.substr(colon + 1));
    double mhz = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), mhz);
    if (ec != std::errc() || end != value.data() + value.size() || !(mhz >= 0) || !std::isfinite(mhz))
      return std::nullopt;
    return mhz;
  }
  return std::nullopt;
}

}  // namespace vperf::msr
