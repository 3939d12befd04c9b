#include "report/report_hists.h"

#include <linux/perf_event.h>

#include <algorithm>

#include "report/srcline.h"

namespace vperf::report {

void copy_key_fields(SortKey key, const EntryKey& from, EntryKey& to) {
  switch (key) {
    case SortKey::Comm: to.comm = from.comm; break;
    case SortKey::Pid:
    case SortKey::Tid: to.tid = from.tid; break;
    case SortKey::Cpu: to.cpu = from.cpu; break;
    case SortKey::Dso: to.dso = from.dso; break;
    case SortKey::Sym:
      to.symbol = from.symbol;
      to.address = from.address;
      to.inlined = from.inlined;
      break;
    case SortKey::Trace: to.trace = from.trace; break;
    case SortKey::Srcline: to.srcline = from.srcline; break;
  }
}

size_t EntryKeyHash::operator()(const EntryKey& k) const {
  uint64_t h = k.comm;
  h = h * 0x9e3779b97f4a7c15ULL + static_cast<uint32_t>(k.tid);
  h = h * 0x9e3779b97f4a7c15ULL + static_cast<uint32_t>(k.cpu);
  h = h * 0x9e3779b97f4a7c15ULL + k.dso;
  h = h * 0x9e3779b97f4a7c15ULL + k.symbol;
  h = h * 0x9e3779b97f4a7c15ULL + k.address;
  h = h * 0x9e3779b97f4a7c15ULL + k.symbol_end;
  h = h * 0x9e3779b97f4a7c15ULL + k.trace;
  h = h * 0x9e3779b97f4a7c15ULL + k.srcline;
  h = h * 0x9e3779b97f4a7c15ULL + k.inlined;
  return static_cast<size_t>(h ^ (h >> 29));
}

HistBuilder::HistBuilder(HistSettings settings, const Profile& profile)
    : settings_(std::move(settings)), profile_(profile) {
  for (SortKey key : settings_.sort_keys) {
    switch (key) {
      case SortKey::Comm: key_comm_ = true; break;
      case SortKey::Pid:
      case SortKey::Tid: key_tid_ = true; break;
      case SortKey::Cpu: key_cpu_ = true; break;
      case SortKey::Trace: key_trace_ = true; break;
      case SortKey::Srcline: key_srcline_ = true; break;
      case SortKey::Dso: key_dso_ = true; break;
      // perf compares a symbol's dso before the symbol itself.
      case SortKey::Sym: key_sym_ = key_dso_ = true; break;
    }
  }
}

EntryKey HistBuilder::key_for(uint32_t comm, uint32_t trace, uint32_t srcline, pid_t tid, int32_t cpu,
                              const symbols::Dso* dso, const symbols::Symbol* symbol, uint64_t address,
                              uint32_t inlined) const {
  EntryKey key;
  if (key_trace_) key.trace = trace;
  key.srcline = srcline;
  if (key_comm_) key.comm = comm;
  if (key_tid_) key.tid = tid;
  if (key_cpu_) key.cpu = cpu;
  if (key_dso_ && dso) key.dso = dso->short_name_id();
  if (key_sym_) {
    key.symbol = symbol != nullptr;
    key.inlined = inlined;
    key.address = symbol ? symbol->start : address;
    if (symbol) key.symbol_end = symbol->end;
  }
  return key;
}

uint32_t HistBuilder::srcline_of(const symbols::ResolvedAddress& at) {
  if (!key_srcline_) return 0;
  const auto [it, added] = srcline_ids_.try_emplace({at.dso(), at.symbol_address}, 0);
  if (added) it->second = srclines_.intern(report_srcline(at));
  return it->second;
}

EntryKey HistBuilder::keys_before_srcline(const EntryKey& key) const {
  EntryKey group;
  for (SortKey sort_key : settings_.sort_keys) {
    if (sort_key == SortKey::Srcline) break;
    copy_key_fields(sort_key, key, group);
  }
  return group;
}

void HistBuilder::count_srcline_samples(const EntryKey& key, uint64_t samples) {
  srcline_group_samples_[keys_before_srcline(key)] += samples;
}

bool HistBuilder::srcline_compared(const EntryKey& key) const {
  const auto it = srcline_group_samples_.find(keys_before_srcline(key));
  return it != srcline_group_samples_.end() && it->second >= 2;
}

size_t HistBuilder::ChainKeyHash::operator()(const ChainKey& k) const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint64_t v : {uint64_t{k.event}, uint64_t{k.self}, uint64_t{k.comm}, uint64_t{k.trace}, uint64_t{k.stack},
                     uint64_t{static_cast<uint32_t>(k.tid)}, uint64_t{static_cast<uint32_t>(k.pid)},
                     uint64_t{static_cast<uint32_t>(k.cpu)}, uint64_t{k.shown}, uint64_t{static_cast<unsigned char>(k.level)}})
    h = (h ^ v) * 0x100000001b3ULL;
  return static_cast<size_t>(h ^ (h >> 32));
}

