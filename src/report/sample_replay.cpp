#include "report/sample_replay.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <variant>

namespace vperf::report {

SampleReplay::SampleReplay(symbols::Machines& machines, ReplayOptions options)
    : machines_(machines), own_profile_(std::make_unique<Profile>()), profile_(own_profile_.get()), options_(options) {
  register_idle_thread();
}

SampleReplay::SampleReplay(symbols::Machines& machines, Profile& profile, ReplayOptions options)
    : machines_(machines), profile_(&profile), options_(options) {
  register_idle_thread();
}

void SampleReplay::register_idle_thread() {
  // perf registers the host's idle thread before reading (perf_session__register_idle_thread):
  // pid 0 is "swapper" until a COMM record says otherwise.
  symbols::Thread& idle = machines_.host().findnew_thread(0, 0);
  if (!idle.comm_set) {
    idle.comm = "swapper";
    idle.comm_set = true;
  }
}

std::optional<uint8_t> SampleReplay::context_mode(uint64_t entry) {
  switch (entry) {
    case PERF_CONTEXT_HV:
      return PERF_RECORD_MISC_HYPERVISOR;
    case PERF_CONTEXT_KERNEL:
      return PERF_RECORD_MISC_KERNEL;
    case PERF_CONTEXT_USER:
      return PERF_RECORD_MISC_USER;
    case PERF_CONTEXT_GUEST_KERNEL:
      return PERF_RECORD_MISC_GUEST_KERNEL;
    case PERF_CONTEXT_GUEST_USER:
      return PERF_RECORD_MISC_GUEST_USER;
    default:
      return std::nullopt;
  }
}

ResolvedSample::CursorFrames ResolvedSample::cursor(size_t max_stack, bool user_stacks_unwound, bool root_first) const {
  // vperf also knows the guest markers (perf 6.1 drops guest callchains): their frames resolve
  // against the guest (SampleReplay::context_mode), so they do not discard.
  const bool discarded = unknown_marker_at != kNoId && unknown_marker_at < max_stack;
  std::span<const uint32_t> all = frames();
  const bool unwound = user_stacks_unwound && !sample.stack_user.empty() && !sample.regs_user.empty() && thread != nullptr;
  const size_t available = sample.callchain.empty() && !unwound ? 0 : all.size();
  const size_t recorded = std::min<size_t>(recorded_frames, available);
  CursorFrames out;
  const size_t kept = discarded ? 0 : std::min(recorded, max_stack);
  out.recorded = all.subspan(root_first ? recorded - kept : 0, kept);
  // perf's unwinder stops after max_stack real frames; inlined functions come on top of them.
  // Counting them is needed only when the unwound part is longer than that (not per sample).
  std::span<const uint32_t> unwound_all = all.subspan(recorded, available - recorded);
  size_t end = unwound_all.size();
  if (end > max_stack) {
    size_t real = 0;
    end = 0;
    while (end < unwound_all.size() && real < max_stack)
      if (profile->frame(unwound_all[end++]).inline_depth == 0) ++real;
  }
  out.unwound = unwound_all.first(end);
  return out;
}

symbols::Machine* SampleReplay::machine_for(uint8_t cpumode, pid_t pid) {
  // nullptr for a guest's record when no guest machine was set up: its maps and tasks have
  // nothing to resolve against, and must not land in the host's kernel maps.
  return machines_.find_for_cpumode(cpumode, pid);
}

namespace {

const std::vector<std::string> kNoChain;

// MMAP and MMAP2 share these fields; MMAP has no prot (perf records only code maps then).
template <typename MmapLike>
symbols::MmapEvent mmap_event(const MmapLike& m, uint8_t cpumode, std::optional<uint32_t> prot) {
  symbols::MmapEvent e;
  e.pid = static_cast<pid_t>(m.pid);
  e.tid = static_cast<pid_t>(m.tid);
  e.start = m.addr;
  e.len = m.len;
  e.pgoff = m.pgoff;
  if (prot) e.prot = *prot;
  e.filename = m.filename;
  e.cpumode = cpumode;
  return e;
}

}  // namespace

void SampleReplay::on_record(const data::RecordView& view, const SampleCallback& on_sample, bool& keep_going) {
  if (observer_) observer_(view);
  const data::Record& record = view.record;
  // Threads come, go and change: the last sample's may not be the same object. The caches key
  // on MapSet versions and stay.
  if (data::is_task_or_map_record(record.type)) last_thread_known_ = false;
  uint8_t cpumode = record.misc & PERF_RECORD_MISC_CPUMODE_MASK;
  if (const auto* m = std::get_if<data::MmapRecord>(&record.body)) {
    symbols::MmapEvent e = mmap_event(*m, cpumode, std::nullopt);
    if (symbols::Machine* machine = machine_for(cpumode, e.pid)) machine->process_mmap(e);
  } else if (const auto* m2 = std::get_if<data::Mmap2Record>(&record.body)) {
    symbols::MmapEvent e = mmap_event(*m2, cpumode, m2->prot);
    if (symbols::Machine* machine = machine_for(cpumode, e.pid)) machine->process_mmap(e);
  } else if (const auto* c = std::get_if<data::CommRecord>(&record.body)) {
    if (symbols::Machine* machine = machine_for(cpumode, static_cast<pid_t>(c->pid))) {
      std::optional<std::string> unnamed = machine->process_comm(static_cast<pid_t>(c->pid), static_cast<pid_t>(c->tid), c->comm,
                                                                 (record.misc & PERF_RECORD_MISC_COMM_EXEC) != 0);
      if (unnamed && comm_named_) comm_named_(*unnamed, c->comm);
    }
  } else if (const auto* t = std::get_if<data::TaskRecord>(&record.body)) {
    symbols::Machine* machine = machine_for(cpumode, static_cast<pid_t>(t->pid));
    if (machine != nullptr && record.type == PERF_RECORD_FORK)
      machine->process_fork(static_cast<pid_t>(t->pid), static_cast<pid_t>(t->ppid), static_cast<pid_t>(t->tid),
                            static_cast<pid_t>(t->ptid));
    else if (machine != nullptr)
      machine->process_exit(static_cast<pid_t>(t->pid), static_cast<pid_t>(t->tid));
  } else if (const auto* s = std::get_if<data::Sample>(&record.body)) {
    if (options_.forget_samples && profile_->bytes() > kForgottenProfileBytes) {
      profile_->clear();
      forget_resolved();
    }
    const bool in_scope = machines_.sample_scope().shows(cpumode);
    ++(in_scope ? in_scope_ : out_of_scope_);
    if (!in_scope && !options_.out_of_scope_samples) return;
    ResolvedSample out{.view = view, .sample = *s, .pid = static_cast<pid_t>(record.sample_id.pid)};
    out.in_scope = in_scope;
    out.tid = static_cast<pid_t>(record.sample_id.tid);
    out.cpu = record.sample_id.cpu;
    out.time = record.sample_id.time;
    out.cpumode = cpumode;
    // A guest sample's pid and tid are the host's: the VMM and its vCPU thread. The thread is
    // the host's, so its comm is the vCPU's name ("CPU 0/KVM"), where perf 6.1 looks it up in
    // the guest machine and prints ":TID".
    if (!last_thread_known_ || out.tid != last_tid_) {
      last_thread_known_ = true;
      last_tid_ = out.tid;
      last_thread_ = machines_.host().find_thread(out.tid);
    }
    out.thread = last_thread_;
    if (out.thread && !out.thread->comm.empty()) {
      out.comm = out.thread->comm;
    } else {
      unnamed_comm_ = ":" + std::to_string(out.tid);
      out.comm = unnamed_comm_;
    }
    out.event = view.attr_index;
    out.profile = profile_;
    // A chain seen before (same words, space and mode) gives the same walk; unwound user
    // stacks differ sample by sample and are walked each time.
    // So do chains that an unwinder completes from the sample's registers (arm64's link register).
    const bool unwinds = options_.unwinder && (!s->stack_user.empty() || !s->regs_user.empty());
    const bool chain_known = options_.resolve_chain && !unwinds;
    const uint64_t hash = chain_known ? chain_hash(out) : 0;
    if (const ChainWalk* seen = chain_known ? seen_chain(out, hash) : nullptr) {
      out.ip_frame = seen->ip_frame;
      out.stack = seen->stack;
      out.recorded_frames = seen->recorded_frames;
      out.unknown_marker_at = seen->unknown_marker_at;
      out.at = profile_->frame(out.ip_frame).at;
      keep_going = on_sample(out);
      return;
    }
    uncached_frame_ = false;
    frames_.clear();
    append_frames(out, cpumode, s->ip, false, frames_);
    out.ip_frame = frames_.front();
    out.at = profile_->frame(out.ip_frame).at;
    if (options_.resolve_chain) walk_callchain(view, *s, out);
    if (chain_known && !uncached_frame_)
      remember_chain(out, hash, ChainWalk{out.ip_frame, out.stack, out.recorded_frames, out.unknown_marker_at});
    keep_going = on_sample(out);
  }
}

void SampleReplay::append_frames(const ResolvedSample& sample, uint8_t mode, uint64_t ip, bool with_inlines,
                                 std::vector<uint32_t>& frames) {
  bool kernel = mode == PERF_RECORD_MISC_KERNEL;
  bool user = mode == PERF_RECORD_MISC_USER;
  // Only host addresses whose space is known are remembered (guest machines go by pid).
  const uint64_t space = kernel ? machines_.host().kernel_maps().version() : user_space(sample);
  bool cacheable = kernel || (user && space != 0);
  AddressKey key{space, ip, mode, with_inlines};
  if (cacheable) {
    const uint32_t known = resolved_ids_.find(AddressKeyHash()(key), [&](uint32_t id) { return resolved_[id].key == key; });
    if (known != core::HashedIds::kNone) {
      const FrameRun& run = resolved_[known];
      if (run.count == 1)
        frames.push_back(run.first);
      else
        frames.insert(frames.end(), resolved_frames_.begin() + run.first, resolved_frames_.begin() + run.first + run.count);
      return;
    }
  }
  if (!cacheable) uncached_frame_ = true;
  size_t first = frames.size();
  symbols::ResolvedAddress at = machines_.resolve(sample.pid, sample.tid, mode, ip);
  const std::vector<std::string>& chain = with_inlines ? inline_chain_at(at) : kNoChain;
  for (size_t i = 0; i < chain.size(); ++i)
    frames.push_back(profile_->intern_frame(ip, mode, at, InlinePlace{chain[i], static_cast<uint32_t>(chain.size() - 1 - i)}));
  if (chain.empty()) frames.push_back(profile_->intern_frame(ip, mode, at));
  if (cacheable) {
    if (resolved_.size() >= kResolvedLimit) {
      resolved_.clear();
      resolved_ids_.clear();
      resolved_frames_.clear();
    }
    resolved_ids_.insert(AddressKeyHash()(key), static_cast<uint32_t>(resolved_.size()));
    const auto count = static_cast<uint32_t>(frames.size() - first);
    if (count == 1) {
      resolved_.push_back(FrameRun{key, frames[first], 1});
    } else {
      resolved_.push_back(FrameRun{key, static_cast<uint32_t>(resolved_frames_.size()), count});
      resolved_frames_.insert(resolved_frames_.end(), frames.begin() + static_cast<ptrdiff_t>(first), frames.end());
    }
  }
}

void SampleReplay::walk_callchain(const data::RecordView& view, const data::Sample& sample, ResolvedSample& out) {
  frames_.clear();
  if (sample.callchain.empty()) {
    frames_.push_back(out.ip_frame);
  } else {
    uint8_t mode = out.cpumode;
    const std::vector<uint64_t>& chain = sample.callchain;
    for (size_t j = 0; j < chain.size(); ++j) {
      const uint64_t entry = chain[j];
      if (std::optional<uint8_t> switched = context_mode(entry)) {
        mode = *switched;
        continue;
      }
      if (entry >= PERF_CONTEXT_MAX) {  // another marker
        if (out.unknown_marker_at == kNoId) out.unknown_marker_at = static_cast<uint32_t>(frames_.size());
        continue;
      }
      // perf's leaf frame caller (arm64 -g): before the user chain's second entry, the leaf's
      // caller the frame-pointer walk skipped, unless it is that entry.
      if (j >= 2 && chain[j - 2] == PERF_CONTEXT_USER && options_.unwinder && view.attr && out.thread && !sample.regs_user.empty())
        if (const symbols::Machine* machine = machines_.find_for_cpumode(PERF_RECORD_MISC_USER, out.pid))
          if (std::optional<uint64_t> caller = options_.unwinder->leaf_caller(*machine, *out.thread, sample, view.attr->attr, chain[j - 1]);
              caller && *caller != entry)
            append_frames(out, mode, *caller, false, frames_);
      append_frames(out, mode, entry, false, frames_);
    }
    out.recorded_frames = static_cast<uint32_t>(frames_.size());
  }
  // User stacks are the host's: a guest sample's copy (if any) is of the VMM, not the guest.
  const bool host_sample = out.cpumode == PERF_RECORD_MISC_USER || out.cpumode == PERF_RECORD_MISC_KERNEL;
  if (options_.unwinder && host_sample && view.attr && !sample.stack_user.empty() && !sample.regs_user.empty() &&
      out.thread) {
    // A user-mode sample's recorded callchain (kernel part only, under exclude_callchain_user)
    // is empty: the unwound frames start at the sample ip themselves, so drop the lone ip frame.
    if (sample.callchain.empty()) frames_.clear();
    const symbols::Machine* machine = machines_.find_for_cpumode(PERF_RECORD_MISC_USER, out.pid);
    std::vector<uint64_t> ips;
    if (machine) options_.unwinder->unwind(*machine, *out.thread, sample, view.attr->attr, ips);
    for (uint64_t ip : ips) append_frames(out, PERF_RECORD_MISC_USER, ip, true, frames_);
  }
  out.stack = profile_->intern_stack(frames_);
}

uint64_t SampleReplay::chain_hash(const ResolvedSample& sample) const {
  // One multiply-rotate step per word: a distinct chain per hash in practice; equal hashes are
  // told apart by their words (seen_chain).
  auto mix = [](uint64_t h, uint64_t word) {
    h ^= word * 0x9e3779b97f4a7c15ULL;
    return ((h << 31) | (h >> 33)) * 0xc2b2ae3d27d4eb4fULL;
  };
  uint64_t h = mix(user_space(sample), sample.cpumode);
  h = mix(h, kernel_space());
  h = mix(h, sample.sample.ip);
  for (uint64_t word : sample.sample.callchain) h = mix(h, word);
  return h ^ (h >> 29);
}

const SampleReplay::ChainWalk* SampleReplay::seen_chain(const ResolvedSample& sample, uint64_t hash) const {
  const std::vector<uint64_t>& chain = sample.sample.callchain;
  const uint64_t space = user_space(sample), kernel = kernel_space();
  const uint32_t found = chain_index_.find(hash, [&](uint32_t id) {
    const ChainEntry& e = chains_[id];
    if (e.user_space != space || e.kernel_space != kernel || e.mode != sample.cpumode || e.words_count != chain.size() + 1) return false;
    const uint64_t* words = chain_words_.data() + e.words_at;
    return words[0] == sample.sample.ip && std::equal(chain.begin(), chain.end(), words + 1);
  });
  return found == core::HashedIds::kNone ? nullptr : &chains_[found].walk;
}

size_t SampleReplay::chain_cache_bytes() const {
  return chain_words_.size() * sizeof(uint64_t) + chains_.size() * sizeof(ChainEntry) + 2 * chain_index_.size() * core::HashedIds::kSlotBytes;
}

void SampleReplay::forget_resolved() {
  resolved_.clear();
  resolved_ids_.clear();
  resolved_frames_.clear();
  chain_index_.clear();
  chains_.clear();
  chain_words_.clear();
}

void SampleReplay::remember_chain(const ResolvedSample& sample, uint64_t hash, const ChainWalk& walk) {
  const std::vector<uint64_t>& chain = sample.sample.callchain;
  const size_t adds = (chain.size() + 1) * sizeof(uint64_t) + sizeof(ChainEntry) + 2 * core::HashedIds::kSlotBytes;
  if (adds > kChainCacheBytes) return;
  if (chains_.capacity() == 0) {
    // As much as the budget could ever hold of each, reserved (address space, not memory: a
    // page of their own mappings is resident once written): growing by doubling held up to
    // twice the budget, and half as much again while it copied.
    chain_words_.reserve(kChainCacheBytes / sizeof(uint64_t));
    chains_.reserve(kChainCacheBytes / (sizeof(ChainEntry) + sizeof(uint64_t)));
  }
  if (chain_cache_bytes() + adds > kChainCacheBytes) {
    chain_index_.clear();
    chains_.clear();
    chain_words_.clear();
  }
  ChainEntry e{user_space(sample), kernel_space(), sample.cpumode, static_cast<uint32_t>(chain_words_.size()),
               static_cast<uint32_t>(chain.size() + 1), walk};
  chain_words_.push_back(sample.sample.ip);
  chain_words_.insert(chain_words_.end(), chain.begin(), chain.end());
  chain_index_.insert(hash, static_cast<uint32_t>(chains_.size()));
  chains_.push_back(e);
}

const std::vector<std::string>& SampleReplay::inline_chain_at(const symbols::ResolvedAddress& at) {
  const symbols::Dso* dso = at.dso();
  if (!options_.inline_frames || dso == nullptr || at.symbol == nullptr) return kNoChain;
  auto [it, added] = inlined_.try_emplace(InlineKey{dso, at.symbol_address});
  if (added) {
    auto frames = dso->inline_frames(at.symbol_address);
    if (frames) {
      for (const symbols::InlineFrame& frame : *frames)
        it->second.push_back(frame.function == at.symbol->name ? std::string() : frame.function);
    }
  }
  return it->second;
}

uint32_t SampleReplay::cursor_stack(const ResolvedSample& sample, size_t max_stack, bool root_first) {
  const bool callchains = sample.view.attr && (sample.view.attr->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
  if (!callchains || sample.stack == kNoId) return sample.stack;
  ResolvedSample::CursorFrames cursor = sample.cursor(max_stack, options_.unwinder != nullptr, root_first);
  if (cursor.recorded.size() + cursor.unwound.size() == sample.frames().size()) return sample.stack;
  cursor_frames_.assign(cursor.recorded.begin(), cursor.recorded.end());
  cursor_frames_.insert(cursor_frames_.end(), cursor.unwound.begin(), cursor.unwound.end());
  return profile_->intern_stack(cursor_frames_);
}

std::optional<std::string> SampleReplay::scope_note() const {
  if (out_of_scope_ == 0 || in_scope_ != 0 || machines_.sample_scope().host) return std::nullopt;
  // A guest-only recording (exclude_host) whose samples all came from the host: a software
  // event such as cpu-clock, the fallback on a host without a PMU, ignores exclude_host.
  return "all " + std::to_string(out_of_scope_) +
         " samples are the host's, left out as perf kvm leaves them out: sampling a guest needs a host PMU "
         "(cpu-clock, the fallback without one, samples the host); on this host sample the guest with "
         "vperf kvm record --qmp SOCKET or --domain NAME";
}

Result<data::ReadStats> SampleReplay::run(data::PerfDataReader& reader, const SampleCallback& on_sample) {
  PerfDataSource source(reader);
  return run(source, on_sample);
}

Result<data::ReadStats> SampleReplay::run(RecordSource& source, const SampleCallback& on_sample) {
  bool keep_going = true;
  return source.read(
      [&](const data::RecordView& view) {
        on_record(view, on_sample, keep_going);
        return keep_going;
      },
      data::ReadOptions{options_.ordered});
}

}  // namespace vperf::report
