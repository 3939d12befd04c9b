#pragma once
// vperf turbo [-C CPUS] [-I MS] [--count N] [--json]
// A showboost-style view of turbo (boost): the base frequency and where it came from, the turbo
// ratio limits, then one row per interval with the C0 cycles at base rate (MPERF) and at the
// actual clock (APERF), the share of time in C0, their ratio and the resulting MHz. The CPUs of
// -C (default: all online) are summed into one row. See docs/turbo.md.
#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "events/sysfs_pmu.h"
#include "msr/activity_counters.h"
#include "msr/msr_reader.h"
#include "perf/event_fd.h"
#include "session/run_loop.h"

namespace vperf::cli {

struct TurboOptions {
  std::string cpus;          // -C, sysfs cpulist format; empty = all online CPUs
  int interval_ms = 1000;    // -I
  std::optional<int> count;  // --count; nullopt = until SIGINT
  bool json = false;
};

// Everything run_turbo reads from the machine; the CLI passes the real ones, tests fakes.
struct TurboMachine {
  TurboMachine(const msr::MsrReader& device, const perf::PerfEventOpener& perf_opener, session::RunClock& run_clock)
      : msr(device), opener(perf_opener), clock(run_clock) {}

  const msr::MsrReader& msr;            // /dev/cpu/N/msr
  const perf::PerfEventOpener& opener;  // for the perf msr PMU
  // Intervals are timed by the monotonic clock, TIME is the wall clock's; the run ends early
  // once `stop_fd` is readable (perf::StopSignals' fd: SIGINT, SIGTERM, SIGHUP; -1: never).
  session::RunClock& clock;
  int stop_fd = -1;
  std::filesystem::path pmu_root = events::kSysfsPmuRoot;
  std::filesystem::path sysfs = "/sys";  // devices/system/cpu/online
  msr::CpuidFacts cpuid;                 // for the hint when APERF/MPERF are hidden
  std::optional<uint32_t> cpuid_16_eax;  // CPUID.16H:EAX when the leaf exists
  std::optional<double> cpuinfo_mhz;     // /proc/cpuinfo "cpu MHz" of the first CPU
};

// Returns the exit status (0, also when SIGINT ends the run). Throws UserError when APERF/MPERF
// cannot be read by any backend (one line naming what is missing, with the fix) or no base
// frequency is known, and usage_error for bad options.
int run_turbo(const TurboOptions& options, TurboMachine& machine, std::ostream& out);

}  // namespace vperf::cli
