#include "events/builtin_events.h"

#include <linux/perf_event.h>

#include <array>

#include "core/strings.h"

namespace vperf::events {

namespace {

struct SymbolRow {
  std::string_view name;
  std::string_view alias;
  uint64_t config;
};

// perf's event_symbols_hw, in config order.
constexpr std::array<SymbolRow, 10> kHardwareRows{{
    {"cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", "", PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", "", PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", "", PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", "", PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", "", PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", "", PERF_COUNT_HW_REF_CPU_CYCLES},
}};

// perf's event_symbols_sw, in config order.
constexpr std::array<SymbolRow, 12> kSoftwareRows{{
    {"cpu-clock", "", PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", "", PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", "", PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", "", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", "", PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", "", PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", "", PERF_COUNT_SW_DUMMY},
    {"bpf-output", "", PERF_COUNT_SW_BPF_OUTPUT},
    {"cgroup-switches", "", PERF_COUNT_SW_CGROUP_SWITCHES},
}};

// perf's tool events, in perf's order; config is the ToolEvent.
constexpr std::array<SymbolRow, 3> kToolRows{{
    {"duration_time", "", static_cast<uint64_t>(ToolEvent::DurationTime)},
    {"user_time", "", static_cast<uint64_t>(ToolEvent::UserTime)},
    {"system_time", "", static_cast<uint64_t>(ToolEvent::SystemTime)},
}};

// Spellings perf accepts for each part of a cache event name; the first one is the one
// perf prints (for ops, results in "-loads" use the second, plural, spelling).
using Spellings = std::array<std::string_view, 5>;

constexpr std::array<Spellings, 7> kCacheSpellings{{
    {"L1-dcache", "l1-d", "l1d", "L1-data", ""},
    {"L1-icache", "l1-i", "l1i", "L1-instruction", ""},
    {"LLC", "L2", "", "", ""},
    {"dTLB", "d-tlb", "Data-TLB", "", ""},
    {"iTLB", "i-tlb", "Instruction-TLB", "", ""},
    {"branch", "branches", "bpu", "btb", "bpc"},
    {"node", "", "", "", ""},
}};

constexpr std::array<Spellings, 3> kOpSpellings{{
    {"load", "loads", "read", "", ""},
    {"store", "stores", "write", "", ""},
    {"prefetch", "prefetches", "speculative-read", "speculative-load", ""},
}};

constexpr std::array<Spellings, 2> kResultSpellings{{
    {"refs", "Reference", "ops", "access", ""},
    {"misses", "miss", "", "", ""},
}};

constexpr unsigned op_bit(int op) { return 1u << op; }
constexpr unsigned kRead = op_bit(PERF_COUNT_HW_CACHE_OP_READ);
constexpr unsigned kWrite = op_bit(PERF_COUNT_HW_CACHE_OP_WRITE);
constexpr unsigned kPrefetch = op_bit(PERF_COUNT_HW_CACHE_OP_PREFETCH);

// Which ops each cache supports (perf's evsel__hw_cache_stat).
constexpr std::array<unsigned, 7> kValidOps{{
    kRead | kWrite | kPrefetch,  // L1D
    kRead | kPrefetch,           // L1I
    kRead | kWrite | kPrefetch,  // LL
    kRead | kWrite | kPrefetch,  // DTLB
    kRead,                       // ITLB
    kRead,                       // BPU
    kRead | kWrite | kPrefetch,  // NODE
}};

uint64_t cache_config(size_t cache, size_t op, size_t result) {
  return cache | (op << 8) | (result << 16);
}

std::string cache_event_name(size_t cache, size_t op, size_t result) {
  std::string name(kCacheSpellings[cache][0]);
  if (result == PERF_COUNT_HW_CACHE_RESULT_ACCESS) return name + "-" + std::string(kOpSpellings[op][1]);
  return name + "-" + std::string(kOpSpellings[op][0]) + "-" + std::string(kResultSpellings[result][0]);
}

std::vector<BuiltinEvent> from_rows(const auto& rows, BuiltinKind kind, uint32_t type) {
  std::vector<BuiltinEvent> out;
  for (const SymbolRow& row : rows)
    out.push_back(BuiltinEvent{std::string(row.name), std::string(row.alias), kind, type, row.config});
  return out;
}

// Lengths of the spellings in `table` that `text` starts with, each followed by '-' or the
// end. Several can match ("l1-d" and "l1-dcache" style overlaps), so all are returned and
// the caller tries each.
template <size_t N>
std::vector<std::pair<size_t, size_t>> prefix_matches(std::string_view text, const std::array<Spellings, N>& table) {
  std::vector<std::pair<size_t, size_t>> out;  // (row, length)
  for (size_t row = 0; row < N; ++row) {
    for (std::string_view spelling : table[row]) {
      if (spelling.empty() || !text.starts_with(spelling)) continue;
      if (text.size() == spelling.size() || text[spelling.size()] == '-') out.emplace_back(row, spelling.size());
    }
  }
  return out;
}

// Parses the "-op-result" tail after a cache name; both parts optional, in either order,
// as perf's parse_events_add_cache allows. Returns (op, result) or nullopt.
std::optional<std::pair<size_t, size_t>> parse_cache_tail(std::string_view tail, size_t cache) {
  std::optional<size_t> op, result;
  // At most two parts, like perf's lexer ({type}-{op_result}-{op_result}).
  for (int part = 0; part < 2 && !tail.empty(); ++part) {
    if (tail.front() != '-') return std::nullopt;
    tail.remove_prefix(1);
    bool matched = false;
    if (!op) {
      for (auto [row, len] : prefix_matches(tail, kOpSpellings)) {
        if (len == tail.size() || (tail.size() > len && tail[len] == '-')) {
          op = row;
          tail.remove_prefix(len);
          matched = true;
          break;
        }
      }
    }
    if (!matched && !result) {
      for (auto [row, len] : prefix_matches(tail, kResultSpellings)) {
        result = row;
        tail.remove_prefix(len);
        matched = true;
        break;
      }
    }
    if (!matched) return std::nullopt;
  }
  if (!tail.empty()) return std::nullopt;
  size_t op_id = op.value_or(PERF_COUNT_HW_CACHE_OP_READ);
  if ((kValidOps[cache] & op_bit(static_cast<int>(op_id))) == 0) return std::nullopt;
  return std::pair{op_id, result.value_or(PERF_COUNT_HW_CACHE_RESULT_ACCESS)};
}

}  // namespace

std::vector<BuiltinEvent> hardware_events() {
  return from_rows(kHardwareRows, BuiltinKind::Hardware, PERF_TYPE_HARDWARE);
}

std::vector<BuiltinEvent> software_events() {
  return from_rows(kSoftwareRows, BuiltinKind::Software, PERF_TYPE_SOFTWARE);
}

std::vector<BuiltinEvent> tool_events() { return from_rows(kToolRows, BuiltinKind::Tool, kToolEventType); }

std::vector<BuiltinEvent> hardware_cache_events() {
  std::vector<BuiltinEvent> out;
  for (size_t cache = 0; cache < kCacheSpellings.size(); ++cache)
    for (size_t op = 0; op < kOpSpellings.size(); ++op) {
      if ((kValidOps[cache] & op_bit(static_cast<int>(op))) == 0) continue;
      for (size_t result = 0; result < kResultSpellings.size(); ++result)
        out.push_back(BuiltinEvent{cache_event_name(cache, op, result), "", BuiltinKind::HardwareCache,
                                   PERF_TYPE_HW_CACHE, cache_config(cache, op, result)});
    }
  return out;
}

std::optional<BuiltinEvent> find_builtin_event(std::string_view name) {
  for (const std::vector<BuiltinEvent>& symbols : {hardware_events(), software_events(), tool_events()}) {
    for (const BuiltinEvent& event : symbols) {
      if (event.name == name || (!event.alias.empty() && event.alias == name)) return event;
    }
  }
  for (auto [cache, len] : prefix_matches(name, kCacheSpellings)) {
    auto tail = parse_cache_tail(name.substr(len), cache);
    if (!tail) continue;
    auto [op, result] = *tail;
    return BuiltinEvent{cache_event_name(cache, op, result), "", BuiltinKind::HardwareCache, PERF_TYPE_HW_CACHE,
                        cache_config(cache, op, result)};
  }
  return std::nullopt;
}

std::vector<std::string> builtin_event_names() {
  std::vector<std::string> out;
  for (const auto& list : {hardware_events(), software_events(), tool_events(), hardware_cache_events()})
    for (const BuiltinEvent& event : list) {
      out.push_back(event.name);
      if (!event.alias.empty()) out.push_back(event.alias);
    }
  return out;
}

}  // namespace vperf::events
