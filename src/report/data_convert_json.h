#pragma once
// perf data convert --to-json: a recording as perf 6.1's JSON (data-convert-json.c), for tools
// that read that instead of perf script's text. Layout, tab-indented as perf writes it:
//
//   {"linux-perf-json-version": 1,
//    "headers": {header-version, captured-on (the file's mtime, UTC), data-offset, data-size,
//                feat-offset, hostname, os-release, arch, cpu-desc, cpuid, nrcpus-online,
//                nrcpus-avail, perf-version, cmdline [...]},
//    "samples": [{timestamp, pid, tid, cpu (when any event samples it; -1 for one that does
//                 not), comm, callchain [{ip "0x..", symbol, dso}]}, ...]}
//
// A sample's callchain is its recorded one, context markers left out, each address resolved on
// its own (symbol name without offset, the DSO's short name, both only for a resolved symbol);
// without a recorded callchain, its ip alone. Strings are escaped as RFC 8259 asks (perf
// prints bytes above 0x7f as \uffffffXX, which no JSON reader takes: vperf passes them through).
#include <cstdint>
#include <ostream>
#include <string>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "symbols/machines.h"

namespace vperf::report {

struct JsonConversion {
  uint64_t samples = 0;
  data::ReadStats stats;
};

// Writes `reader`'s recording (read from `path`, whose mtime is "captured-on") to `out`.
Result<JsonConversion> write_perf_json(data::PerfDataReader& reader, const std::string& path, symbols::Machines& machines,
                                       std::ostream& out);

}  // namespace vperf::report
