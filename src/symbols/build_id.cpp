#include "symbols/build_id.h"

#include "core/strings.h"

namespace vperf::symbols {

std::string BuildId::hex() const {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::optional<BuildId> BuildId::from_hex(std::string_view hex) {
  if (hex.empty() || hex.size() % 2 != 0 || hex.size() > 128) return std::nullopt;
  BuildId id;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto byte = parse_u64_base(hex.substr(i, 2), 16);
    if (!byte) return std::nullopt;
    id.bytes.push_back(static_cast<uint8_t>(*byte));
  }
  return id;
}

}  // namespace vperf::symbols
