#pragma once
// perf report's sort keys (--sort) that vperf models, with the column each one shows:
//   comm    "Command"          the thread's comm
//   pid     "    Pid:Command"  "%7d:%s" tid and comm (perf's "pid" key is per thread)
//   tid     "    Tid:Command"  vperf's name for the same per-thread key (perf 6.1 has no "tid")
//   dso     "Shared Object"    the dso's short name, "[unknown]" outside every map
//   sym     "Symbol"           "[k] name", "[.] name", "[.] 0x<16 hex digits>" when unresolved
//   cpu     "CPU"              "%3.3d" (perf prints -1 as "-001" when samples carry no CPU)
//   trace   "Trace output"     a tracepoint sample's fields as its print fmt shows them (perf's
//                              default key when every event is a tracepoint)
// Order between entries that tie on the overhead columns is perf's: ascending comm, tid, dso
// name, symbol name, cpu; an unresolved dso or symbol after the resolved ones.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::report {

enum class SortKey : uint8_t { Comm, Pid, Tid, Dso, Sym, Cpu, Trace, Srcline };

inline std::vector<SortKey> default_sort_keys() { return {SortKey::Comm, SortKey::Dso, SortKey::Sym}; }

// "comm,dso,sym": names as perf accepts them (a prefix of comm, pid, dso, symbol, cpu, matched
// in perf's order; "tid" and "trace" exactly). An unknown key is an Error naming it.
Result<std::vector<SortKey>> parse_sort_keys(std::string_view text);

std::string_view sort_key_name(SortKey key);     // "comm", "pid", "tid", "dso", "sym", "cpu"
std::string_view sort_key_header(SortKey key);   // the column header as perf prints it
std::string sort_keys_text(const std::vector<SortKey>& keys);  // "comm,dso,sym"

// perf report -F's output fields: perf's numeric columns (its "hpp" formats) or a sort key's
// column. Overhead is the entry's own period, OverheadSys/Us/GuestSys/GuestUs the part of it
// sampled in that cpumode, Children the period with callees, Samples and Period the counts.
enum class FieldKind : uint8_t { Overhead, OverheadSys, OverheadUs, OverheadGuestSys, OverheadGuestUs, Children, Samples, Period, Key };

struct OutputField {
  FieldKind kind = FieldKind::Key;
  SortKey key = SortKey::Comm;  // the column's key, for FieldKind::Key
  bool operator==(const OutputField&) const = default;
};

// "overhead,sym": perf's field names, case-insensitive, a prefix matched as perf matches it
// (sort keys first, then overhead, overhead_sys, overhead_us, overhead_guest_sys,
// overhead_guest_us, overhead_children, sample, period). A repeated field counts once; an
// unknown one is an Error naming it.
Result<std::vector<OutputField>> parse_output_fields(std::string_view text);
std::string_view field_header(OutputField field);  // "Overhead", "sys", "guest usr", "Symbol", ...

}  // namespace vperf::report
