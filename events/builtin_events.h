#pragma once
// perf's built-in symbolic events as data: the generic hardware events (PERF_TYPE_HARDWARE),
// the software events (PERF_TYPE_SOFTWARE) and the generic hardware cache events
// (PERF_TYPE_HW_CACHE), with the names and aliases that `perf list` prints and perf's event
// parser accepts.
//
// Hardware cache encoding (include/uapi/linux/perf_event.h):
//   config = cache_id | (op_id << 8) | (result_id << 16)
//   cache_id:  L1D=0 L1I=1 LL=2 DTLB=3 ITLB=4 BPU=5 NODE=6
//   op_id:     READ=0 ("load") WRITE=1 ("store") PREFETCH=2 ("prefetch")
//   result_id: ACCESS=0 MISS=1
// perf names a combination "<cache>-<op plural>" for accesses ("L1-dcache-loads") and
// "<cache>-<op>-misses" for misses ("L1-dcache-load-misses"). Not every cache supports every
// op (the instruction TLB is only read); perf's validity table is reproduced here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/resolved_event.h"

namespace vperf::events {

// Tool events are perf stat's own measurements, not kernel counters: duration_time (the
// run's wall time), user_time and system_time (the command's rusage), all in ns.
enum class BuiltinKind { Hardware, Software, HardwareCache, Tool };


struct BuiltinEvent {
  std::string name;   // the name perf lists first: "cpu-cycles", "L1-dcache-load-misses"
  std::string alias;  // the second name perf lists ("cycles"), or empty
  BuiltinKind kind = BuiltinKind::Hardware;
  uint32_t type = 0;  // PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_HW_CACHE or kToolEventType
  uint64_t config = 0;
  bool operator==(const BuiltinEvent&) const = default;
};

// In perf's table order (by config).
std::vector<BuiltinEvent> hardware_events();
std::vector<BuiltinEvent> software_events();
// Every valid cache x op x result combination, in (cache, op, result) order.
std::vector<BuiltinEvent> hardware_cache_events();
// duration_time, user_time, system_time, as perf lists them.
std::vector<BuiltinEvent> tool_events();

// Looks a name up the way perf's parser does: hardware and software names and aliases
// exactly ("cycles", "cs"), cache names with any of perf's spellings, case-sensitively as perf's lexer
// ("L1-dcache-load-misses", "l1d-loads", "LLC-misses", "dTLB-load-misses", "branch-loads").
// A cache name without an op means "load"; without a result it means "access".
// nullopt when the name is none of these.
std::optional<BuiltinEvent> find_builtin_event(std::string_view name);

// Every name and alias find_builtin_event accepts as listed by perf (no alternate spellings),
// for "did you mean" suggestions.
std::vector<std::string> builtin_event_names();

}  // namespace vperf::events
