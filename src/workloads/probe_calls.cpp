// The probe target of vperf probe's tests: one function called a known number of times with
// arguments of every kind perf probe fetches (an int, a long, a string, a pointer to a struct
// with a nested struct, an array and a string member) and a return value computed from them.
// vperf-workload builds this file without optimisation (its arguments live in the frame, found
// through the frame base and the CFI, and a probe skips the prologue); vperf-workload-dwarf
// builds it with -O2 (its arguments are in registers at the entry, through location lists).
// Both keep the symbol unmangled (extern "C") so perf and vperf find it by the same name, and
// noipa keeps GCC from seeing into probe_target from its caller: otherwise it drops the stores
// of record members probe_target never reads (label), and a probe would fetch garbage.
#include <cinttypes>
#include <cstdio>

#include "workloads.h"

namespace vperf::workloads {

extern "C" {

struct ProbeFlags {
  short flag;
  unsigned char small;
};

struct ProbeRecord {
  int id;
  long weight;
  const char* label;
  ProbeFlags flags;
  int values[4];
};

// index * scale, plus the record's weight when its flag is set, plus the label's first
// character and values[2]: what a %return probe's $retval must show for each call.
__attribute__((noipa, used)) long probe_target(int index, long scale, const char* label, const ProbeRecord* record) {
  long result = index * scale;
  if (record->flags.flag != 0) result += record->weight;
  return result + label[0] + record->values[2];
}

// Variables at fixed addresses, for probes that fetch a global or a static: before each call the
// caller counts it in probe_calls_made (so probe_target's entry sees index + 1) and copies the
// call's record into probe_last_record. Being read after the loop keeps them stored in it. They
// come after probe_target so its lines stay where the line-probe tests expect them.
long probe_calls_made = 0;
static ProbeRecord probe_last_record;

}  // extern "C"

int run_probe_calls(uint64_t n, const Options& options) {
  long sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const int index = static_cast<int>(i);
    ProbeRecord record{index, index * 7L, i % 2 ? "odd" : "even", {static_cast<short>(i % 3), static_cast<unsigned char>(i & 0xff)}, {1, 2, index, 4}};
    ++probe_calls_made;
    probe_last_record = record;
    sum += probe_target(index, index * 3L, record.label, &record);
  }
  if (options.verbose)
    std::printf("probe-calls: %" PRIu64 " calls of probe_target, results summing to %ld, the last weight %ld\n", n, sum, probe_last_record.weight);
  return 0;
}

}  // namespace vperf::workloads
