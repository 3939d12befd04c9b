#include "report/profile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "symbols/dso.h"

namespace vperf::report {

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL; }

}  // namespace

std::optional<symbols::BuildId> ProfileMapping::build_id() const {
  const symbols::Dso* d = dso();
  if (d == nullptr) return std::nullopt;
  return d->build_id();
}

size_t Profile::FrameKeyHash::operator()(const FrameKey& k) const {
  uint64_t h = reinterpret_cast<uintptr_t>(k.map) * 0x9e3779b97f4a7c15ULL;
  h ^= (k.ip + k.cpumode + (uint64_t{k.chain_slot} << 8)) * 0xc2b2ae3d27d4eb4fULL;
  return static_cast<size_t>(h ^ (h >> 31));
}

size_t Profile::FunctionKeyHash::operator()(const FunctionKey& k) const {
  uint64_t h = reinterpret_cast<uintptr_t>(k.object) * 0x9e3779b97f4a7c15ULL;
  h ^= (k.ip + (uint64_t{k.inlined_name} << 32)) * 0xc2b2ae3d27d4eb4fULL;
  return static_cast<size_t>(h ^ (h >> 31));
}

namespace {
uint64_t count_key_hash(uint32_t event, uint32_t comm, uint32_t stack) {
  uint64_t h = (uint64_t{event} << 32 | comm) * 0x9e3779b97f4a7c15ULL;
  h ^= stack * 0xc2b2ae3d27d4eb4fULL;
  return h ^ (h >> 29);
}
}  // namespace

uint32_t Profile::intern_mapping(const std::shared_ptr<const symbols::Map>& map) {
  auto [it, added] = mapping_ids_.try_emplace(map.get(), static_cast<uint32_t>(mappings_.size()));
  if (added) mappings_.push_back(ProfileMapping{map});
  return it->second;
}

uint32_t Profile::intern_function(const ProfileFrame& frame, std::string_view inlined_name) {
  const symbols::ResolvedAddress& at = frame.at;
  const symbols::Symbol* symbol = at.symbol;
  FunctionKey key{};
  ProfileFunction function{symbol, at.dso(), frame.ip, symbol ? symbol->start : frame.ip, at.level, 0};
  if (!inlined_name.empty()) {
    // The same function inlined into two others is two functions, as perf's inline symbols.
    function.inlined_name = texts_.intern(inlined_name);
    function.order_key = frame.ip;
    key = FunctionKey{symbol ? static_cast<const void*>(symbol) : at.dso(), 0, function.inlined_name};
  } else {
    key = symbol ? FunctionKey{symbol, 0, 0} : FunctionKey{at.dso(), frame.ip, 0};
  }
  const auto [id, added] = function_ids_.find_or_insert(FunctionKeyHash()(key), [&](uint32_t known) { return function_keys_[known] == key; },
                                                       static_cast<uint32_t>(functions_.size()));
  if (added) {
    if (function.inlined_name != 0) ++inlined_functions_;
    functions_.push_back(function);
    function_keys_.push_back(key);
  }
  return id;
}

uint32_t Profile::intern_frame(uint64_t ip, uint8_t cpumode, const symbols::ResolvedAddress& at,
                               std::optional<InlinePlace> place) {
  const uint32_t depth = place ? place->depth : 0;
  const FrameKey key{at.map.get(), ip, place ? depth + 1 : 0, cpumode};
  const auto [id, added] = frame_ids_.find_or_insert(FrameKeyHash()(key), [&](uint32_t known) { return frame_keys_[known] == key; },
                                                    static_cast<uint32_t>(frames_.size()));
  if (!added) return id;
  ProfileFrame frame{ip, cpumode, depth, kNoId, kNoId, at};
  if (at.map) frame.mapping = intern_mapping(at.map);
  frame.function = intern_function(frame, place ? place->inlined_name : std::string_view{});
  frames_.push_back(std::move(frame));
  frame_keys_.push_back(key);
  return id;
}

uint32_t Profile::intern_stack(std::span<const uint32_t> frames) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (uint32_t id : frames) hash = mix(hash, id);
  hash = mix(hash, frames.size());
  const auto equal = [&](uint32_t known) {
    std::span<const uint32_t> frames_known = stack(known);
    return frames_known.size() == frames.size() && std::equal(frames_known.begin(), frames_known.end(), frames.begin());
  };
  const auto [id, added] = stack_ids_.find_or_insert(hash, equal, static_cast<uint32_t>(stacks_.size()));
  if (added) {
    stacks_.emplace_back(static_cast<uint32_t>(stack_frames_.size()), static_cast<uint32_t>(frames.size()));
    stack_frames_.insert(stack_frames_.end(), frames.begin(), frames.end());
  }
  return id;
}

std::string Profile::function_label(uint32_t id) const {
  const ProfileFunction& f = functions_[id];
  if (f.inlined_name != 0) return text(f.inlined_name) + " (inlined)";
  if (f.symbol) return std::string(f.symbol->name);
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#" PRIx64, f.address);
  return buf;
}

void Profile::count(uint32_t event, uint32_t comm, uint32_t stack, uint64_t weight) {
  const auto [id, added] = count_ids_.find_or_insert(
      count_key_hash(event, comm, stack),
      [&](uint32_t known) { return counts_[known].event == event && counts_[known].comm == comm && counts_[known].stack == stack; },
      static_cast<uint32_t>(counts_.size()));
  if (added) counts_.push_back(ProfileCount{event, comm, stack, {}});
  ProfileValue& value = counts_[id].value;
  ++value.samples;
  value.weight += weight;
}

void Profile::clear_counts() {
  counts_.clear();
  count_ids_.clear();
}

void Profile::clear() {
  clear_counts();
  frames_.clear();
  frame_keys_.clear();
  frame_ids_.clear();
  functions_.clear();
  function_keys_.clear();
  function_ids_.clear();
  inlined_functions_ = 0;
  mappings_.clear();
  mapping_ids_.clear();
  stack_frames_.clear();
  stacks_.clear();
  stack_ids_.clear();
  texts_.clear();
  ++generation_;
}

size_t Profile::bytes() const {
  constexpr size_t kIndexed = 2 * core::HashedIds::kSlotBytes;  // an id's share of its table, at most
  return frames_.size() * (sizeof(ProfileFrame) + sizeof(FrameKey) + kIndexed) +
         functions_.size() * (sizeof(ProfileFunction) + sizeof(FunctionKey) + kIndexed) + mappings_.size() * 64 +
         stack_frames_.size() * sizeof(uint32_t) + stacks_.size() * (sizeof(stacks_[0]) + kIndexed) + texts_.size() * 64 +
         counts_.size() * (sizeof(ProfileCount) + kIndexed);
}

}  // namespace vperf::report