uint32_t HistBuilder::entry_for(EventHists& hists, core::HashedIds& index, const EntryKey& key, bool& created) {
  const auto [id, added] = index.find_or_insert(EntryKeyHash()(key), [&](uint32_t known) { return hists.entries[known].key == key; },
                                                static_cast<uint32_t>(hists.entries.size()));
  created = added;
  if (added) {
    hists.entries.emplace_back();
    hists.entries.back().key = key;
  }
  return id;
}

bool HistBuilder::passes_filters(const ResolvedSample& sample) const {
  if (!sample.in_scope) return false;  // perf kvm's host or guest filter (symbols::SampleScope)
  const SampleFilters& f = settings_.filters;
  if (!f.comms.empty() && !f.comms.contains(std::string(sample.comm))) return false;
  if (!f.pids.empty() && !f.pids.contains(sample.pid)) return false;
  if (!f.tids.empty() && !f.tids.contains(sample.tid)) return false;
  if (!f.dsos.empty()) {
    const symbols::Dso* dso = sample.at.dso();
    if (!dso || (!f.dsos.contains(dso->short_name()) && !f.dsos.contains(dso->name()))) return false;
  }
  if (!f.symbols.empty() && (!sample.at.symbol || !f.symbols.contains(sample.at.symbol->name))) return false;
  return true;
}

