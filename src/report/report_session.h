#pragma once
// One `vperf report` pass over a perf.data: SampleReplay's samples grouped into perf report's
// histograms (report_hists.h), per event, with the counts perf prints above them (lost samples,
// samples and event count per event) and the reader's warnings.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "report/profile.h"
#include "report/report_hists.h"
#include "report/report_options.h"
#include "symbols/machines.h"
#include "tracing/tracepoint_decoder.h"
#include "unwind/user_stack_unwinder.h"

namespace vperf::report {

struct ReportEvent {
  std::string name;  // as perf report names it ("cpu-clock", "sched:sched_switch")
  uint64_t sample_type = 0;
};

// How the options resolved against the file (perf's defaults depend on what it holds).
struct ReportLayout {
  std::vector<SortKey> sort_keys;
  bool children = false;    // Children + Self columns
  bool call_graph = false;  // graphs printed under entries
  CallGraphOrder order = CallGraphOrder::Caller;
  // With -F (both empty without it), as perf sets them up: the columns are -F's fields then
  // -s's keys it lacks; entries are ordered by -s's keys then -F's fields, a number largest
  // first.
  std::vector<OutputField> columns;
  std::vector<OutputField> order_by;
};

// Each task's counts from PERF_RECORD_READ (record -s: an inherited counter reports its count
// as its task exits, once per CPU it was opened on), summed as perf report -T sums them: tasks in
// the order of their first READ, events likewise, 0 where a task has none of an event.
struct TaskCounts {
  struct Row {
    uint32_t pid = 0, tid = 0;
    std::vector<uint64_t> values;  // by `events`
  };
  std::vector<size_t> events;  // indexes into ReportData::events
  std::vector<Row> rows;
  void add(uint32_t pid, uint32_t tid, size_t event, uint64_t value);
};

struct ReportData {
  std::vector<ReportEvent> events;  // one per attr of the file, in file order
  ReportLayout layout;
  std::unique_ptr<Profile> profile;    // the frames, functions and stacks the histograms name
  std::unique_ptr<HistBuilder> hists;  // hists->events()[i] belongs to events[i] (may be shorter)
  uint64_t lost_samples = 0;           // PERF_RECORD_LOST_SAMPLES (perf's "Total Lost Samples")
  uint64_t lost_events = 0;            // PERF_RECORD_LOST: events the kernel dropped
  TaskCounts task_counts;              // PERF_RECORD_READ (record -s), for report -T
  // The file's event groups of several members that fit its events (GROUP_DESC).
  std::vector<data::EventGroupDesc> groups;
  data::ReadStats stats;
  std::vector<std::string> warnings;   // the reader's (truncation, ...)
  // --sort trace: samples whose trace text is their fields, their print fmt being unsafe on them
  // (tracing::TracepointDecoder::printed_from_fields); the report is then incomplete.
  uint64_t traces_printed_from_fields = 0;

  const EventHists* event_hists(size_t event) const;
};

// The layout perf report uses for these options on a file with these events. From a pipe,
// perf 6.1 never shows Children (it decides before the events are known), but a graph it
// would have shown with children keeps the caller order, and the default sort keys are never
// "trace".
ReportLayout resolve_layout(const ReportOptions& options, const std::vector<perf_event_attr>& attrs, bool pipe);

Result<ReportData> build_report(data::PerfDataReader& reader, symbols::Machines& machines, const ReportOptions& options,
                                unwind::UserStackUnwinder* unwinder = nullptr);

}  // namespace vperf::report
