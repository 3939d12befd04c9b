#include "msr/turbo_view.h"

#include <cmath>
#include <cstdio>

#include "core/cpu_set.h"
#include "msr/msr_register.h"

namespace vperf::msr {

namespace json = boost::json;

TurboLimits read_turbo_limits(const MsrReader& device, int cpu, bool device_counts) {
  TurboLimits limits;
  auto limit = device.read(cpu, address::kTurboRatioLimit);
  if (!limit) {
    limits.unreadable = limit.error().describe();
    if (!device_counts) limits.unreadable += " (the perf msr PMU has no event for it; it needs /dev/cpu/N/msr)";
    return limits;
  }
  std::optional<uint64_t> limit1;
  if (auto v = device.read(cpu, address::kTurboRatioLimit1)) limit1 = *v;
  const TurboLimitLayout layout = infer_turbo_limit_layout(*limit, limit1);
  limits.steps = decode_turbo_ratio_limits(*limit, limit1, layout, kBusClockMhz);
  if (limits.steps.empty()) limits.unreadable = "MSR_TURBO_RATIO_LIMIT is 0 (no turbo, or turbo disabled)";
  return limits;
}

namespace {

std::string percent_or_dash(std::optional<double> v) { return v ? std::to_string(std::llround(*v)) + "%" : "-"; }

std::string mhz_text(double mhz) {
  if (mhz == std::floor(mhz)) return std::to_string(static_cast<long long>(mhz));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", mhz);
  return buf;
}

json::value optional_number(std::optional<double> v) { return v ? json::value(*v) : json::value(nullptr); }

}  // namespace

std::string turbo_text_header(const TurboSetup& setup, int interval_ms) {
  std::string out = "Base MHz : " + mhz_text(setup.base.mhz) + " (" + setup.base.derivation + ")\n";
  if (setup.limits.steps.empty()) {
    out += "Turbo    : turbo ratio limits unreadable: " + setup.limits.unreadable + '\n';
  } else {
    for (size_t i = 0; i < setup.limits.steps.size(); ++i)
      out += (i == 0 ? "Turbo    : " : "           ") + describe(setup.limits.steps[i]) + '\n';
  }
  out += "CPUs     : " + format_cpu_list(setup.cpus) + (setup.cpus.size() > 1 ? ", summed" : "") +
         " (counters: " + setup.choice.counters->describe() + ", every " + std::to_string(interval_ms) + " ms)\n\n";
  char header[160];
  std::snprintf(header, sizeof header, "%-8s %14s %14s %6s %6s %6s\n", "TIME", "C0_MCYC", "C0_ACYC", "UTIL", "RATIO", "MHz");
  return out + header;
}

std::string turbo_row_text(const std::string& time, const TurboRow& row) {
  char buf[160];
  std::snprintf(
      buf, sizeof buf, "%-8s %14llu %14llu %6s %6s %6s", time.c_str(), static_cast<unsigned long long>(row.c0_mcyc),
      static_cast<unsigned long long>(row.c0_acyc), (std::to_string(std::llround(row.util_percent)) + "%").c_str(),
      percent_or_dash(row.ratio_percent).c_str(), row.mhz ? std::to_string(std::llround(*row.mhz)).c_str() : "-");
  return buf;
}

json::object turbo_row_json(const std::string& time, double seconds, const TurboRow& row, const ActivityDelta& sum) {
  json::object o;
  o["time"] = time;
  o["seconds"] = seconds;
  o["c0_mcyc"] = row.c0_mcyc;
  o["c0_acyc"] = row.c0_acyc;
  o["tsc"] = sum.tsc;
  o["util_percent"] = row.util_percent;
  o["ratio_percent"] = optional_number(row.ratio_percent);
  o["mhz"] = optional_number(row.mhz);
  return o;
}

json::object turbo_report_json(const TurboSetup& setup, int interval_ms, json::array rows) {
  json::object o;
  o["base_mhz"] = setup.base.mhz;
  o["base_source"] = source_key(setup.base.source);
  o["base_derivation"] = setup.base.derivation;
  if (setup.limits.steps.empty()) {
    o["turbo_steps"] = nullptr;
    o["turbo_steps_error"] = setup.limits.unreadable;
  } else {
    json::array steps;
    for (const TurboStep& s : setup.limits.steps)
      steps.push_back(json::object{{"active_cores", s.active_cores}, {"ratio", s.ratio}, {"mhz", s.mhz}});
    o["turbo_steps"] = std::move(steps);
    o["turbo_steps_error"] = nullptr;
  }
  o["counters"] = setup.choice.counters->describe();
  o["cpus"] = format_cpu_list(setup.cpus);
  o["interval_ms"] = interval_ms;
  o["intervals"] = std::move(rows);
  return o;
}

}  // namespace vperf::msr