void HistBuilder::add(size_t event, const ResolvedSample& sample, uint32_t trace) {
  if (events_.size() <= event) {
    events_.resize(event + 1);
    index_.resize(event + 1);
  }
  EventHists& hists = events_[event];
  const perf_event_attr* attr = sample.view.attr ? &sample.view.attr->attr : nullptr;
  // As perf's evsel__parse_sample: without PERF_SAMPLE_PERIOD a sample weighs the attr's
  // sample_period (the frequency's bits under freq, as perf reads the union).
  uint64_t period = sample.sample.period;
  if (attr && !(attr->sample_type & PERF_SAMPLE_PERIOD)) period = attr->sample_period;
  int32_t cpu = attr && (attr->sample_type & PERF_SAMPLE_CPU) ? static_cast<int32_t>(sample.cpu) : -1;
  bool has_chain = attr && (attr->sample_type & PERF_SAMPLE_CALLCHAIN) && !sample.frames().empty();
  if (has_chain) hists.has_callchains = true;
  bool shown = passes_filters(sample);

  ++hists.samples;
  hists.total_period += period;
  if (shown) {
    ++hists.shown_samples;
    hists.shown_period += period;
  }

  if (last_comm_ == kNoId || sample.comm != last_comm_text_) {
    last_comm_ = comms_.intern(sample.comm);
    last_comm_text_.assign(sample.comm);
  }
  const uint32_t comm = last_comm_;
  if (key_tid_) latest_comm_[sample.tid] = comm;
  uint64_t self_address = sample.at.map ? sample.at.map_relative : sample.at.ip;
  bool created = false;
  const EntryKey self_key =
      key_for(comm, trace, srcline_of(sample.at), sample.tid, cpu, sample.at.dso(), sample.at.symbol, self_address);
  if (key_srcline_) count_srcline_samples(self_key, 1);
  uint32_t self = 0;
  if (last_entry_.event == event && last_entry_.key == self_key) {
    self = last_entry_.id;
  } else {
    self = entry_for(hists, index_[event], self_key, created);
    last_entry_ = LastEntry{event, self_key, self};
  }
  HistEntry& e = hists.entries[self];
  const uint64_t serial = ++sample_serial_;
  if (created) {
    e.pid = sample.pid;
    e.tid = sample.tid;
    e.cpu = cpu;
    e.level = sample.at.level;
    e.dso = sample.at.dso();
    e.symbol = sample.at.symbol;
    e.address = self_address;
    e.symbol_offset = sample.at.symbol_offset;
    e.filtered = !shown;
    e.first_sample = serial;
    e.thread = sample.thread;
  }
  e.comm = comm;
  e.self_period += period;
  switch (sample.cpumode) {
    case PERF_RECORD_MISC_KERNEL: e.kernel_period += period; break;
    case PERF_RECORD_MISC_USER: e.user_period += period; break;
    case PERF_RECORD_MISC_GUEST_KERNEL: e.guest_kernel_period += period; break;
    case PERF_RECORD_MISC_GUEST_USER: e.guest_user_period += period; break;
    default: break;
  }
  ++e.self_samples;
  if (settings_.children) {
    e.children_period += period;
    ++e.children_samples;
  }
  if (!has_chain || (!settings_.children && !settings_.callchains)) return;

  // Counted per distinct stack; the chains are spread over entries and trees by finish().
  ChainKey key{static_cast<uint32_t>(event), self, comm, trace, sample.stack, sample.tid, sample.pid, cpu, shown,
               sample.at.level};
  ChainCount& count = chains_[find_chain(key, serial, sample.thread)].second;
  count.period += period;
  ++count.samples;
}

uint32_t HistBuilder::find_chain(const ChainKey& key, uint64_t serial, const symbols::Thread* thread) {
  if (chains_by_stack_.size() <= key.stack) chains_by_stack_.resize(key.stack + 1);
  StackChains& of_stack = chains_by_stack_[key.stack];
  const uint32_t next = static_cast<uint32_t>(chains_.size());
  if (of_stack.count >= kChainsListed) {
    const auto [id, added] = chain_index_.find_or_insert(ChainKeyHash()(key), [&](uint32_t known) { return chains_[known].first == key; }, next);
    if (!added) return id;
  } else {
    for (uint32_t id = of_stack.latest; id != kNoId; id = chains_[id].second.next_of_stack)
      if (chains_[id].first == key) return id;
    if (of_stack.count + 1 == kChainsListed) {  // long enough: the stack's chains are hashed from now on
      for (uint32_t id = of_stack.latest; id != kNoId; id = chains_[id].second.next_of_stack)
        chain_index_.insert(ChainKeyHash()(chains_[id].first), id);
      chain_index_.insert(ChainKeyHash()(key), next);
    }
  }
  chains_.push_back({key, ChainCount{0, 0, serial, thread, of_stack.latest}});
  of_stack.latest = next;
  ++of_stack.count;
  return next;
}

void HistBuilder::rename_unnamed_comm(std::string_view unnamed, std::string_view comm) {
  if (std::optional<uint32_t> id = comms_.find(unnamed)) comm_renames_[*id] = comms_.intern(comm);
}

void HistBuilder::merge_into(HistEntry& kept, const HistEntry& other) {
  kept.self_period += other.self_period;
  kept.kernel_period += other.kernel_period;
  kept.user_period += other.user_period;
  kept.guest_kernel_period += other.guest_kernel_period;
  kept.guest_user_period += other.guest_user_period;
  kept.children_period += other.children_period;
  kept.self_samples += other.self_samples;
  kept.children_samples += other.children_samples;
  // The sample that reached the merged entry first decides whether it is shown, as before.
  if (other.first_sample < kept.first_sample || (other.first_sample == kept.first_sample && other.first_depth < kept.first_depth)) {
    kept.first_sample = other.first_sample;
    kept.first_depth = other.first_depth;
    kept.filtered = other.filtered;
  }
}

