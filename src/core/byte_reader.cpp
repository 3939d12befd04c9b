#include "core/byte_reader.h"

#include <algorithm>

#include "core/strings.h"

namespace vperf {

Error ByteReader::truncated(std::string_view what, size_t need) const {
  return Error{"truncated " + std::string(what) + " at offset " + hex(offset()) + ": need " +
               std::to_string(need) + " bytes, " + std::to_string(remaining()) + " left"};
}

Result<std::span<const uint8_t>> ByteReader::bytes(size_t n, std::string_view what) {
  std::span<const uint8_t> view;
  if (!take_bytes(n, view)) return truncated(what, n);
  return view;
}

Result<void> ByteReader::skip(size_t n, std::string_view what) {
  if (remaining() < n) return truncated(what, n);
  pos_ += n;
  return {};
}

Result<void> ByteReader::seek(size_t position) {
  if (position > bytes_.size())
    return Error{"seek to " + hex(position) + " past the end (" + hex(bytes_.size()) + ") at offset " +
                 hex(base_)};
  pos_ = position;
  return {};
}

Result<ByteReader> ByteReader::sub(size_t n, std::string_view what) {
  if (remaining() < n) return truncated(what, n);
  ByteReader inner(bytes_.subspan(pos_, n), base_ + pos_);
  pos_ += n;
  return inner;
}

Result<ByteReader> ByteReader::sub_at(uint64_t offset, uint64_t n, std::string_view what) const {
  if (offset > bytes_.size() || n > bytes_.size() - offset)
    return Error{std::string(what) + " [" + hex(base_ + offset) + ", +" + hex(n) + ") lies outside the input (" +
                 hex(base_ + bytes_.size()) + " bytes)"};
  return ByteReader(bytes_.subspan(offset, n), base_ + offset);
}

Result<std::string> ByteReader::c_string_field(size_t max_len, std::string_view what) {
  if (remaining() < max_len) return truncated(what, max_len);
  const uint8_t* start = bytes_.data() + pos_;
  const uint8_t* nul = std::find(start, start + max_len, uint8_t{0});
  if (nul == start + max_len)
    return Error{std::string(what) + " at offset " + hex(offset()) + " is not NUL-terminated within " +
                 std::to_string(max_len) + " bytes"};
  std::string s(reinterpret_cast<const char*>(start), static_cast<size_t>(nul - start));
  pos_ += max_len;
  return s;
}

Result<std::string> ByteReader::c_string(std::string_view what) {
  const uint8_t* start = bytes_.data() + pos_;
  const uint8_t* end = bytes_.data() + bytes_.size();
  const uint8_t* nul = std::find(start, end, uint8_t{0});
  if (nul == end)
    return Error{std::string(what) + " at offset " + hex(offset()) + " is not NUL-terminated before the end"};
  std::string s(reinterpret_cast<const char*>(start), static_cast<size_t>(nul - start));
  pos_ += s.size() + 1;
  return s;
}

}  // namespace vperf
