#pragma once
// Where SampleReplay's records come from: a perf.data file, a perf.data stream on a pipe, or
// (with `top`) a live sampling session. Everything above SampleReplay (report tables, script
// lines, folded stacks, flame graphs, annotate) reads a RecordSource and so works on each.
//
// A source delivers records as data::RecordView, in the order it promises (perf's FINISHED_ROUND
// order for perf.data when ReadOptions::ordered), each with its event's index in attrs(). A
// source that learns events while it is read (a pipe's HEADER_ATTR records, a live session)
// grows attrs() before it delivers the first record of a new event.
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"

namespace vperf::report {

class RecordSource {
 public:
  virtual ~RecordSource() = default;

  // The events so far, in the order records' attr_index counts them.
  virtual const std::vector<data::EventAttrEntry>& attrs() const = 0;
  // Delivers records until the source ends or `on_record` returns false. A file can be read
  // again; a pipe or a live session delivers each record once, so a live source returns after
  // each refresh's worth and is read again for the next one.
  virtual Result<data::ReadStats> read(const data::RecordCallback& on_record, data::ReadOptions options) = 0;
  // What the source could not read (truncation, skipped records), one line each.
  virtual const std::vector<std::string>& warnings() const = 0;
};

// perf.data from a file or a pipe: data::PerfDataReader reads both (PerfDataReader::open_file,
// open_pipe); this gives it the RecordSource face. The reader is not owned.
class PerfDataSource final : public RecordSource {
 public:
  explicit PerfDataSource(data::PerfDataReader& reader) : reader_(reader) {}

  const std::vector<data::EventAttrEntry>& attrs() const override { return reader_.attrs(); }
  Result<data::ReadStats> read(const data::RecordCallback& on_record, data::ReadOptions options) override {
    return reader_.read(on_record, options);
  }
  const std::vector<std::string>& warnings() const override { return reader_.warnings(); }

 private:
  data::PerfDataReader& reader_;
};

}  // namespace vperf::report