// perf shows a thread's samples taken while it was unnamed (":TID") under the name it got
// first (its comm is overridden in place), and merges them with that name's entries when it
// collapses the histogram: entries and counted chains move to the new name here, before the
// chains are spread.
void HistBuilder::apply_comm_renames() {
  if (comm_renames_.empty()) return;
  auto renamed = [&](uint32_t comm) {
    auto it = comm_renames_.find(comm);
    return it == comm_renames_.end() ? comm : it->second;
  };
  for (auto& [tid, comm] : latest_comm_) comm = renamed(comm);
  for (size_t event = 0; event < events_.size(); ++event) {
    EventHists& hists = events_[event];
    std::vector<HistEntry> entries = std::move(hists.entries);
    std::vector<uint32_t> moved_to(entries.size());
    hists.entries.clear();
    index_[event].clear();
    for (size_t i = 0; i < entries.size(); ++i) {
      HistEntry& e = entries[i];
      e.key.comm = renamed(e.key.comm);
      e.comm = renamed(e.comm);
      bool created = false;
      moved_to[i] = entry_for(hists, index_[event], e.key, created);
      if (created) hists.entries[moved_to[i]] = std::move(e);
      else merge_into(hists.entries[moved_to[i]], e);
    }
    for (size_t i = 0; i < chains_.size(); ++i)
      if (ChainKey& key = chains_[i].first; key.event == event) {
        key.self = moved_to[key.self];
        key.comm = renamed(key.comm);
      }
  }
}

void HistBuilder::finish() {
  apply_comm_renames();
  // Every function is known now: a name inlined anywhere merges its branches from the start.
  branch_of_.clear();
  if (settings_.callchains && profile_.has_inlined_functions()) {
    branch_of_ = call_graph_branches(profile_);
    for (EventHists& hists : events_) hists.chains.merge_by(&branch_of_);
  }
  for (size_t i = 0; i < chains_.size(); ++i) {
    const auto& [key, count] = chains_[i];
    apply_chain(key, count.period, count.samples, count.first_sample, count.thread);
  }
  for (EventHists& hists : events_) hists.chains.merge_by(nullptr);  // the forests may outlive branch_of_
  chains_.clear();
  chains_by_stack_.clear();
  chain_index_.clear();
  // perf names an entry's thread by its name at the end (after an exec, the new one): the pid
  // column shows it, and the comm column is as wide as the widest such name, so a comm cut to
  // it shows where a thread sampled under one name was renamed later. A sample whose thread
  // the model does not know keeps the name of the thread's latest sample.
  for (EventHists& hists : events_)
    for (HistEntry& e : hists.entries) {
      if (e.thread) e.comm = comms_.intern(e.thread->comm);
      else if (auto it = latest_comm_.find(e.tid); key_tid_ && it != latest_comm_.end()) e.comm = it->second;
      e.thread = nullptr;
    }
}

void HistBuilder::reset() {
  events_.clear();
  index_.clear();
  chains_.clear();
  chains_by_stack_.clear();
  chain_index_.clear();
  reached_by_.clear();
  latest_comm_.clear();
  comm_renames_.clear();
  srcline_group_samples_.clear();
}

