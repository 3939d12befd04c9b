#pragma once
// xz-compressed text (the .xz files of vperf's bundled perfmon tables, pmc/data/perfmon, and
// of a --perfmon checkout that keeps them that way), decompressed in memory with liblzma.
//
// The input may be damaged or hostile, so the output is bounded: decompression stops with an
// error once it would pass `max_bytes` (an xz bomb must not exhaust memory), and the decoder
// may use at most kXzDecoderMemoryLimit: enough for any xz preset (`xz -9` needs 65 MiB; the
// bundle is written with a 4 MiB dictionary), while a header asking for more is refused rather
// than allocated. Concatenated xz streams are read as one text, as xz(1) does; trailing bytes
// that are not an xz stream are an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace vperf::events {

inline constexpr uint64_t kXzDecoderMemoryLimit = uint64_t{96} << 20;

// Whether `bytes` starts with the xz stream magic (FD 37 7A 58 5A 00).
bool has_xz_magic(std::string_view bytes);

// The decompressed text; `source` names the input in messages.
Result<std::string> decompress_xz(std::string_view bytes, size_t max_bytes, const std::string& source);

}  // namespace vperf::events
