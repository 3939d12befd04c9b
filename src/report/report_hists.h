#pragma once
// perf report's histogram: samples grouped into entries by the sort keys, each with its Self
// period (samples whose ip is in it) and, with --children, its Children period (samples with it
// anywhere on the call chain, counted once per sample), sample counts, and the call chains
// below it. One EventHists per event of the file.
//
// Children, as perf's cumulative mode: a sample adds its period to the entry of its ip (Self and
// Children, with the whole chain as call graph) and to the entry of every other frame of its
// chain (Children, with the chain from that frame on as call graph); a frame whose entry the
// sample already reached (recursion) is skipped.
//
// Filters (--comm, --pid, ...) judge a sample by its thread and ip. A filtered sample still
// counts in the total; an entry is hidden when the sample that created it was filtered (perf
// marks entries, not samples): the first sample in file order that reached it, as its own
// symbol or (--children) anywhere in its chain, though chains are spread over entries only at
// finish().
//
// Speed: keys are small integers and pointers (comm interned, Dso and Symbol by address), so
// grouping a sample allocates nothing once its entries exist. The call-chain work (Children of
// every frame, graph trees) is done once per distinct chain, not per sample: add() counts
// samples per (entry, thread, chain) and finish() spreads them over the entries and trees.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/chunked_vector.h"
#include "core/hashed_ids.h"
#include "report/interner.h"
#include "report/profile.h"
#include "report/report_callchain.h"
#include "report/report_options.h"
#include "report/sample_replay.h"

namespace vperf::report {

// What distinguishes entries; fields of keys not sorted on stay zero.
struct EntryKey {
  uint32_t comm = 0;
  int32_t tid = 0;
  int32_t cpu = 0;
  // perf compares DSOs by short name, and symbols by start and end address (sort__sym_cmp): two
  // files of one basename and their functions at the same addresses are one entry.
  uint32_t dso = 0;  // Dso::short_name_id, 0 for none
  bool symbol = false;
  uint64_t address = 0;  // a symbol's start; unresolved: the address perf shows
  uint64_t symbol_end = 0;
  uint32_t trace = 0;    // interned trace output
  uint32_t srcline = 0;  // interned srcline (report_srcline)
  uint32_t inlined = 0;  // an inlined function's entry (--children): its Profile function id + 1
  bool operator==(const EntryKey&) const = default;
};

struct EntryKeyHash {
  size_t operator()(const EntryKey& k) const;
};

// Copies into `to` the fields of `from` that sort key `key` groups by (a symbol: its start or
// unresolved address, and its inlined function).
void copy_key_fields(SortKey key, const EntryKey& from, EntryKey& to);

struct HistEntry {
  EntryKey key;
  // The comm shown in the pid/tid columns, and the one that sizes the comm column: after
  // finish(), the last name of the entry's thread (perf's thread__comm_str(he->thread)).
  uint32_t comm = 0;
  // The thread of the sample that created the entry (perf's he->thread); valid until finish().
  const symbols::Thread* thread = nullptr;
  pid_t pid = -1;
  pid_t tid = -1;
  int32_t cpu = -1;
  char level = '.';
  const symbols::Dso* dso = nullptr;
  const symbols::Symbol* symbol = nullptr;
  uint64_t address = 0;
  uint64_t symbol_offset = 0;  // of the first sample's address in `symbol` (perf's he->ip): a data object's "+0x"
  std::string inlined_name;  // an inlined function's entry: its name (symbol is its owner's)
  uint64_t self_period = 0;
  // self_period by the samples' cpumode (perf -F overhead_sys, _us, _guest_sys, _guest_us).
  uint64_t kernel_period = 0, user_period = 0, guest_kernel_period = 0, guest_user_period = 0;
  uint64_t children_period = 0;
  uint64_t self_samples = 0;
  uint64_t children_samples = 0;
  bool filtered = false;
  uint64_t first_sample = 0;  // the sample (in file order) that first reached it: it decides `filtered`
  uint32_t first_depth = 0;   // where in that sample's chain (0: its own ip, then callers): perf's creation order
  uint32_t chain_tree = CallchainForest::kNone;
  uint32_t max_depth = 0;  // longest chain added to the call graph (perf's callchain max_depth)
};

struct EventHists {
  std::vector<HistEntry> entries;
  uint64_t samples = 0;              // all samples of the event
  uint64_t total_period = 0;
  uint64_t shown_samples = 0;        // samples passing the filters
  uint64_t shown_period = 0;
  bool has_callchains = false;       // the event's samples carry PERF_SAMPLE_CALLCHAIN
  CallchainForest chains;
};

struct HistSettings {
  std::vector<SortKey> sort_keys;
  bool children = false;
  bool callchains = false;   // build call-graph trees
  CallGraphOrder order = CallGraphOrder::Caller;
  SampleFilters filters;
};

// Groups samples of any number of events. The samples' stacks are read from `profile` (the
// SampleReplay's), which must outlive the builder.
class HistBuilder {
 public:
  HistBuilder(HistSettings settings, const Profile& profile);

  // The sample's call chain is its stack (none when SampleReplay did not resolve chains).
  // `trace`: the sample's trace output, interned in traces() (0, "", when not sorting by it).
  void add(size_t event, const ResolvedSample& sample, uint32_t trace = 0);
  // A thread sampled while unnamed (":TID") got its first name: as perf, its entries so far are
  // shown under that name (merged with the name's own entries) once finish() runs.
  void rename_unnamed_comm(std::string_view unnamed, std::string_view comm);
  // Applies the chains counted by add(); call once, after the last sample.
  void finish();
  // Forgets every sample (entries, totals, chains), as a live view does before each refresh;
  // comm and trace ids stay valid.
  void reset();

