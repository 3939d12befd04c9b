#pragma once
// vperf msr read [-C CPUS] [--json] REG...
// Reads model-specific registers on each CPU and prints the raw value with its decoded fields.
// REG is a name from msr/msr_register.h ("IA32_APERF", case-insensitive) or an address
// ("0x1ad"); an address vperf has no table for is printed raw.
#include <ostream>
#include <string>
#include <vector>

#include "msr/msr_reader.h"

namespace vperf::cli {

struct MsrReadOptions {
  std::string cpus;  // -C, sysfs cpulist format; empty = CPU 0
  bool json = false;
  std::vector<std::string> registers;
};

// Returns the exit status: 0 when every read succeeded, 1 when some failed (each failure is
// shown in place, with what to do). Throws UserError when nothing can be read at all (no msr
// driver, no permission) and usage_error for unknown register names or bad CPU lists.
int run_msr_read(const MsrReadOptions& options, const msr::MsrReader& reader, std::ostream& out);

}  // namespace vperf::cli
