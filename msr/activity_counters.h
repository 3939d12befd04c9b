#pragma once
// Where turbo's counters (IA32_APERF, IA32_MPERF and the TSC of each CPU) come from. Two
// backends behind one interface:
//   MsrDeviceCounters  the msr driver: pread of 0xE8, 0xE7 and 0x10 from /dev/cpu/N/msr
//                      (through MsrReader); needs `modprobe msr` and root.
//   MsrPmuCounters     the perf `msr` PMU: msr/aperf/, msr/mperf/, msr/tsc/ opened as one
//                      group per CPU, system-wide (pid -1, cpu N). The kernel lists aperf and
//                      mperf under <pmu_root>/msr/events only when CPUID.6:ECX[0] says the
//                      CPU has them; type and encodings ("event=0x01") are read from sysfs.
// open_activity_counters() picks the device when it reads APERF and MPERF, else the PMU, else
// says exactly what is missing and what would fix it. Nothing here invents a value: a counter
// that cannot be read is an Error.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "events/sysfs_pmu.h"
#include "msr/msr_reader.h"
#include "msr/turbo.h"
#include "perf/counter_group.h"
#include "perf/event_fd.h"

namespace vperf::msr {

class ActivityCounters {
 public:
  virtual ~ActivityCounters() = default;
  // "/dev/cpu/N/msr", "perf msr PMU (msr/aperf/, msr/mperf/, msr/tsc/)"
  virtual std::string describe() const = 0;
  // `cpu`'s counters now; `cpu` must be one the counters were opened for.
  virtual Result<ActivitySample> read(int cpu) const = 0;
};

class MsrDeviceCounters final : public ActivityCounters {
 public:
  explicit MsrDeviceCounters(const MsrReader& reader) : reader_(reader) {}
  std::string describe() const override { return "/dev/cpu/N/msr"; }
  Result<ActivitySample> read(int cpu) const override;

 private:
  const MsrReader& reader_;
};

// The perf_event_attr.config of each event, from the PMU's events/ and format/ files.
struct MsrPmuEncoding {
  uint32_t type = 0;
  uint64_t aperf = 0;
  uint64_t mperf = 0;
  uint64_t tsc = 0;
};
// The error names what the PMU lacks ("the msr PMU offers only smi, tsc").
Result<MsrPmuEncoding> msr_pmu_encoding(const events::SysfsPmu& pmu);

class MsrPmuCounters final : public ActivityCounters {
 public:
  static Result<std::unique_ptr<MsrPmuCounters>> open(const perf::PerfEventOpener& opener,
                                                      const MsrPmuEncoding& encoding, std::span<const int> cpus);
  std::string describe() const override { return "perf msr PMU (msr/aperf/, msr/mperf/, msr/tsc/)"; }
  // The PMU counts from 0 at open; deltas are what matter.
  Result<ActivitySample> read(int cpu) const override;

 private:
  explicit MsrPmuCounters(std::map<int, perf::CounterGroup> groups) : groups_(std::move(groups)) {}
  std::map<int, perf::CounterGroup> groups_;
};

// What CPUID says, gathered by the caller (msr/ cannot use host/). nullopt = not known.
struct CpuidFacts {
  std::optional<bool> hypervisor;   // CPUID.1:ECX[31]: running under a hypervisor
  std::optional<bool> aperf_mperf;  // CPUID.6:ECX[0]: IA32_APERF/IA32_MPERF exist
};

struct ActivityCounterSources {
  const MsrReader& device;
  const perf::PerfEventOpener& opener;
  std::filesystem::path pmu_root = events::kSysfsPmuRoot;
  CpuidFacts cpuid;
};

struct ActivityCounterChoice {
  std::unique_ptr<ActivityCounters> counters;  // null when neither backend has APERF+MPERF
  // Otherwise the two halves of vperf's one error line: what is missing, and what to do.
  std::string missing;  // "APERF/MPERF are hidden here: no /dev/cpu/0/msr (...) and the msr PMU offers only smi, tsc"
  std::string hint;
};

// `cpus` must not be empty; the device is probed on cpus[0].
ActivityCounterChoice open_activity_counters(const ActivityCounterSources& sources, std::span<const int> cpus);

}  // namespace vperf::msr