  std::vector<EventHists>& events() { return events_; }
  const std::vector<EventHists>& events() const { return events_; }
  const Interner& comms() const { return comms_; }
  Interner& traces() { return traces_; }
  const Interner& traces() const { return traces_; }
  const Interner& srclines() const { return srclines_; }
  // Whether perf 6.1 has the entry's srcline when it sizes the column: it looks an entry's up
  // when it first compares it by srcline with a sample's, which happens when a second sample
  // with the same keys before srcline arrives. perf prints the others' cut to the column.
  bool srcline_compared(const EntryKey& key) const;
  const Profile& profile() const { return profile_; }
  const HistSettings& settings() const { return settings_; }

 private:
  EntryKey key_for(uint32_t comm, uint32_t trace, uint32_t srcline, pid_t tid, int32_t cpu, const symbols::Dso* dso,
                   const symbols::Symbol* symbol, uint64_t address, uint32_t inlined = 0) const;
  // The srcline of an address, interned in srclines_ (0 when not sorting by it); asked of the
  // DSO once per address.
  uint32_t srcline_of(const symbols::ResolvedAddress& at);
  // `samples` samples reached the entry of `key`, for srcline_compared.
  void count_srcline_samples(const EntryKey& key, uint64_t samples);
  EntryKey keys_before_srcline(const EntryKey& key) const;
  // Samples with one (event, self entry, comm, tid, pid, cpu, trace, shown, level, stack).
  struct ChainKey {
    uint32_t event;
    uint32_t self;
    uint32_t comm;
    uint32_t trace;
    uint32_t stack;
    int32_t tid;
    int32_t pid;
    int32_t cpu;
    bool shown;
    char level;
    bool operator==(const ChainKey&) const = default;
  };
  struct ChainKeyHash {
    size_t operator()(const ChainKey& key) const;
  };
  void apply_chain(const ChainKey& key, uint64_t period, uint64_t samples, uint64_t first_sample,
                   const symbols::Thread* thread);
  void apply_comm_renames();
  static void merge_into(HistEntry& kept, const HistEntry& other);
  uint32_t entry_for(EventHists& hists, core::HashedIds& index, const EntryKey& key, bool& created);
  bool passes_filters(const ResolvedSample& sample) const;

  HistSettings settings_;
  bool key_trace_ = false, key_srcline_ = false;
  bool key_comm_ = false, key_tid_ = false, key_cpu_ = false, key_dso_ = false, key_sym_ = false;
  std::vector<EventHists> events_;
  std::vector<core::HashedIds> index_;  // per event: its entries by EntryKey
  Interner comms_;
  Interner traces_;
  Interner srclines_;
  struct AddressInDsoHash {
    size_t operator()(const std::pair<const symbols::Dso*, uint64_t>& a) const {
      return std::hash<const void*>()(a.first) ^ (a.second * 0x9e3779b97f4a7c15ULL);
    }
  };
  std::unordered_map<std::pair<const symbols::Dso*, uint64_t>, uint32_t, AddressInDsoHash> srcline_ids_;
  std::unordered_map<EntryKey, uint64_t, EntryKeyHash> srcline_group_samples_;  // by keys_before_srcline
  const Profile& profile_;
  struct ChainCount {
    uint64_t period = 0;
    uint64_t samples = 0;
    uint64_t first_sample = 0;  // of the chain's samples, the first in file order
    const symbols::Thread* thread = nullptr;  // the first sample's
    uint32_t next_of_stack = kNoId;  // the chain with the same stack made before it
  };
  uint64_t sample_serial_ = 0;  // samples added so far
  // The last sample's comm and entry: runs of samples from one task with one key are the
  // common case (a tracepoint recording's bursts), and a comparison costs less than a hash.
  std::string last_comm_text_;
  uint32_t last_comm_ = kNoId;
  struct LastEntry {
    size_t event = SIZE_MAX;
    EntryKey key;
    uint32_t id = kNoId;
  } last_entry_;
  // In first-seen order; in chunks, never copied as it grows (a system-wide profile counts
  // hundreds of thousands: doubling a vector of them was a tenth of its report).
  core::ChunkedVector<std::pair<ChainKey, ChainCount>> chains_;
  // chains_ by stack: the latest chain of each profile stack, then ChainCount::next_of_stack.
  // Stack ids are dense and a new stack has the next one, so a sample with a stack never seen
  // (most of a system-wide profile's) appends here instead of missing the cache in a hash table.
  // A stack many threads share (a kernel path, the idle loop: 388 chains of one stack in a
  // system-wide profile) would make that list long: from kChainsListed chains on, a stack's
  // chains are found by hash in chain_index_.
  struct StackChains {
    uint32_t latest = kNoId;
    uint32_t count = 0;
  };
  static constexpr uint32_t kChainsListed = 8;
  std::vector<StackChains> chains_by_stack_;
  core::HashedIds chain_index_;  // chains_ of the stacks with kChainsListed or more, by ChainKey
  uint32_t find_chain(const ChainKey& key, uint64_t serial, const symbols::Thread* thread);
  // Scratch, kept to avoid allocations: a chain's functions in display order.
  std::vector<uint32_t> chain_functions_;
  std::vector<uint32_t> branch_of_;  // call_graph_branches(), when some function is inlined
  // Entries a chain has reached (recursion counts once), as the chain's serial in each entry's
  // slot: a frame's check is one load, however deep the stack.
  std::vector<std::vector<uint32_t>> reached_by_;  // per event, per entry
  uint32_t chain_serial_ = 0;
  std::unordered_map<pid_t, uint32_t> latest_comm_;  // by tid, for the pid/tid columns
  std::unordered_map<uint32_t, uint32_t> comm_renames_;  // an unnamed thread's ":TID" -> its first name
};

}  // namespace vperf::report
