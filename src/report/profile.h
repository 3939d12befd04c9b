#pragma once
// The profile model every reader of samples shares: SampleReplay builds it, and report tables,
// call graphs, script lines, folded stacks, flame graphs and annotate are derived from it (and,
// next, pprof and speedscope export). It is interned: each distinct thing is stored once and
// named by a small id, so a sample is a handful of integers.
//
//  - A mapping is one executable region of an address space: start, end, file offset and the
//    DSO (file name, build-id), as pprof's Mapping. Interned by the symbols::Map it comes from.
//  - A function is what perf's call graphs merge by (CCKEY_FUNCTION): a symbol of a DSO; an
//    unresolved address of a DSO (or of no map); or a function inlined into another (a symbol
//    or DSO) named by the inlined function's name, as perf's inline symbols.
//  - A frame is one entry of a call stack: the address as recorded or unwound, the cpumode it
//    was recorded in, its resolution (mapping, symbol, offsets) and its inline depth: 0 for the
//    real frame, k for the function inlined k levels into it at that address (perf lists them
//    innermost first, each with the real frame's address). Interned by (map, address, cpumode,
//    inline depth), so pprof's Location is a frame and its Line the function.
//  - A stack is a sequence of frame ids, leaf first, interned.
//  - Values: samples and their weight per (event, comm, stack), for the consumers that
//    aggregate stacks (folded stacks, flame graphs; later export and top). Consumers that need
//    each sample on its own (report's histogram, script) read ResolvedSample instead.
//
// Frames keep their symbols::ResolvedAddress, whose shared Map keeps the Map and its DSO alive:
// the pointers a frame or a function holds are valid while the Profile lives.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/chunked_vector.h"
#include "core/hashed_ids.h"
#include "report/interner.h"
#include "symbols/build_id.h"
#include "symbols/resolved_address.h"

namespace vperf::report {

inline constexpr uint32_t kNoId = UINT32_MAX;

struct ProfileMapping {
  std::shared_ptr<const symbols::Map> map;

  uint64_t start() const { return map->start; }
  uint64_t end() const { return map->end; }
  uint64_t pgoff() const { return map->pgoff; }
  const symbols::Dso* dso() const { return map->dso.get(); }
  // The mapped file's build-id (known once the DSO's symbols are loaded), if it has one.
  std::optional<symbols::BuildId> build_id() const;
};

struct ProfileFunction {
  const symbols::Symbol* symbol = nullptr;  // nullptr: unresolved, told apart by `address`
  const symbols::Dso* dso = nullptr;        // nullptr: outside every map
  uint64_t address = 0;    // the ip of the first frame seen in it (an unresolved one's own address)
  uint64_t order_key = 0;  // perf's order among call-graph branches of equal weight: symbol start, else ip
  char level = '.';        // perf's "[k]", "[.]", ... of the first frame seen in it
  uint32_t inlined_name = 0;  // for an inlined function, its name (Profile::text); 0 otherwise
};

// A frame of an unwound address's inline chain (perf's append_inlines): the name of its
// function when that is not the ELF symbol (empty: the symbol itself), and how many frames of
// the chain are outside it (0: the out-of-line function).
struct InlinePlace {
  std::string_view inlined_name;
  uint32_t depth = 0;
};

struct ProfileFrame {
  uint64_t ip = 0;  // as recorded or unwound
  uint8_t cpumode = 0;
  uint32_t inline_depth = 0;
  uint32_t mapping = kNoId;  // kNoId: outside every known map
  uint32_t function = kNoId;
  symbols::ResolvedAddress at;  // for an inlined frame, the real frame's resolution
};

struct ProfileValue {
  uint64_t samples = 0;
  uint64_t weight = 0;  // the sum of the weights the consumer counted (periods, usually)
};

struct ProfileCount {
  uint32_t event = 0;  // index among the record source's events
  uint32_t comm = 0;   // Profile::text id
  uint32_t stack = kNoId;
  ProfileValue value;
};

class Profile {
 public:
  // The frame for an address resolved to `at`; with `place`, one frame of its inline chain
  // (`at` stays the address's own resolution), a frame apart from the address's plain one.
  uint32_t intern_frame(uint64_t ip, uint8_t cpumode, const symbols::ResolvedAddress& at,
                        std::optional<InlinePlace> place = std::nullopt);
  // Frame ids, leaf first. The empty stack is a stack too.
  uint32_t intern_stack(std::span<const uint32_t> frames);
  uint32_t intern_text(std::string_view text) { return texts_.intern(text); }

