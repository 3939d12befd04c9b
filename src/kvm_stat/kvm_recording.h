#pragma once
// The one pass over a kvm stat recording (report, and live's reader thread): every sample of a
// kvm tracepoint (kvm/kvm_tracepoints.h) decoded from its raw data through the recording's
// tracing data into a KvmEvent and added to a KvmExitAnalysis, in perf's record order.
#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "kvm_stat/kvm_exit_analysis.h"
#include "report/sample_replay.h"
#include "tracing/recorded_tracing_data.h"

namespace vperf::kvm {

// What one pass found besides the events it added.
struct KvmPass {
  uint64_t lost = 0;                      // events the kernel dropped (LOST records)
  bool kvm_events_recorded = false;       // the recording has kvm tracepoint events at all
  bool run_entries_recorded = false;      // ... the VMM's KVM_RUN calls
  bool userspace_exits_recorded = false;  // ... kvm:kvm_userspace_exit
  uint64_t undecodable = 0;               // kvm samples without tracing data for their format
  // The reader's error when the samples could be read only up to damage (the analysis holds
  // the events before it).
  std::optional<Error> unreadable;
};

// Samples of the kvm tracepoints into KvmEvents, through the recording's tracing data. The
// fields decode() reads are resolved once per event id (TracepointField), not per sample.
class KvmSampleDecoder {
 public:
  // Tracing data that does not parse is a "vperf: warning: " line on `warnings`.
  explicit KvmSampleDecoder(std::ostream& warnings);

  // The tracing data of a file's feature section, or of a pipe's record (any other record is
  // not tracing data); a later one replaces an earlier one.
  void load_file_tracing_data(const data::PerfDataReader& reader);
  void load_tracing_data(const data::Record& record);

  // The kind of an event of the recording, or nullopt for one kvm stat does not use.
  std::optional<KvmEventKind> kind(const data::EventAttrEntry& entry);
  bool saw_kind(KvmEventKind kind) const { return seen_kinds_.count(kind) != 0; }
  bool saw_any_kind() const { return !seen_kinds_.empty(); }
  uint64_t undecodable() const { return undecodable_; }

  // The sample as a KvmEvent of `kind`; nullopt when its fields cannot be read (counted in
  // undecodable()) or it is a non-KVM_RUN ioctl. An error (with its hint) when a kvm_exit's
  // format has no isa field and `cpuid` (the recording's CPU) is neither Intel nor AMD.
  Result<std::optional<KvmEvent>> decode(const report::ResolvedSample& sample, KvmEventKind kind, std::string_view cpuid);

 private:
  // The fields of one event that decode() reads, in the order kvm_recording.cpp lists them for
  // its kind; a slot is empty when the format lacks the field.
  using EventFields = std::array<std::optional<tracing::TracepointField>, 3>;
  const EventFields& fields_of(uint64_t id, KvmEventKind kind);
  void forget_decoded_formats();

  tracing::RecordedTracingData tracing_;
  std::map<uint64_t, std::optional<KvmEventKind>> kinds_;  // by tracepoint id
  std::unordered_map<uint64_t, EventFields> fields_;       // by tracepoint id
  std::set<KvmEventKind> seen_kinds_;
  uint64_t undecodable_ = 0;
};

// Reads `reader` to its end, adding every kvm event to `analysis` and filling in `pass`, both
// under `lock` when one is given (live's display reads them meanwhile). Tracing data that does
// not parse and the reader's warnings go to `warnings` as "vperf: warning: " lines. The error is
// decode()'s; damage the reader cannot read past ends the pass with pass.unreadable set.
Result<void> analyse_kvm_recording(data::PerfDataReader& reader, KvmExitAnalysis& analysis, KvmPass& pass,
                                   std::mutex* lock, std::ostream& warnings);

// What kvm stat report read, for its messages.
struct KvmReportInput {
  std::string file;         // -i
  std::string record_hint;  // the command that records what report needs
  std::string domain;       // --domain, if given
  std::string pids;         // -p as given (or the domain's VMM pid); empty: every VM
};

// Why the events of a whole pass make no table (no kvm events at all, none of the VMs asked
// for, ...): one error with its fix; nullopt when there is a table to show. Warnings about what
// the table lacks go to `warnings`.
std::optional<Error> kvm_report_problem(const KvmPass& pass, const KvmExitAnalysis& analysis, const KvmReportInput& input,
                                        std::ostream& warnings);

}  // namespace vperf::kvm
