#include "pmc/xz_text.h"

#include <lzma.h>

#include <array>
#include <memory>

namespace vperf::events {

namespace {

constexpr std::string_view kXzMagic{"\xFD" "7zXZ\0", 6};

std::string lzma_error_text(lzma_ret ret) {
  switch (ret) {
    case LZMA_FORMAT_ERROR: return "not xz data";
    case LZMA_OPTIONS_ERROR: return "unsupported xz options";
    case LZMA_DATA_ERROR: return "corrupt xz data";
    case LZMA_BUF_ERROR: return "truncated xz data";
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_MEMLIMIT_ERROR: return "the xz stream needs more decoder memory than vperf allows";
    default: return "liblzma error " + std::to_string(static_cast<int>(ret));
  }
}

struct LzmaStreamEnd {
  void operator()(lzma_stream* s) const { lzma_end(s); }
};

}  // namespace

bool has_xz_magic(std::string_view bytes) { return bytes.substr(0, kXzMagic.size()) == kXzMagic; }

Result<std::string> decompress_xz(std::string_view bytes, size_t max_bytes, const std::string& source) {
  if (!has_xz_magic(bytes)) return Error{source + ": not xz data (no xz header)"};
  lzma_stream stream = LZMA_STREAM_INIT;
  // LZMA_CONCATENATED: several streams back to back are one text, as `xz -d` reads them.
  lzma_ret ret = lzma_stream_decoder(&stream, kXzDecoderMemoryLimit, LZMA_CONCATENATED);
  if (ret != LZMA_OK) return Error{source + ": " + lzma_error_text(ret)};
  std::unique_ptr<lzma_stream, LzmaStreamEnd> owner(&stream);

  stream.next_in = reinterpret_cast<const uint8_t*>(bytes.data());
  stream.avail_in = bytes.size();
  std::string out;
  std::array<uint8_t, 64 * 1024> chunk{};
  for (;;) {
    stream.next_out = chunk.data();
    stream.avail_out = chunk.size();
    // All input is present, so LZMA_FINISH from the start: the decoder reports a stream cut
    // short as LZMA_BUF_ERROR instead of waiting for more.
    ret = lzma_code(&stream, LZMA_FINISH);
    size_t produced = chunk.size() - stream.avail_out;
    if (out.size() + produced > max_bytes)
      return Error{source + ": decompresses to more than " + std::to_string(max_bytes) + " bytes"};
    out.append(reinterpret_cast<const char*>(chunk.data()), produced);
    if (ret == LZMA_STREAM_END) return out;
    if (ret != LZMA_OK) return Error{source + ": " + lzma_error_text(ret)};
  }
}

}  // namespace vperf::events
