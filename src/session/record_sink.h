#pragma once
// Where a recording's records go: the PerfDataWriter, with the counts perf prints when it
// ends (records, samples, and what PERF_RECORD_LOST says the kernel dropped). Records from the
// rings arrive as bytes; records vperf makes itself (synthesized maps, monitor samples) as
// data::Record, encoded by data::build_record, the one record encoder.
//
// A write that fails is kept, not thrown at once: a ring is drained to its end either way, and
// check() then ends the command with the first failure.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"

namespace vperf::session {

struct RecordTally {
  uint64_t records = 0;
  uint64_t samples = 0;
  uint64_t lost_chunks = 0;  // PERF_RECORD_LOST records: the kernel found the ring full
  uint64_t lost = 0;         // the records they say were dropped
};

class RecordSink {
 public:
  // `formats`: the layouts of the file's attrs, to read the LOST records' trailers.
  RecordSink(data::PerfDataWriter& writer, std::vector<data::SampleFormat> formats, std::string path)
      : writer_(writer), formats_(std::move(formats)), path_(std::move(path)) {}

  void write(std::span<const uint8_t> record);
  void write(const data::Record& record, const data::SampleFormat& format);
  void write_all(const std::vector<std::vector<uint8_t>>& records);
  // FINISHED_ROUND: the file is readable up to here.
  void flush_round();
  // Throws UserError for the first write that failed.
  void check() const;

  const RecordTally& tally() const { return tally_; }
  data::PerfDataWriter& writer() { return writer_; }

 private:
  void count(std::span<const uint8_t> record);

  data::PerfDataWriter& writer_;
  std::vector<data::SampleFormat> formats_;
  std::string path_;
  RecordTally tally_;
  std::optional<Error> failure_;
};

// What a PERF_RECORD_LOST says was dropped, read with whichever of `formats` its trailer has;
// nullopt for another record type or a LOST that parses with none of them.
std::optional<data::LostRecord> lost_record(std::span<const uint8_t> record, const std::vector<data::SampleFormat>& formats);

}  // namespace vperf::session
