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
#include "perf/stop_signals.h"

namespace vperf::cli {

struct TurboOptions {
  std::string cpus;          // -C, sysfs cpulist format; empty = all online CPUs
  int interval_ms = 1000;    // -I
  std::optional<int> count;  // --count; nullopt = until SIGINT
  bool json = false;
};

// Time as run_turbo sees it: a monotonic clock for the length of each interval, the wall clock
// for the TIME column, and a sleep that SIGINT cuts short.
class TurboClock {
 public:
  virtual ~TurboClock() = default;
  virtual std::chrono::nanoseconds monotonic() const = 0;
  virtual std::chrono::system_clock::time_point wall() const = 0;
  // Sleeps `duration`; false when the user asked to stop (SIGINT), which ends the run.
  virtual bool sleep(std::chrono::milliseconds duration) = 0;
};

// The real clock: steady_clock for intervals, system_clock for TIME, and a sleep that returns
// false as soon as a stop signal (SIGINT, SIGTERM, SIGHUP) has arrived since `stop` was
// installed: it waits in poll() on the self-pipe of perf::StopSignals.
class SystemTurboClock final : public TurboClock {
 public:
  explicit SystemTurboClock(const perf::StopSignals& stop) : stop_(stop) {}
  std::chrono::nanoseconds monotonic() const override;
  std::chrono::system_clock::time_point wall() const override;
  bool sleep(std::chrono::milliseconds duration) override;

 private:
  const perf::StopSignals& stop_;
};

// Everything run_turbo reads from the machine; the CLI passes the real ones, tests fakes.
struct TurboMachine {
  TurboMachine(const msr::MsrReader& device, const perf::PerfEventOpener& perf_opener, TurboClock& turbo_clock)
      : msr(device), opener(perf_opener), clock(turbo_clock) {}

  const msr::MsrReader& msr;            // /dev/cpu/N/msr
  const perf::PerfEventOpener& opener;  // for the perf msr PMU
  TurboClock& clock;
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
