#include "session/live_record_source.h"

#include <linux/perf_event.h>

#include <variant>

namespace vperf::session {

LiveRecordSource::LiveRecordSource(perf::SamplingSession& session, std::vector<data::RecordBytes> preamble)
    : session_(session), preamble_(std::move(preamble)) {
  for (size_t i = 0; i < session_.events().size(); ++i) {
    attrs_.push_back({session_.events()[i].attr, session_.events()[i].name, session_.ids()[i]});
    formats_.push_back(data::SampleFormat::from_attr(session_.events()[i].attr));
    for (uint64_t id : session_.ids()[i]) attr_of_id_.emplace(id, i);
  }
}

// Which event a record belongs to: with one event, that one; with several, the records carry
// PERF_SAMPLE_IDENTIFIER (RecordAttrOptions::several_events), whose id names it.
size_t LiveRecordSource::attr_index_of(std::span<const uint8_t> bytes) const {
  if (attrs_.size() <= 1) return attrs_.empty() ? data::kNoAttrIndex : 0;
  if (std::optional<uint64_t> id = data::peek_sample_id(bytes, formats_.front()))
    if (auto it = attr_of_id_.find(*id); it != attr_of_id_.end()) return it->second;
  return data::kNoAttrIndex;
}

Result<data::ReadStats> LiveRecordSource::read(const data::RecordCallback& on_record, data::ReadOptions) {
  data::ReadStats stats;
  bool stopped = false;
  auto deliver = [&](std::span<const uint8_t> bytes) {
    if (stopped) return;
    const size_t index = attr_index_of(bytes);
    const data::EventAttrEntry* attr = index == data::kNoAttrIndex ? nullptr : &attrs_[index];
    Result<data::Record> record = data::parse_record(bytes, index == data::kNoAttrIndex ? nullptr : &formats_[index]);
    const uint64_t offset = offset_;
    offset_ += bytes.size();
    if (!record) {
      ++stats.bad_records;
      warnings_.push_back("a record of the live session did not parse: " + record.error().describe());
      return;
    }
    ++stats.records;
    if (std::holds_alternative<data::Sample>(record->body)) ++stats.samples;
    if (const auto* lost = std::get_if<data::LostRecord>(&record->body)) stats.lost += lost->lost;
    if (!on_record(data::RecordView{*record, bytes, attr, offset, index})) stopped = true;
  };
  std::vector<data::RecordBytes> preamble = std::move(preamble_);
  preamble_.clear();
  for (const data::RecordBytes& record : preamble) deliver(record);
  if (Result<size_t> drained = session_.drain(deliver); !drained) return drained.error();
  return stats;
}

}  // namespace vperf::session
