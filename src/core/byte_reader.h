#pragma once
// ByteReader: the one bounds-checked reader of binary input (perf.data, records from the ring
// buffer, anything that came from outside the process). Every read checks the remaining length
// first and fails with an Error naming what was being read and where; nothing ever reads past
// the span, and no read has alignment requirements (values are memcpy'd, native endian).
//
// A reader is a view: it does not own the bytes, which must outlive it. sub() carves out a
// nested reader (a record inside a section, a string inside a record) whose position starts at 0
// but whose offset() still reports the absolute position in the outermost input, for messages.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/error.h"

namespace vperf {

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(std::span<const uint8_t> bytes, uint64_t base_offset = 0)
      : bytes_(bytes), base_(base_offset) {}

  size_t size() const { return bytes_.size(); }
  size_t position() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  // Absolute offset of the current position in the outermost input (for messages).
  uint64_t offset() const { return base_ + pos_; }
  std::span<const uint8_t> bytes() const { return bytes_; }
  std::span<const uint8_t> rest() const { return bytes_.subspan(pos_); }

  Result<uint8_t> u8(std::string_view what = "u8") { return scalar<uint8_t>(what); }
  Result<uint16_t> u16(std::string_view what = "u16") { return scalar<uint16_t>(what); }
  Result<uint32_t> u32(std::string_view what = "u32") { return scalar<uint32_t>(what); }
  Result<uint64_t> u64(std::string_view what = "u64") { return scalar<uint64_t>(what); }

  // The per-record paths' reads (a sample's fields, millions a file): false, reading nothing,
  // when fewer bytes are left; the caller names what it read with truncated(). A Result per
  // field costs a variant built and destroyed each time.
  template <typename T>
  bool take(T& out) noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool take_bytes(size_t n, std::span<const uint8_t>& out) noexcept {
    if (remaining() < n) return false;
    out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

  // Any trivially copyable struct, copied out (no alignment assumptions).
  template <typename T>
  Result<T> read_struct(std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>);
    return scalar<T>(what);
  }

  // The next n bytes, as a view into the input.
  Result<std::span<const uint8_t>> bytes(size_t n, std::string_view what = "bytes");
  // Skips n bytes.
  Result<void> skip(size_t n, std::string_view what = "bytes");
  // Moves to an absolute position within this reader (0..size()).
  Result<void> seek(size_t position);
  // A reader over the next n bytes; this reader moves past them.
  Result<ByteReader> sub(size_t n, std::string_view what = "section");
  // A reader over [offset, offset + n) of this reader's bytes, independent of the position.
  Result<ByteReader> sub_at(uint64_t offset, uint64_t n, std::string_view what = "section") const;

  // A NUL-terminated string within the next max_len bytes (the field's size); consumes all
  // max_len bytes. Fails if no NUL is found within them (a string field must be terminated).
  Result<std::string> c_string_field(size_t max_len, std::string_view what = "string");
  // A NUL-terminated string starting here, up to the end of the reader; consumes it and its NUL.
  Result<std::string> c_string(std::string_view what = "string");

  // "truncated WHAT at offset 0x1a8: need 8 bytes, 3 left"
  Error truncated(std::string_view what, size_t need) const;

 private:
  template <typename T>
  Result<T> scalar(std::string_view what) {
    T value;
    if (!take(value)) return truncated(what, sizeof(T));
    return value;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  uint64_t base_ = 0;
};

}  // namespace vperf
