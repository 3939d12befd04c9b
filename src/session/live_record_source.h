#pragma once
// A running sampling session as a report::RecordSource, so SampleReplay (and everything built on
// it: report tables, folded stacks, annotate) reads live samples as it reads perf.data, and a
// live `top` reuses the whole reading side. Each read() is one refresh: it delivers what the
// rings hold at that moment, in ring order, and returns; the next read() delivers what came
// since. The first read() starts with the `preamble`: the records that describe what existed
// before sampling began (kernel and module maps, the tasks' COMM and MMAP2), as a recording's
// file starts with them.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/perf_data_reader.h"
#include "data/perf_record.h"
#include "data/synthesize.h"
#include "perf/sampling_session.h"
#include "report/record_source.h"

namespace vperf::session {

class LiveRecordSource final : public report::RecordSource {
 public:
  // `session` must outlive the source and be enabled by the caller.
  LiveRecordSource(perf::SamplingSession& session, std::vector<data::RecordBytes> preamble);

  const std::vector<data::EventAttrEntry>& attrs() const override { return attrs_; }
  // ReadOptions::ordered is not applied: a refresh is delivered as the rings hold it.
  Result<data::ReadStats> read(const data::RecordCallback& on_record, data::ReadOptions options) override;
  const std::vector<std::string>& warnings() const override { return warnings_; }

 private:
  size_t attr_index_of(std::span<const uint8_t> bytes) const;

  perf::SamplingSession& session_;
  std::vector<data::EventAttrEntry> attrs_;
  std::vector<data::SampleFormat> formats_;
  std::map<uint64_t, size_t> attr_of_id_;
  std::vector<data::RecordBytes> preamble_;
  std::vector<std::string> warnings_;
  uint64_t offset_ = 0;  // bytes delivered so far: a record's offset in the stream it would make
};

}  // namespace vperf::session
