#pragma once
// PerfDataReader: reads perf.data written by Linux perf (6.1 and older PERFILE2 writers) or by
// PerfDataWriter, in file mode or pipe mode (`-i -`). Layout: data/perf_data_format.h.
//
// What it does with imperfect input (never a crash, never a read out of bounds, never an
// allocation bigger than what the input holds):
//  - not a perf.data (bad magic, v1, other endianness, header too short): open fails;
//  - a structural impossibility: open (or, in a pipe, read) fails with one line. In a file: the
//    attrs range, an event's ids range, the data, the feature table or a feature section
//    overlapping another or the header; attrs or ids outside the file or not a whole number of
//    entries; an attr whose own size field does not fit its slot. In a pipe: a HEADER_ATTR that
//    does not parse, or a record claiming more than kMaxPipeRecordBytes;
//  - data.size == 0 (perf record killed before it finished): reads to the end of the file,
//    with a warning;
//  - a record cut short or a size that does not fit (truncated or corrupt file): stops there,
//    delivers what was read before it, one warning;
//  - a record whose body does not match its attr, or a record type perf 6.1 does not define:
//    skipped and counted, one warning per kind; COMPRESSED data that does not decompress:
//    the rest of the compressed stream skipped, one warning;
//  - COMPRESSED records (perf record -z): the records they hold are read in their place;
//  - a malformed feature section: that section is ignored, one warning.
// warnings() holds those lines (each one line, no trailing newline).
//
// Order: like perf's ordered_events, records with a timestamp are queued and released at each
// FINISHED_ROUND up to the largest timestamp seen before the previous FINISHED_ROUND, the rest
// at the end; records without a timestamp and perf's user records are delivered when read (a
// FINISHED_ROUND before the records it releases, as perf dumps them).
// ReadOptions::ordered = false delivers everything in file order.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"

namespace vperf::data {

// The most bytes one record of a pipe may take, payload included (HEADER_TRACING_DATA and
// AUXTRACE carry theirs after the record). A file's sizes are bounded by the file; a pipe's
// size is a promise, so a bigger one is refused, and a smaller one is read as bytes arrive
// (a size that lies costs what the stream holds). perf's tracing data is a few MB (kallsyms
// included) and AUXTRACE records one AUX buffer's worth.
inline constexpr uint64_t kMaxPipeRecordBytes = uint64_t{1} << 30;

// RecordView::attr_index of a record without an event.
inline constexpr size_t kNoAttrIndex = SIZE_MAX;

// One record as delivered: parsed, with its bytes as in the input (including the payload of
// HEADER_TRACING_DATA / AUXTRACE) and its event. Valid only during the callback.
struct RecordView {
  const Record& record;
  std::span<const uint8_t> bytes;
  const EventAttrEntry* attr;  // nullptr for perf's user records, or if the input has no attrs
  uint64_t offset;             // byte offset in the file or stream
  size_t attr_index = kNoAttrIndex;  // attr's position in attrs(): the event's index
};
// Return false to stop reading.
using RecordCallback = std::function<bool(const RecordView&)>;

struct ReadOptions {
  bool ordered = true;  // FINISHED_ROUND time ordering, as perf report / perf script (OrderedRecords)
};

struct ReadStats {
  uint64_t records = 0;  // delivered
  uint64_t samples = 0;
  uint64_t rounds = 0;     // FINISHED_ROUND records
  uint64_t lost = 0;       // sum of LOST records' counts
  uint64_t unordered = 0;  // queued records older than what was already released
  uint64_t bad_records = 0;  // skipped: body did not parse for its attr
  uint64_t compressed = 0;   // COMPRESSED records (perf record -z), their records read in their place
  uint64_t unknown_types = 0;  // skipped records of a type perf 6.1 does not define
  bool truncated = false;    // stopped early at a record that did not fit
  std::map<uint32_t, uint64_t> by_type;
};

class PerfDataReader {
 public:
  static Result<PerfDataReader> open_file(const std::filesystem::path& path);
  // Pipe mode from `fd` (not owned): reads the pipe header and the leading user records (attrs,
  // features) now; the rest as read() goes. read() can be called once.
  static Result<PerfDataReader> open_pipe(int fd);
  // Either format, from memory (tests, fuzzing).
  static Result<PerfDataReader> from_bytes(std::vector<uint8_t> bytes);

  PerfDataReader(PerfDataReader&&) noexcept;
  PerfDataReader& operator=(PerfDataReader&&) noexcept;
  ~PerfDataReader();

  bool is_pipe() const;
  // The events, with ids and names (EVENT_DESC or EVENT_UPDATE). In pipe mode it grows as
  // HEADER_ATTR records are read (perf writes them all first, so open_pipe() has them).
  const std::vector<EventAttrEntry>& attrs() const;
  // The event of sample id `id`; with a single attr, that attr whatever the id; else nullptr.
  const EventAttrEntry* attr_for_id(uint64_t id) const;
  const HeaderFeatures& features() const;
  // Feature bits present in the file header (file mode) or seen as records (pipe mode).
  std::vector<int> features_present() const;
  // Names of present features kept only as bytes (in features().other).
  std::vector<std::string> skipped_features() const;
  uint64_t data_offset() const;
  uint64_t data_size() const;  // as the reader will read it (to EOF when the header said 0)

  Result<ReadStats> read(const RecordCallback& callback, ReadOptions options = {});
  const std::vector<std::string>& warnings() const;

 private:
  struct Impl;
  explicit PerfDataReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vperf::data
