#pragma once
// Appends native-endian values to a byte vector: the building half of ByteReader, used to
// build records, feature sections and vperf's cache files.
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace vperf {

class ByteWriter {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &value, sizeof(T));
  }
  void u8(uint8_t v) { put(v); }
  void u16(uint16_t v) { put(v); }
  void u32(uint32_t v) { put(v); }
  void u64(uint64_t v) { put(v); }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void zeros(size_t n) { out_.resize(out_.size() + n, 0); }
  // `s` as it is, and `s` with a NUL after it.
  void text(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
  void c_string(std::string_view s) {
    text(s);
    out_.push_back(0);
  }
  // `s` then NUL padding up to `field` bytes (s.size() < field).
  void padded_string(std::string_view s, size_t field) {
    size_t n = s.size() < field ? s.size() : field;
    out_.insert(out_.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
    zeros(field - n);
  }
  // Pads with zeros to a multiple of `align`.
  void align(size_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back(0);
  }
  // Overwrites a value already written at `at`.
  template <typename T>
  void patch(size_t at, T value) {
    std::memcpy(out_.data() + at, &value, sizeof(T));
  }
  size_t size() const { return out_.size(); }
  std::vector<uint8_t>& data() { return out_; }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

}  // namespace vperf