  const ProfileFrame& frame(uint32_t id) const { return frames_[id]; }
  const ProfileFunction& function(uint32_t id) const { return functions_[id]; }
  const ProfileMapping& mapping(uint32_t id) const { return mappings_[id]; }
  std::span<const uint32_t> stack(uint32_t id) const {
    return std::span<const uint32_t>(stack_frames_).subspan(stacks_[id].first, stacks_[id].second);
  }
  const std::string& text(uint32_t id) const { return texts_.text(id); }
  size_t frame_count() const { return frames_.size(); }
  size_t function_count() const { return functions_.size(); }
  size_t mapping_count() const { return mappings_.size(); }
  size_t stack_count() const { return stacks_.size(); }

  // The inlined function's name of a frame or function ("" for a real one).
  std::string_view inlined_name(const ProfileFrame& frame) const { return text(functions_[frame.function].inlined_name); }
  bool has_inlined_functions() const { return inlined_functions_ != 0; }
  // As perf prints a callchain entry of a function: the symbol, "name (inlined)", or "0x<ip>".
  std::string function_label(uint32_t function) const;

  // Adds one sample of `weight` to (event, comm, stack).
  void count(uint32_t event, uint32_t comm, uint32_t stack, uint64_t weight);
  const std::vector<ProfileCount>& counts() const { return counts_; }  // in first-counted order
  // Drops the values, keeping frames, functions, mappings and stacks (their ids stay valid).
  void clear_counts();
  // Drops everything: every id given so far is forgotten (for a reader done with each sample).
  void clear();
  // How many times clear() ran: what a consumer keeps by frame or stack id holds while it stays.
  uint64_t generation() const { return generation_; }
  // About how much memory the frames, functions, stacks and texts take.
  size_t bytes() const;

 private:
  uint32_t intern_mapping(const std::shared_ptr<const symbols::Map>& map);
  uint32_t intern_function(const ProfileFrame& frame, std::string_view inlined_name);

  struct FrameKey {
    const void* map;
    uint64_t ip;
    uint32_t chain_slot;  // 0: the plain frame; depth + 1 in an inline chain
    uint8_t cpumode;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const;
  };
  struct FunctionKey {
    const void* object;  // the Symbol, else the Dso (or nullptr outside every map)
    uint64_t ip;         // 0 for a symbol or an inlined function
    uint32_t inlined_name;
    bool operator==(const FunctionKey&) const = default;
  };
  struct FunctionKeyHash {
    size_t operator()(const FunctionKey& k) const;
  };

  core::ChunkedVector<ProfileFrame> frames_;  // the largest part of a profile: never copied to grow
  std::vector<FrameKey> frame_keys_;  // by frame id
  core::HashedIds frame_ids_;
  std::vector<ProfileFunction> functions_;
  std::vector<FunctionKey> function_keys_;  // by function id
  core::HashedIds function_ids_;
  size_t inlined_functions_ = 0;
  std::vector<ProfileMapping> mappings_;
  std::unordered_map<const symbols::Map*, uint32_t> mapping_ids_;
  // Stacks: (offset, size) into stack_frames_; found by the hash of their frames.
  std::vector<uint32_t> stack_frames_;
  std::vector<std::pair<uint32_t, uint32_t>> stacks_;
  core::HashedIds stack_ids_;
  Interner texts_;
  std::vector<ProfileCount> counts_;
  core::HashedIds count_ids_;  // (event, comm, stack) -> index into counts_
  uint64_t generation_ = 0;
};

}  // namespace vperf::report
