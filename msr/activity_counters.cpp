#include "msr/activity_counters.h"

#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "events/attr_builder.h"
#include "msr/msr_register.h"

namespace vperf::msr {

namespace {

constexpr uint64_t kGroupReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

// One event alias ("event=0x01") encoded through the PMU's format/ terms.
Result<uint64_t> encode_alias(const events::SysfsPmu& pmu, const events::PmuEventAlias& alias) {
  events::PmuConfig config;
  for (std::string_view part : split(alias.terms, ',')) {
    part = trim(part);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    const std::string_view key = part.substr(0, eq);
    std::optional<uint64_t> value =
        eq == std::string_view::npos ? std::optional<uint64_t>(1) : parse_u64(part.substr(eq + 1));
    const events::PmuFormatTerm* term = pmu.find_term(key);
    if (!value || term == nullptr)
      return Error{"cannot encode " + pmu.name + "/" + alias.name + "/ ('" + alias.terms + "'): " +
                   (term == nullptr ? "no format/" + std::string(key) : "bad value in '" + std::string(part) + "'")};
    auto placed = events::place_term_value(*term, *value, config);
    if (!placed) return placed.error();
    config = *placed;
  }
  if (config.config1 != 0 || config.config2 != 0)
    return Error{pmu.name + "/" + alias.name + "/ uses config1/config2, which the msr PMU never does"};
  return config.config;
}

perf_event_attr counting_attr(uint32_t type, uint64_t config) {
  perf_event_attr attr = events::blank_attr(type, config);
  attr.read_format = kGroupReadFormat;
  // The msr PMU refuses exclude_* bits (PERF_PMU_CAP_NO_EXCLUDE): the counters are the CPU's.
  return attr;
}

struct DeviceProbe {
  bool usable = false;
  int errno_value = 0;
  std::string reason;  // why not, for the error line
};

DeviceProbe probe_device(const MsrReader& device, int cpu) {
  const std::string path = device.device_name(cpu);
  for (uint32_t address : {address::kAperf, address::kMperf, address::kTimeStampCounter}) {
    auto value = device.read(cpu, address);
    if (value) continue;
    const int err = value.error().errno_value;
    const MsrRegister* reg = find_register(address);
    const std::string label = std::string(reg->name) + " (" + hex(address) + ")";
    switch (err) {
      case ENOENT:
      case ENODEV:
        return {false, err, "no " + path + " (msr module not loaded)"};
      case EACCES:
      case EPERM:
        return {false, err, path + " is not readable (it needs root with CAP_SYS_RAWIO)"};
      case EIO:
        return {false, err, path + " faults reading " + label};
      default:
        return {false, err, path + ": " + value.error().describe()};
    }
  }
  return {true, 0, ""};
}

struct PmuProbe {
  std::unique_ptr<MsrPmuCounters> counters;
  int errno_value = 0;
  bool lacks_events = false;
  std::string reason;
};

PmuProbe probe_pmu(const ActivityCounterSources& sources, std::span<const int> cpus) {
  auto pmu = events::load_sysfs_pmu(sources.pmu_root, "msr");
  if (!pmu)
    return {nullptr, pmu.error().errno_value, true,
            "there is no msr PMU (" + (sources.pmu_root / "msr").string() + ")"};
  auto encoding = msr_pmu_encoding(*pmu);
  if (!encoding) return {nullptr, 0, true, encoding.error().message};
  auto counters = MsrPmuCounters::open(sources.opener, *encoding, cpus);
  // The message already holds the errno's text.
  if (!counters) return {nullptr, counters.error().errno_value, false, counters.error().message};
  return {std::move(counters).value(), 0, false, ""};
}

const char* const kVmHowTo =
    "measure turbo on the host instead (modprobe msr; vperf turbo), or compare cycles with ref-cycles where the VM "
    "has a vPMU (perf stat -e cycles,ref-cycles); KVM lets a guest read APERF/MPERF only when the VMM enables "
    "KVM_X86_DISABLE_EXITS_APERFMPERF (new in 2025) and sets CPUID.6:ECX[0], which QEMU (-cpu host included) and "
    "libvirt do not do";

std::string hint_for(const DeviceProbe& device, const PmuProbe& pmu, const CpuidFacts& cpuid) {
  std::vector<std::string> parts;
  if (device.errno_value == EACCES || device.errno_value == EPERM) parts.push_back("run as root");
  if (pmu.errno_value == EACCES || pmu.errno_value == EPERM)
    parts.push_back("counting system-wide with the msr PMU needs root or kernel.perf_event_paranoid <= 0");
  const bool no_cpuid_bit = cpuid.aperf_mperf.has_value() && !*cpuid.aperf_mperf;
  if (cpuid.hypervisor.value_or(false)) {
    if (no_cpuid_bit || !cpuid.aperf_mperf)
      parts.push_back(std::string("this VM's hypervisor does not pass APERF/MPERF through") +
                      (no_cpuid_bit ? " (CPUID.6:ECX[0]=0)" : "") +
                      ", so loading the msr module cannot help: " + kVmHowTo);
    else if (device.errno_value == ENOENT || device.errno_value == ENODEV)
      parts.push_back(msr_driver_hint());
  } else if (cpuid.hypervisor.has_value()) {  // bare metal
    if (no_cpuid_bit)
      parts.push_back("this CPU has no APERF/MPERF (CPUID.6:ECX[0]=0); compare cycles with ref-cycles instead");
    else if (device.errno_value == ENOENT || device.errno_value == ENODEV)
      parts.push_back(msr_driver_hint());
  } else {
    parts.push_back(std::string("on bare metal: modprobe msr; in a VM the hypervisor must pass APERF/MPERF "
                                "through, so ") +
                    kVmHowTo);
  }
  if (parts.empty()) {
    std::string generic = msr_error_hint(device.errno_value);
    parts.push_back(generic.empty() ? std::string("compare cycles with ref-cycles instead") : generic);
  }
  return join(parts, "; ");
}

}  // namespace

Result<ActivitySample> MsrDeviceCounters::read(int cpu) const {
  // APERF and MPERF back to back, so that the ratio of their deltas is not skewed by the TSC read.
  auto aperf = reader_.read(cpu, address::kAperf);
  if (!aperf) return aperf.error();
  auto mperf = reader_.read(cpu, address::kMperf);
  if (!mperf) return mperf.error();
  auto tsc = reader_.read(cpu, address::kTimeStampCounter);
  if (!tsc) return tsc.error();
  return ActivitySample{*aperf, *mperf, *tsc};
}

Result<MsrPmuEncoding> msr_pmu_encoding(const events::SysfsPmu& pmu) {
  const events::PmuEventAlias* aperf = pmu.find_event("aperf");
  const events::PmuEventAlias* mperf = pmu.find_event("mperf");
  const events::PmuEventAlias* tsc = pmu.find_event("tsc");
  if (!aperf || !mperf || !tsc) {
    std::vector<std::string> names;
    for (const events::PmuEventAlias& alias : pmu.events) names.push_back(alias.name);
    return Error{names.empty() ? "the " + pmu.name + " PMU offers no events"
                               : "the " + pmu.name + " PMU offers only " + join(names, ", ")};
  }
  MsrPmuEncoding encoding;
  encoding.type = pmu.type;
  for (auto [alias, out] :
       {std::pair{aperf, &encoding.aperf}, std::pair{mperf, &encoding.mperf}, std::pair{tsc, &encoding.tsc}}) {
    auto config = encode_alias(pmu, *alias);
    if (!config) return config.error();
    *out = *config;
  }
  return encoding;
}

Result<std::unique_ptr<MsrPmuCounters>> MsrPmuCounters::open(const perf::PerfEventOpener& opener,
                                                             const MsrPmuEncoding& encoding,
                                                             std::span<const int> cpus) {
  const std::vector<perf_event_attr> attrs{counting_attr(encoding.type, encoding.aperf),
                                           counting_attr(encoding.type, encoding.mperf),
                                           counting_attr(encoding.type, encoding.tsc)};
  std::map<int, perf::CounterGroup> groups;
  for (int cpu : cpus) {
    perf::OpenTarget target;
    target.pid = -1;
    target.cpu = cpu;
    auto group = perf::CounterGroup::open(opener, attrs, target);
    if (!group)
      return Error{"the msr PMU's aperf, mperf, tsc did not open on CPU " + std::to_string(cpu) + ": " +
                       group.error().describe(),
                   group.error().errno_value};
    groups.emplace(cpu, std::move(group).value());
  }
  return std::unique_ptr<MsrPmuCounters>(new MsrPmuCounters(std::move(groups)));
}

Result<ActivitySample> MsrPmuCounters::read(int cpu) const {
  auto it = groups_.find(cpu);
  if (it == groups_.end()) return Error{"the msr PMU counters were not opened on CPU " + std::to_string(cpu)};
  auto values = it->second.read();
  if (!values)
    return Error{"read msr PMU counters on CPU " + std::to_string(cpu) + ": " + values.error().describe(),
                 values.error().errno_value};
  const std::vector<perf::CounterReading>& v = *values;
  // The msr PMU never multiplexes; a counter that did not run has no value to show.
  for (const perf::CounterReading& r : v)
    if (r.time_running == 0 && r.time_enabled != 0)
      return Error{"the msr PMU counters of CPU " + std::to_string(cpu) + " were not running"};
  return ActivitySample{v[0].value, v[1].value, v[2].value};
}

ActivityCounterChoice open_activity_counters(const ActivityCounterSources& sources, std::span<const int> cpus) {
  ActivityCounterChoice choice;
  const int first = cpus.empty() ? 0 : cpus.front();
  DeviceProbe device = probe_device(sources.device, first);
  if (device.usable) {
    choice.counters = std::make_unique<MsrDeviceCounters>(sources.device);
    return choice;
  }
  PmuProbe pmu = probe_pmu(sources, cpus);
  if (pmu.counters) {
    choice.counters = std::move(pmu.counters);
    return choice;
  }
  choice.missing = (pmu.lacks_events ? "APERF/MPERF are hidden here: " : "APERF/MPERF cannot be read here: ") +
                   device.reason + " and " + pmu.reason;
  choice.hint = hint_for(device, pmu, sources.cpuid);
  return choice;
}

}  // namespace vperf::msr
