#include "cli/cmd_turbo.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "core/cpu_set.h"
#include "core/files.h"
#include "core/strings.h"
#include "host/cpuid_decode.h"
#include "host/cpuid_source.h"
#include "msr/base_frequency.h"
#include "msr/msr_register.h"
#include "msr/turbo_view.h"
#include "output/json.h"
#include "perf/stop_signals.h"

namespace vperf::cli {

namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr int kMinIntervalMs = 10;

std::vector<int> select_cpus(const TurboOptions& options, const std::filesystem::path& sysfs) {
  auto online = online_cpus(sysfs);
  if (!online) throw UserError("cannot list the online CPUs: " + online.error().describe(), "");
  if (options.cpus.empty()) return *online;
  auto parsed = parse_cpu_list(options.cpus);
  if (!parsed) throw usage_error("-C " + options.cpus + ": " + parsed.error().message, "give CPUs as 0-3,8");
  for (int cpu : *parsed)
    if (!std::binary_search(online->begin(), online->end(), cpu))
      throw usage_error("CPU " + std::to_string(cpu) + " is not online", "online CPUs: " + format_cpu_list(*online));
  return std::move(parsed).value();
}

std::vector<msr::ActivitySample> read_all(const msr::ActivityCounters& counters, const std::vector<int>& cpus) {
  std::vector<msr::ActivitySample> samples;
  samples.reserve(cpus.size());
  for (int cpu : cpus) {
    auto s = counters.read(cpu);
    if (!s)
      throw UserError("cannot read APERF/MPERF of CPU " + std::to_string(cpu) + ": " + s.error().describe(),
                      s.error().errno_value == ENXIO ? "the CPU went offline" : "");
    samples.push_back(*s);
  }
  return samples;
}

std::string hms(std::chrono::system_clock::time_point t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm {};
  localtime_r(&secs, &tm);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

msr::TurboSetup set_up(const TurboOptions& options, TurboMachine& machine) {
  msr::TurboSetup setup;
  setup.cpus = select_cpus(options, machine.sysfs);
  setup.choice = msr::open_activity_counters({machine.msr, machine.opener, machine.pmu_root, machine.cpuid}, setup.cpus);
  if (!setup.choice.counters) throw UserError(setup.choice.missing, setup.choice.hint);
  const bool device_counts = dynamic_cast<const msr::MsrDeviceCounters*>(setup.choice.counters.get()) != nullptr;

  msr::BaseFrequencyInputs base_inputs;
  if (auto platform_info = machine.msr.read(setup.cpus.front(), msr::address::kPlatformInfo))
    base_inputs.platform_info = *platform_info;
  base_inputs.cpuid_16_eax = machine.cpuid_16_eax;
  base_inputs.cpuinfo_mhz = machine.cpuinfo_mhz;
  auto base = msr::choose_base_frequency(base_inputs);
  if (!base)
    throw UserError("cannot tell the base frequency that turbo is measured against: " + base.error().message,
                    "none of MSR_PLATFORM_INFO, CPUID leaf 0x16 or /proc/cpuinfo gives it on this machine");
  setup.base = *base;
  setup.limits = msr::read_turbo_limits(machine.msr, setup.cpus.front(), device_counts);
  return setup;
}

}  // namespace

int run_turbo(const TurboOptions& options, TurboMachine& machine, std::ostream& out) {
  if (options.interval_ms < kMinIntervalMs)
    throw usage_error("-I " + std::to_string(options.interval_ms) + " is too short",
                      "give an interval of at least " + std::to_string(kMinIntervalMs) + " ms");
  if (options.count && *options.count < 1)
    throw usage_error("--count " + std::to_string(*options.count) + " must be at least 1", "");
  const msr::TurboSetup setup = set_up(options, machine);
  if (!options.json) out << msr::turbo_text_header(setup, options.interval_ms) << std::flush;

  boost::json::array rows;
  std::vector<msr::ActivitySample> before = read_all(*setup.choice.counters, setup.cpus);
  nanoseconds previous = machine.clock.now();
  const milliseconds interval(options.interval_ms);
  session::RunLoop loop(machine.clock);
  if (machine.stop_fd >= 0) loop.watch_fd(machine.stop_fd, [](short) { return session::Next::stop; });
  int done = 0;
  loop.every(previous + interval, interval, [&] {
    std::vector<msr::ActivitySample> after = read_all(*setup.choice.counters, setup.cpus);
    const nanoseconds end = machine.clock.now();
    const double seconds = std::chrono::duration<double>(end - previous).count();
    std::vector<msr::ActivityDelta> deltas;
    for (size_t c = 0; c < setup.cpus.size(); ++c) deltas.push_back(msr::activity_delta(before[c], after[c]));
    const msr::ActivityDelta sum = msr::sum_deltas(deltas);
    const msr::TurboRow row = msr::turbo_row(sum, setup.base.mhz, seconds);
    const std::string time = hms(machine.clock.wall());
    if (options.json) {
      rows.push_back(msr::turbo_row_json(time, seconds, row, sum));
    } else {
      out << msr::turbo_row_text(time, row) << '\n';
      out.flush();
    }
    before = std::move(after);
    previous = end;
    return options.count && ++done >= *options.count ? session::Next::stop : session::Next::keep_going;
  });
  if (Result<bool> ran = loop.run(); !ran) throw UserError("cannot wait for the next interval: " + ran.error().describe(), "");
  if (options.json) output::print_json(out, msr::turbo_report_json(setup, options.interval_ms, std::move(rows)));
  return 0;
}

namespace {

msr::CpuidFacts live_cpuid_facts(const host::CpuidSource& cpuid) {
  const host::CpuidReport report = host::decode_cpuid(cpuid);
  msr::CpuidFacts facts;
  facts.hypervisor = report.cpu.hypervisor_bit;
  if (report.cpu.max_basic_leaf >= 6) facts.aperf_mperf = report.cpu.aperf_mperf;
  return facts;
}

std::optional<uint32_t> live_cpuid_16_eax(const host::CpuidSource& cpuid) {
  auto leaf0 = cpuid.query(0, 0);
  if (!leaf0 || leaf0->eax < 0x16) return std::nullopt;
  auto leaf16 = cpuid.query(0x16, 0);
  if (!leaf16) return std::nullopt;
  return leaf16->eax;
}

int run_turbo_here(const TurboOptions& options, std::ostream& out) {
  host::LiveCpuid cpuid;
  msr::DevCpuMsrReader reader;
  perf::KernelPerfEventOpener opener;
  Result<perf::StopSignals> signals = perf::StopSignals::install();
  if (!signals) throw UserError("cannot handle Ctrl-C: " + signals.error().describe(), "this is a bug in vperf");
  session::SystemRunClock clock;
  TurboMachine machine{reader, opener, clock};
  machine.stop_fd = signals->fd();
  machine.cpuid = live_cpuid_facts(cpuid);
  machine.cpuid_16_eax = live_cpuid_16_eax(cpuid);
  if (auto cpuinfo = read_file("/proc/cpuinfo")) machine.cpuinfo_mhz = msr::parse_cpuinfo_mhz(*cpuinfo);
  return run_turbo(options, machine, out);
}

}  // namespace

void add_turbo_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<TurboOptions>();
  auto count = std::make_shared<int>(0);
  CLI::App* sub = app.add_subcommand(
      "turbo", "Turbo boost per interval from APERF/MPERF: C0 cycles, utilisation, ratio and MHz (like showboost)");
  sub->add_option("-C,--cpu", options->cpus, "CPUs to sum, e.g. 0-3,8 (default: all online CPUs)")->check(non_empty());
  sub->add_option("-I,--interval", options->interval_ms, "Interval in milliseconds (default: 1000)")
      ->check(whole_number_in(1, INT32_MAX));
  CLI::Option* count_option =
      sub->add_option("--count", *count, "Stop after N intervals (default: run until Ctrl-C)")->check(whole_number_in(1, INT32_MAX));
  add_json_flag(*sub, options->json);
  sub->callback([&inv, options, count, count_option] {
    if (count_option->count() > 0) options->count = *count;
    inv.action = [&inv, options] { return run_turbo_here(*options, *inv.out); };
  });
}

}  // namespace vperf::cli
