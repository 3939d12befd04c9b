#pragma once
// perf's raw dump (`perf script -D`, `perf report -D`, --dump-raw-trace), as perf 6.1 prints it:
// each record as it is processed (perf's user records when read, kernel records in FINISHED_ROUND
// order), in this shape:
//
//   <blank line>
//   0x2a0@perf.data [0x68]: event: 10              offset@path (`pipe` for a stream), size, type
//   .
//   . ... raw event: size 104 bytes                the record's header.size bytes, 16 a line:
//   .  0000:  0a 00 00 00 02 00 68 00 ...  ......h. hex, then printable ASCII or '.'
//   <blank line>
//   CPU TIME 0x2a0 [0x68]: PERF_RECORD_MMAP2 ...   the CPU and time perf parsed for the record
//                                                 (each if any event samples it; "-1 -1" for a
//                                                 kernel record without sample_id_all), then
//                                                 what perf's handler prints for its type
//
// A sample's text is dump_sample's (pid/tid, ip, period, addr, the callchain, user and interrupt
// registers, the user stack's size and offset, weight, data source, ...), then the two lines
// perf's machine__resolve adds: the thread (comm:tid) and the DSO of the ip. FINISHED_ROUND is
// followed by an empty line. Records perf's command does not handle end in ": unhandled!"
// (`perf report` handles neither THREAD_MAP nor CPU_MAP; `perf script` both).
//
// `perf report -D` starts with two '#' lines and ends with the record counts
// (aggregated_stats); `perf script -D` prints each sample's script line after its dump.
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "report/sample_replay.h"
#include "symbols/machines.h"

namespace vperf::report {

// Whose handlers the dump follows: perf script's or perf report's.
enum class RawDumpCommand { Script, Report };

class RawDump {
 public:
  // `path` is what the dump names the input by (perf: the -i argument); a pipe is "pipe".
  RawDump(const data::PerfDataReader& reader, std::string path, RawDumpCommand command);

  // Appends one record's dump. For a SAMPLE, sample_location() must follow (perf prints the
  // thread and DSO lines as it resolves the sample).
  void append_record(const data::RecordView& view, std::string& out);
  // The thread and DSO lines of a sample, once the replay resolved it.
  void append_sample_location(const ResolvedSample& sample, std::string& out);
  // Samples seen so far, by event index (what report's per-event stats count).
  const std::map<size_t, uint64_t>& samples_per_event() const { return samples_per_event_; }

 private:
  void append_timestamp(const data::RecordView& view, std::string& out) const;
  void append_body(const data::RecordView& view, std::string& out);
  void append_sample(const data::RecordView& view, std::string& out) const;
  void append_read(const data::RecordView& view, std::string& out) const;

  const data::PerfDataReader& reader_;
  std::string path_;
  RawDumpCommand command_;
  size_t attrs_seen_ = 0;  // pipe mode: the events perf knows when it dumps a record
  std::map<size_t, uint64_t> samples_per_event_;
};

// perf_event__fprintf's text of a task or map record, as perf script --show-task-events and
// --show-mmap-events print it after the line's start: "PERF_RECORD_COMM exec: sh:9120/9120",
// "PERF_RECORD_FORK(9122:9122):(9120:9120)", "PERF_RECORD_MMAP2 9120/9120: [...]: r-xp FILE",
// ending in a newline. False (nothing appended) for any other record.
bool append_task_or_map_event(const data::Record& record, std::string& out);

// The two comment lines perf report prints first (with -D too).
std::string_view report_header_hint();

// perf report -D's closing table: "Aggregated stats:", the count of each record type read (and
// the TOTAL), then "<event> stats:" with the samples of each event that has any.
// `event_names` are the names by event index.
std::string aggregated_stats(const data::ReadStats& stats, const std::map<size_t, uint64_t>& samples_per_event,
                             const std::vector<std::string>& event_names);

// perf report --stats: the closing table of -D without the dump, the samples counted by event
// as perf's hists count them (every SAMPLE of the event, whatever it resolves to).
Result<std::string> record_stats(data::PerfDataReader& reader);

// The whole of `perf report -D` for `reader` (named `path`: the -i argument, or "pipe"), written
// to `out` as it goes. An Error when the records cannot be read past a point the reader warns
// about (what was dumped before stays written).
Result<data::ReadStats> write_report_raw_dump(data::PerfDataReader& reader, symbols::Machines& machines,
                                              const std::string& path, std::ostream& out);

}  // namespace vperf::report
