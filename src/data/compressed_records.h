#pragma once
// perf record -z: the ring buffers' records written through zstd into PERF_RECORD_COMPRESSED
// records. perf keeps one zstd stream for the whole recording and flushes it (never ends a
// frame) after each batch, so a COMPRESSED record's payload can end anywhere in the stream and
// its decompressed bytes anywhere in a record: the rest waits for the next one (perf's
// decomp_last_rem). libzstd is loaded the first time a file needs it.
//
// Nothing in a payload bounds what it decompresses to: each payload's output is held to
// `limit` bytes (perf allocates the recording's ring size, the COMPRESSED feature's mmap_len,
// per record), and each record found must be a whole perf_event_header of at least 8 bytes.
#include <zstd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"

namespace vperf::data {

class CompressedRecords {
 public:
  static Result<CompressedRecords> open();

  // Decompresses one COMPRESSED record's payload (its bytes after the 8-byte header) and calls
  // `record` for each record completed by it, in stream order.
  Result<void> feed(std::span<const uint8_t> payload, uint64_t limit,
                    const std::function<void(std::span<const uint8_t>)>& record);
  // Bytes of a record begun and not finished (a file that ends there was cut short).
  size_t left_over() const { return pending_.size(); }

 private:
  struct Library {
    decltype(&::ZSTD_createDStream) create = nullptr;
    decltype(&::ZSTD_freeDStream) free = nullptr;
    decltype(&::ZSTD_initDStream) init = nullptr;
    decltype(&::ZSTD_decompressStream) decompress = nullptr;
    decltype(&::ZSTD_isError) is_error = nullptr;
    decltype(&::ZSTD_getErrorName) error_name = nullptr;
  };
  Library zstd_;
  std::shared_ptr<ZSTD_DStream> stream_;
  std::vector<uint8_t> pending_;  // decompressed bytes not yet a whole record
};

// perf record -z's writer side: one stream at `level` (1-22), each batch flushed into the
// payloads of COMPRESSED records (at most `max_payload` bytes each).
class RecordCompressor {
 public:
  static Result<RecordCompressor> open(int level);
  Result<void> compress(std::span<const uint8_t> records, size_t max_payload,
                        const std::function<Result<void>(std::span<const uint8_t>)>& payload);

 private:
  struct Library {
    decltype(&::ZSTD_createCStream) create = nullptr;
    decltype(&::ZSTD_freeCStream) free = nullptr;
    decltype(&::ZSTD_initCStream) init = nullptr;
    decltype(&::ZSTD_compressStream) compress = nullptr;
    decltype(&::ZSTD_flushStream) flush = nullptr;
    decltype(&::ZSTD_isError) is_error = nullptr;
  };
  Library zstd_;
  std::shared_ptr<ZSTD_CStream> stream_;
};

}  // namespace vperf::data
