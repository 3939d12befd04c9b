#include "data/compressed_records.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/shared_library.h"

namespace vperf::data {

namespace {

Result<SharedLibrary> open_zstd() { return SharedLibrary::open("libzstd.so.1", "install zstd's library: apt-get install libzstd1"); }
constexpr size_t kHeaderBytes = 8;  // struct perf_event_header: u32 type, u16 misc, u16 size

}  // namespace

Result<CompressedRecords> CompressedRecords::open() {
  CompressedRecords r;
  VPERF_TRY(SharedLibrary library, open_zstd());
  VPERF_TRY(library.bind("ZSTD_createDStream", r.zstd_.create));
  VPERF_TRY(library.bind("ZSTD_freeDStream", r.zstd_.free));
  VPERF_TRY(library.bind("ZSTD_initDStream", r.zstd_.init));
  VPERF_TRY(library.bind("ZSTD_decompressStream", r.zstd_.decompress));
  VPERF_TRY(library.bind("ZSTD_isError", r.zstd_.is_error));
  VPERF_TRY(library.bind("ZSTD_getErrorName", r.zstd_.error_name));
  r.stream_.reset(r.zstd_.create(), r.zstd_.free);
  if (!r.stream_ || r.zstd_.is_error(r.zstd_.init(r.stream_.get()))) return Error{"zstd could not start decompressing"};
  return r;
}

Result<void> CompressedRecords::feed(std::span<const uint8_t> payload, uint64_t limit,
                                     const std::function<void(std::span<const uint8_t>)>& record) {
  constexpr size_t kStep = size_t{1} << 16;
  ZSTD_inBuffer input{payload.data(), payload.size(), 0};
  uint64_t produced = 0;
  // Until the payload is used up and the stream holds nothing more for this flush point.
  for (;;) {
    const size_t start = pending_.size();
    pending_.resize(start + kStep);
    ZSTD_outBuffer output{pending_.data() + start, kStep, 0};
    const size_t status = zstd_.decompress(stream_.get(), &output, &input);
    pending_.resize(start + output.pos);
    if (zstd_.is_error(status))
      return Error{std::string("a COMPRESSED record does not decompress: ") + zstd_.error_name(status)};
    produced += output.pos;
    if (produced > limit)
      return Error{"a COMPRESSED record decompresses to more than " + std::to_string(limit) +
                   " bytes, the most its recording's buffers held"};
    if (input.pos == input.size && output.pos < kStep) break;
  }
  size_t at = 0;
  while (pending_.size() - at >= kHeaderBytes) {
    uint16_t size = 0;
    std::memcpy(&size, pending_.data() + at + 6, sizeof size);
    if (size < kHeaderBytes) return Error{"a decompressed record states a size of " + std::to_string(size) + " bytes"};
    if (pending_.size() - at < size) break;
    record(std::span<const uint8_t>(pending_.data() + at, size));
    at += size;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(at));
  return {};
}

Result<RecordCompressor> RecordCompressor::open(int level) {
  RecordCompressor c;
  VPERF_TRY(SharedLibrary library, open_zstd());
  VPERF_TRY(library.bind("ZSTD_createCStream", c.zstd_.create));
  VPERF_TRY(library.bind("ZSTD_freeCStream", c.zstd_.free));
  VPERF_TRY(library.bind("ZSTD_initCStream", c.zstd_.init));
  VPERF_TRY(library.bind("ZSTD_compressStream", c.zstd_.compress));
  VPERF_TRY(library.bind("ZSTD_flushStream", c.zstd_.flush));
  VPERF_TRY(library.bind("ZSTD_isError", c.zstd_.is_error));
  c.stream_.reset(c.zstd_.create(), c.zstd_.free);
  if (!c.stream_ || c.zstd_.is_error(c.zstd_.init(c.stream_.get(), level))) return Error{"zstd could not start compressing"};
  return c;
}

Result<void> RecordCompressor::compress(std::span<const uint8_t> records, size_t max_payload,
                                        const std::function<Result<void>(std::span<const uint8_t>)>& payload) {
  std::vector<uint8_t> out(max_payload);
  ZSTD_inBuffer input{records.data(), records.size(), 0};
  // Each output buffer filled becomes one payload; the batch ends with a flush, so a reader has
  // every record of it once it has read the last payload.
  bool flushed = false;
  while (!flushed) {
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    size_t status = 0;
    if (input.pos < input.size) {
      status = zstd_.compress(stream_.get(), &output, &input);
    } else {
      status = zstd_.flush(stream_.get(), &output);
      flushed = status == 0;
    }
    if (zstd_.is_error(status)) return Error{"zstd could not compress the records"};
    if (output.pos > 0) VPERF_TRY(payload(std::span<const uint8_t>(out.data(), output.pos)));
  }
  return {};
}

}  // namespace vperf::data
