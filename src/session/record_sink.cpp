#include "session/record_sink.h"

#include <linux/perf_event.h>

#include <cstring>
#include <variant>

namespace vperf::session {

std::optional<data::LostRecord> lost_record(std::span<const uint8_t> record, const std::vector<data::SampleFormat>& formats) {
  if (record.size() < sizeof(perf_event_header)) return std::nullopt;
  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  if (header.type != PERF_RECORD_LOST) return std::nullopt;
  for (const data::SampleFormat& format : formats) {
    Result<data::Record> parsed = data::parse_record(record, &format);
    if (parsed)
      if (const auto* lost = std::get_if<data::LostRecord>(&parsed->body)) return *lost;
  }
  return std::nullopt;
}

void RecordSink::count(std::span<const uint8_t> record) {
  ++tally_.records;
  if (record.size() < sizeof(perf_event_header)) return;
  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  if (header.type == PERF_RECORD_SAMPLE) ++tally_.samples;
  if (std::optional<data::LostRecord> lost = lost_record(record, formats_)) {
    ++tally_.lost_chunks;
    tally_.lost += lost->lost;
  }
}

void RecordSink::write(std::span<const uint8_t> record) {
  count(record);
  if (failure_) return;
  if (Result<void> ok = writer_.write(record); !ok) failure_ = ok.error();
}

void RecordSink::write(const data::Record& record, const data::SampleFormat& format) {
  write(data::build_record(record, &format));
}

void RecordSink::write_all(const std::vector<std::vector<uint8_t>>& records) {
  for (const std::vector<uint8_t>& r : records)
    if (Result<void> ok = writer_.write(r); !ok && !failure_) failure_ = ok.error();
}

void RecordSink::flush_round() {
  if (failure_) return;
  if (Result<void> ok = writer_.flush_round(); !ok) failure_ = ok.error();
}

void RecordSink::check() const {
  if (failure_) throw UserError("cannot write " + path_ + ": " + failure_->describe(), "check the disk space");
}

}  // namespace vperf::session
