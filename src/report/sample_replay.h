#pragma once
// The one pass every perf.data consumer shares (report, script, annotate, flamegraph): records
// read in perf's time order, task and map records replayed into the machine model
// (src/symbols), and each sample handed on with its thread's comm, its ip resolved and its
// callchain resolved frame by frame, leaf first. Nothing here decides how samples are shown.
//
// Callchain frames are what perf's callchain cursor holds: the recorded callchain with its
// PERF_CONTEXT_* markers turned into cpumodes, then, for a sample with a user stack copy
// (--call-graph dwarf), the user frames an unwind::UserStackUnwinder recovers from it. Without a
// callchain, the ip alone is the one frame.
//
// Each unwound frame whose DSO has DWARF is expanded into its inline chain as perf 6.1's
// append_inlines does: one frame per function inlined at that address (innermost first, each
// with inlined_name set and the same ip), then the real frame. perf does this for unwound
// frames only, not for a recorded (frame-pointer) callchain, and so does vperf.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "symbols/machines.h"
#include "unwind/user_stack_unwinder.h"

namespace vperf::report {

struct ChainFrame {
  uint64_t ip = 0;  // as recorded (or unwound)
  uint8_t cpumode = PERF_RECORD_MISC_USER;
  symbols::ResolvedAddress at;
  // Non-empty for a frame added for an inlined call site: the inlined function's name (at then
  // holds the enclosing real frame's address and symbol), as perf's inline_list. It points
  // into the SampleReplay's cache of inline chains: valid while the SampleReplay lives.
  std::string_view inlined_name;
};

struct ResolvedSample {
  const data::RecordView& view;  // the record and its event; valid only during the callback
  const data::Sample& sample;
  pid_t pid = -1;
  pid_t tid = -1;
  uint32_t cpu = 0;   // PERF_SAMPLE_CPU, 0 without it
  uint64_t time = 0;  // PERF_SAMPLE_TIME, 0 without it
  uint8_t cpumode = PERF_RECORD_MISC_USER;
  std::string_view comm{};  // the thread's, or ":TID" as perf shows an unnamed thread
  const symbols::Thread* thread = nullptr;  // the host thread (for a guest sample: the vCPU thread)
  symbols::ResolvedAddress at{};   // the sample ip
  std::vector<ChainFrame> chain{};  // leaf first; {ip} alone without a callchain
};

struct ReplayOptions {
  bool ordered = true;                       // perf's FINISHED_ROUND ordering
  bool resolve_chain = true;                 // false: ResolvedSample::chain stays empty (cheaper)
  unwind::UserStackUnwinder* unwinder = nullptr;  // nullptr: user stack copies are ignored
  bool inline_frames = true;  // unwound frames expanded into their inline chains (perf's --inline)
};

// Return false to stop.
using SampleCallback = std::function<bool(const ResolvedSample&)>;
// Sees every record before it is replayed (LOST, THROTTLE, ...); optional.
using RecordObserver = std::function<void(const data::RecordView&)>;

class SampleReplay {
 public:
  explicit SampleReplay(symbols::Machines& machines, ReplayOptions options = {});

  void set_record_observer(RecordObserver observer) { observer_ = std::move(observer); }
  Result<data::ReadStats> run(data::PerfDataReader& reader, const SampleCallback& on_sample);

  // The cpumode a callchain marker switches to; nullopt for an address.
  static std::optional<uint8_t> context_mode(uint64_t entry);

 private:
  void on_record(const data::RecordView& view, const SampleCallback& on_sample, bool& keep_going);
  symbols::Machine* machine_for(uint8_t cpumode, pid_t pid);
  void resolve_chain(const data::RecordView& view, const data::Sample& sample, ResolvedSample& out);
  // The names of the functions inlined at an address of a DSO, innermost first (empty when
  // nothing is inlined there or the DSO has no DWARF); looked up once per address.
  const std::vector<std::string>& inlined_at(const symbols::ResolvedAddress& at);

  symbols::Machines& machines_;
  ReplayOptions options_;
  RecordObserver observer_;
  std::string unnamed_comm_;
  struct InlineKey {
    const symbols::Dso* dso;
    uint64_t address;
    bool operator==(const InlineKey&) const = default;
  };
  struct InlineKeyHash {
    size_t operator()(const InlineKey& k) const {
      return std::hash<const void*>()(k.dso) ^ (std::hash<uint64_t>()(k.address) * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::unordered_map<InlineKey, std::vector<std::string>, InlineKeyHash> inlined_;
};

}  // namespace vperf::report
