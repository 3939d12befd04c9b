#pragma once
// The one pass every perf.data consumer shares (report, script, annotate, flamegraph): records
// read in perf's time order, task and map records replayed into the machine model
// (src/symbols), and each sample handed on with its thread's comm, its ip resolved and its
// callchain resolved frame by frame, leaf first. Nothing here decides how samples are shown.
//
// The sample's call stack is what perf's callchain cursor holds, as frames of the Profile
// (profile.h) the replay builds: the recorded callchain with its PERF_CONTEXT_* markers turned
// into cpumodes, then, for a sample with a user stack copy (--call-graph dwarf), the user frames
// an unwind::UserStackUnwinder recovers from it. Without a callchain, the ip alone is the one
// frame. This is the one place a callchain is walked; everything else reads the stack.
//
// Each unwound frame whose DSO has DWARF is expanded into its inline chain as perf 6.1's
// append_inlines does with addr2line -i's records: one frame per function of the chain at that
// address, innermost first and the out-of-line function last, all with the same ip. A frame
// named as the address's ELF symbol is that symbol; any other is an inlined function of its
// DWARF name, the out-of-line one included (glibc's __libc_start_main@@GLIBC_2.34 is
// "__libc_start_main_impl (inlined)" in perf, update_active.constprop.0 "update_active
// (inlined)"). perf does this for unwound frames only, not for a recorded (frame-pointer)
// callchain, and so does vperf.
//
// Speed: each (address space, cpumode, address) of the host is resolved once and remembered
// until a task or map record changes an address space (MMAP, MMAP2, COMM, FORK, EXIT), so a
// profile of a hot loop resolves its few hundred addresses once instead of ~10 per sample.
// Above that, each distinct recorded callchain (with its ip, address space and cpumode) is
// walked once in the same span: a sample whose chain was seen gets its stack by one hash of
// its words, however deep the stack (a profile has a few thousand distinct chains in 1M
// samples). Guest addresses (their machines go by pid) and unwound user stacks are resolved
// each time.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/hashed_ids.h"
#include "core/own_mapping_allocator.h"
#include "data/perf_data_reader.h"
#include "report/profile.h"
#include "report/record_source.h"
#include "report/report_options.h"
#include "symbols/machines.h"
#include "unwind/user_stack_unwinder.h"

namespace vperf::report {

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
  size_t event = data::kNoAttrIndex;  // the event's index among the source's attrs()
  const Profile* profile = nullptr;   // the replay's: what ip_frame and stack name
  uint32_t ip_frame = kNoId;          // the sample ip as a profile frame
  // The call stack (ReplayOptions::resolve_chain): a profile stack, leaf first; {ip} alone
  // without a callchain.
  uint32_t stack = kNoId;
  // How the stack came about, for perf script's cursor rules: the frames at its start taken from
  // the recorded callchain (the rest were unwound), and how many of them came before the first
  // callchain marker perf does not know (the kernel ends some tracepoint callchains with -1);
  // kNoId when there is none.
  uint32_t recorded_frames = 0;
  uint32_t unknown_marker_at = kNoId;
  // Whether the machines' SampleScope shows this sample (perf kvm: a host sample is filtered
  // unless --host). Only readers that count filtered samples see one that is not
  // (ReplayOptions::out_of_scope_samples).
  bool in_scope = true;

  std::span<const uint32_t> frames() const {
    return profile && stack != kNoId ? profile->stack(stack) : std::span<const uint32_t>{};
  }

  // The frames perf's callchain cursor holds for a sample of an event with callchains: what
  // perf script prints under the sample line, and so what stackcollapse-perf.pl folds. perf's
  // add_callchain_ip knows only the HV, KERNEL and USER markers; any other one before
  // `max_stack` frames (the kernel ends some callchains with -1) discards the recorded part. An
  // empty recorded callchain holds nothing (not the lone ip frames() shows) unless user frames
  // were unwound (`user_stacks_unwound`: the reader has an unwinder). --max-stack applies to
  // the recorded part and to the unwound part separately, as perf's thread__resolve_callchain:
  // perf walks the recorded callchain from its root in caller order (`root_first`: report's
  // caller graphs), so the cut keeps the recorded part's root-most frames then; the unwinder
  // always stops after the leaf-most ones.
  struct CursorFrames {
    std::span<const uint32_t> recorded, unwound;
  };
  CursorFrames cursor(size_t max_stack, bool user_stacks_unwound, bool root_first = false) const;
};

