#pragma once
// A GNU build-id: the bytes of an ELF's NT_GNU_BUILD_ID note (20 for SHA-1, up to 20 in
// perf.data's build-id records), shown as lower-case hex like `readelf -n` and `perf buildid-list`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::symbols {

struct BuildId {
  std::vector<uint8_t> bytes;

  bool empty() const { return bytes.empty(); }
  std::string hex() const;
  static std::optional<BuildId> from_hex(std::string_view hex);
  bool operator==(const BuildId&) const = default;
};

}  // namespace vperf::symbols
