#pragma once
// Model-specific registers that vperf reads, described as data: address, name, and the bit
// fields a human wants to see. Layouts are from the Intel SDM vol. 4 ("Model-Specific
// Registers") and vol. 3B ch. 20 (IA32_PERF_CAPABILITIES). Decoding is generic, so adding a
// register is adding rows, not code.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::msr {

struct MsrField {
  std::string_view name;
  int low = 0;
  int high = 0;  // inclusive
  std::string_view meaning;

  uint64_t extract(uint64_t value) const;
};

struct MsrRegister {
  uint32_t address = 0;
  std::string_view name;
  std::string_view description;
  // Empty for registers that are one 64-bit counter (IA32_TIME_STAMP_COUNTER, IA32_MPERF, IA32_APERF).
  std::span<const MsrField> fields;
};

namespace address {
inline constexpr uint32_t kTimeStampCounter = 0x10;
inline constexpr uint32_t kPlatformInfo = 0xCE;
inline constexpr uint32_t kMperf = 0xE7;
inline constexpr uint32_t kAperf = 0xE8;
inline constexpr uint32_t kPerfStatus = 0x198;
inline constexpr uint32_t kThermStatus = 0x19C;
inline constexpr uint32_t kTemperatureTarget = 0x1A2;
inline constexpr uint32_t kTurboRatioLimit = 0x1AD;
inline constexpr uint32_t kTurboRatioLimit1 = 0x1AE;
inline constexpr uint32_t kPerfCapabilities = 0x345;
}  // namespace address

// Every register vperf knows, sorted by address.
std::span<const MsrRegister> known_registers();
const MsrRegister* find_register(uint32_t address);
// By SDM name, case-insensitive ("IA32_APERF", "msr_platform_info").
const MsrRegister* find_register(std::string_view name);

struct DecodedField {
  std::string_view name;
  int low = 0;
  int high = 0;
  uint64_t value = 0;
  std::string_view meaning;
};

// The register's fields extracted from a raw value, in table order.
std::vector<DecodedField> decode_fields(const MsrRegister& reg, uint64_t value);
// One field by name, if the register has it.
std::optional<uint64_t> field_value(const MsrRegister& reg, std::string_view field, uint64_t value);

}  // namespace vperf::msr