struct ReplayOptions {
  bool ordered = true;                       // perf's FINISHED_ROUND ordering
  bool resolve_chain = true;                 // false: ResolvedSample::stack stays kNoId (cheaper)
  unwind::UserStackUnwinder* unwinder = nullptr;  // nullptr: user stack copies are ignored
  bool inline_frames = true;  // unwound frames expanded into their inline chains (perf's --inline)
  // Hand on the samples the machines' SampleScope leaves out too, marked (report counts them in
  // its totals); otherwise they are dropped, as perf script drops them.
  bool out_of_scope_samples = false;
  // The consumer is done with a sample's frames and stacks when its callback returns and keeps
  // no id of them (script): the profile, and the caches that name its ids, are emptied between
  // samples whenever the profile holds more than kForgottenProfileBytes. Real programs' stacks
  // rarely repeat, and keeping every one made script hold twice perf's memory.
  bool forget_samples = false;
};

// Return false to stop.
using SampleCallback = std::function<bool(const ResolvedSample&)>;
// Sees every record before it is replayed (LOST, THROTTLE, ...); optional.
using RecordObserver = std::function<void(const data::RecordView&)>;

class SampleReplay {
 public:
  // Frames and stacks go into a profile of the replay's own, or into `profile` (which must
  // outlive the replay's use of it: consumers keep it to read what the samples named).
  explicit SampleReplay(symbols::Machines& machines, ReplayOptions options = {});
  SampleReplay(symbols::Machines& machines, Profile& profile, ReplayOptions options = {});

  void set_record_observer(RecordObserver observer) { observer_ = std::move(observer); }
  // Hears a thread's first name replacing the ":TID" it was sampled under (Machine::process_comm),
  // for report, which shows those samples under the new name as perf does.
  using CommNamedObserver = std::function<void(std::string_view unnamed, std::string_view comm)>;
  void set_comm_named_observer(CommNamedObserver observer) { comm_named_ = std::move(observer); }
  // Reads `source` to its end (or until on_sample returns false). Can be called again with more
  // records (a live source's next refresh): the machine model and the profile carry over.
  Result<data::ReadStats> run(RecordSource& source, const SampleCallback& on_sample);
  Result<data::ReadStats> run(data::PerfDataReader& reader, const SampleCallback& on_sample);

  // The profile stack of perf's callchain cursor for `sample` (ResolvedSample::cursor, user
  // frames if this replay unwinds): what perf report counts
  // and perf script prints for an event with callchains. sample.stack when the cursor holds
  // every frame; the sample's own stack for an event without callchains (its lone ip).
  uint32_t cursor_stack(const ResolvedSample& sample, size_t max_stack = kPerfMaxStack, bool root_first = false);

  // Samples the machines' SampleScope left out so far (handed on or not).
  uint64_t out_of_scope_samples() const { return out_of_scope_; }
  // One line for a reader whose samples the scope left out, every one of them, when that was
  // the host's (vperf kvm without --host): why, and how to sample a guest here. nullopt
  // otherwise.
  std::optional<std::string> scope_note() const;

  Profile& profile() { return *profile_; }
  const Profile& profile() const { return *profile_; }
  // The walked chains kept to skip walking a chain seen before are forgotten when they would
  // take more than this, 4 MiB (their words, entries and index): a profile whose chains rarely
  // repeat (junk frames, JITs, system-wide) gains little from them and held them all.
  static constexpr size_t kChainCacheBytes = size_t{4} << 20;
  // A forgetting replay's profile is emptied past 1 MiB: small enough that its tables stay in the
  // CPU's caches. Resolving a forgotten address again costs less than the cache misses of a
  // larger profile: script of a system-wide profile took 0.77x the CPU time with 1 MiB than
  // with 8 MiB, 0.92x on xz, and within noise on python, node and DWARF profiles.
  static constexpr size_t kForgottenProfileBytes = size_t{1} << 20;
  size_t chain_cache_bytes() const;

  // The cpumode a callchain marker switches to; nullopt for an address.
  static std::optional<uint8_t> context_mode(uint64_t entry);