// One distinct chain with its samples: the graph of its own entry, and (children) every other
// frame's entry and graph. Chains merge by function (two stacks may be one chain here), in
// display order (root first for caller graphs).
void HistBuilder::apply_chain(const ChainKey& key, uint64_t period, uint64_t samples, uint64_t first_sample,
                              const symbols::Thread* thread) {
  const uint32_t self = key.self;
  const uint32_t comm = key.comm;
  const pid_t tid = key.tid;
  const pid_t pid = key.pid;
  const int32_t cpu = key.cpu;
  const uint32_t trace = key.trace;
  const bool shown = key.shown;
  char level = key.level;
  EventHists& hists = events_[key.event];
  std::span<const uint32_t> stack = profile_.stack(key.stack);
  size_t n = stack.size();
  bool caller = settings_.order == CallGraphOrder::Caller;
  chain_functions_.resize(n);
  for (size_t i = 0; i < n; ++i) chain_functions_[i] = profile_.frame(stack[caller ? n - 1 - i : i]).function;

  if (settings_.callchains) {
    HistEntry& e = hists.entries[self];
    if (e.chain_tree == CallchainForest::kNone) e.chain_tree = hists.chains.new_tree();
    hists.chains.add(e.chain_tree, chain_functions_, period);
    e.max_depth = std::max(e.max_depth, static_cast<uint32_t>(n));
  }
  if (!settings_.children) return;

  if (reached_by_.size() <= key.event) reached_by_.resize(key.event + 1);
  std::vector<uint32_t>& reached_by = reached_by_[key.event];
  const uint32_t serial = ++chain_serial_;
  auto reach = [&](uint32_t entry) {  // false when this chain reached `entry` before
    if (reached_by.size() <= entry) reached_by.resize(hists.entries.size(), 0);
    if (reached_by[entry] == serial) return false;
    reached_by[entry] = serial;
    return true;
  };
  reach(self);
  for (size_t i = 0; i < n; ++i) {
    const ProfileFunction& frame = profile_.function(chain_functions_[i]);
    // perf reuses the sample's location for each frame: a frame outside every map keeps the
    // level of the frame before it.
    if (frame.dso)
      level = frame.dso->kind() == symbols::DsoKind::GuestKernel ? 'g' : frame.dso->is_kernel() ? 'k' : frame.level;
    bool created = false;
    // An inlined function is an entry of its own (perf's inline symbols), named apart from
    // the function it was inlined into.
    uint32_t inlined = frame.inlined_name == 0 ? 0 : chain_functions_[i] + 1;
    // The srcline of the frame's own address (perf's entry for a chain frame takes its ip).
    const symbols::ResolvedAddress& frame_at = profile_.frame(stack[caller ? n - 1 - i : i]).at;
    const uint32_t srcline = srcline_of(frame_at);
    const EntryKey frame_key = key_for(comm, trace, srcline, tid, cpu, frame.dso, frame.symbol, frame.address, inlined);
    if (key_srcline_) count_srcline_samples(frame_key, samples);
    uint32_t entry = entry_for(hists, index_[key.event], frame_key, created);
    HistEntry& e = hists.entries[entry];
    if (created) {
      e.pid = pid;
      e.tid = tid;
      e.cpu = cpu;
      e.level = level;
      e.dso = frame.dso;
      e.symbol = frame.symbol;
      e.address = frame.address;
      e.symbol_offset = frame_at.symbol_offset;
      if (inlined) e.inlined_name = profile_.text(frame.inlined_name);
      e.filtered = !shown;
      e.first_sample = first_sample;
      e.first_depth = static_cast<uint32_t>(caller ? n - 1 - i : i);
      e.comm = comm;
      e.thread = thread;
    } else if (first_sample < e.first_sample) {
      // Reached by this chain before the sample that created it here (as its own symbol, or by
      // a later chain): perf would have created it from this chain's first sample.
      e.filtered = !shown;
      e.first_sample = first_sample;
      e.first_depth = static_cast<uint32_t>(caller ? n - 1 - i : i);
      // perf's entry keeps the thread of the sample that created it (its Children ties).
      e.pid = pid;
      e.tid = tid;
      e.symbol_offset = frame_at.symbol_offset;
      e.thread = thread;
    }
    if (!reach(entry)) continue;
    e.children_period += period;
    e.children_samples += samples;
    if (settings_.callchains) {
      if (e.chain_tree == CallchainForest::kNone) e.chain_tree = hists.chains.new_tree();
      hists.chains.add(e.chain_tree, std::span<const uint32_t>(chain_functions_).subspan(i), period);
      e.max_depth = std::max(e.max_depth, static_cast<uint32_t>(n - i));
    }
  }
}

}  // namespace vperf::report