 private:
  void register_idle_thread();
  // Empties the resolved addresses and walked chains (they name profile ids).
  void forget_resolved();
  void on_record(const data::RecordView& view, const SampleCallback& on_sample, bool& keep_going);
  symbols::Machine* machine_for(uint8_t cpumode, pid_t pid);
  void walk_callchain(const data::RecordView& view, const data::Sample& sample, ResolvedSample& out);
  // The profile frames of one address, appended to `frames`: its inline chain when
  // `with_inlines` (unwound frames) and it has one, else the plain frame.
  void append_frames(const ResolvedSample& sample, uint8_t mode, uint64_t ip, bool with_inlines,
                     std::vector<uint32_t>& frames);
  // What walking a recorded callchain gave (walk_callchain), kept per distinct chain.
  struct ChainWalk {
    uint32_t ip_frame;
    uint32_t stack;
    uint32_t recorded_frames;
    uint32_t unknown_marker_at;
  };
  // The versions of the MapSets a sample's user frames (its thread's; 0 without a thread) and
  // kernel frames (the host kernel's) resolve in.
  static uint64_t user_space(const ResolvedSample& sample) { return sample.thread && sample.thread->maps ? sample.thread->maps->version() : 0; }
  uint64_t kernel_space() const { return machines_.host().kernel_maps().version(); }
  uint64_t chain_hash(const ResolvedSample& sample) const;
  // The walk of this sample's chain when an earlier sample had the same one, else nullptr.
  const ChainWalk* seen_chain(const ResolvedSample& sample, uint64_t hash) const;
  void remember_chain(const ResolvedSample& sample, uint64_t hash, const ChainWalk& walk);
  // The inline chain at an address, innermost first, as the names of inlined functions ("" for
  // a frame that is the ELF symbol itself); empty when the DSO has no DWARF for it. Looked up
  // once per address.
  const std::vector<std::string>& inline_chain_at(const symbols::ResolvedAddress& at);

  symbols::Machines& machines_;
  std::unique_ptr<Profile> own_profile_;
  Profile* profile_;
  ReplayOptions options_;
  RecordObserver observer_;
  CommNamedObserver comm_named_;
  std::string unnamed_comm_;
  uint64_t out_of_scope_ = 0;
  uint64_t in_scope_ = 0;
  std::vector<uint32_t> frames_;  // the sample being walked, kept to avoid allocations
  std::vector<uint32_t> cursor_frames_;  // cursor_stack's, kept likewise
  // Resolved addresses: (address space, cpumode, address, with inlines) -> a run of
  // resolved_frames_ (the inlined frames, then the real one). An address space is the version
  // of its MapSet (symbols::MapSet::version), which changes with every change of the maps, so
  // an MMAP, FORK or EXIT of one process leaves every other process's addresses cached (a
  // system-wide recording has thousands of them). Emptied at kResolvedLimit (about 5 MB).
  struct AddressKey {
    uint64_t space;  // the version of the thread's MapSet, or of the host kernel's
    uint64_t ip;
    uint8_t mode;
    bool with_inlines;
    bool operator==(const AddressKey&) const = default;
  };
  static constexpr size_t kResolvedLimit = size_t{1} << 16;
  struct AddressKeyHash {
    size_t operator()(const AddressKey& k) const {
      uint64_t h = k.space * 0x9e3779b97f4a7c15ULL;
      h ^= (k.ip + k.mode + (k.with_inlines ? 0x100 : 0)) * 0xc2b2ae3d27d4eb4fULL;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  struct FrameRun {
    AddressKey key;
    uint32_t first;  // the frame itself when count is 1 (an address without inlines, the most)
    uint32_t count;
  };
  std::vector<FrameRun> resolved_;
  core::HashedIds resolved_ids_;  // resolved_ by AddressKey
  std::vector<uint32_t> resolved_frames_;
  bool uncached_frame_ = false;  // the walk resolved an address resolved_ could not keep
  // Walked chains, found by the hash of (spaces, cpumode, ip, callchain words); their words
  // live in chain_words_. Emptied with resolved_ and at kChainCacheBytes.
  struct ChainEntry {
    uint64_t user_space, kernel_space;  // the MapSets' versions (0: no thread)
    uint8_t mode;
    uint32_t words_at, words_count;  // ip, then the callchain
    ChainWalk walk;
  };
  core::HashedIds chain_index_;
  // Reserved whole at the first chain (own mappings of huge pages: resident as far as written).
  std::vector<ChainEntry, core::OwnMappingAllocator<ChainEntry, true>> chains_;
  std::vector<uint64_t, core::OwnMappingAllocator<uint64_t, true>> chain_words_;
  // The last sample's thread, by tid (samples come in runs of one thread); forgotten with
  // resolved_. Any tid may come, -1 too (a system-wide sample the kernel could not attribute).
  bool last_thread_known_ = false;
  pid_t last_tid_ = 0;
  const symbols::Thread* last_thread_ = nullptr;
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
