#include "probes/probe_cost.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdio>

#include "core/files.h"
#include "core/private_files.h"
#include "core/strings.h"
#include "perf/event_fd.h"
#include "perf/workload.h"
#include "probes/inline_probes.h"
#include "tracing/dynamic_events.h"

namespace vperf::probes {

namespace {

constexpr const char* kCostFile = "hit-cost";

std::string boot_id() {
  Result<std::string> id = read_file("/proc/sys/kernel/random/boot_id");
  return id ? std::string(trim(*id)) : std::string();
}

std::string format(double value, const char* spec) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

}  // namespace

std::optional<PrivateDirectory> probes_cache_directory(CreateMissing create) {
  std::optional<CacheLocation> location = user_cache_location("probes");
  if (!location) return std::nullopt;
  Result<PrivateDirectory> directory = PrivateDirectory::open(location->base, location->below, create);
  if (!directory) return std::nullopt;
  return std::move(directory).value();
}

ProbeHitCost probe_hit_cost() {
  ProbeHitCost cost;
  std::optional<PrivateDirectory> directory = probes_cache_directory(CreateMissing::no);
  if (!directory) return cost;
  Result<std::string> text = directory->read(kCostFile);
  if (!text) return cost;
  // "BOOT_ID NANOSECONDS": another boot's figure may be another kernel's.
  std::vector<std::string_view> words = split(trim(*text), ' ');
  if (words.size() != 2 || words[0] != boot_id()) return cost;
  std::optional<uint64_t> picoseconds = parse_u64(words[1]);
  if (!picoseconds || *picoseconds == 0) return cost;
  return ProbeHitCost{static_cast<double>(*picoseconds) / 1000.0, true};
}

Result<void> store_probe_hit_cost(double nanoseconds) {
  std::optional<PrivateDirectory> directory = probes_cache_directory(CreateMissing::yes);
  if (!directory) return Error{"no cache directory to keep the calibration in", 0, "set XDG_CACHE_HOME or HOME to a directory of yours"};
  return directory->replace(kCostFile, boot_id() + " " + std::to_string(static_cast<uint64_t>(nanoseconds * 1000.0)) + "\n");
}

Result<double> hit_cost_from_runs(const std::vector<std::pair<double, double>>& plain_and_probed_seconds, uint64_t hits) {
  if (plain_and_probed_seconds.empty() || hits == 0) return Error{"no calibration runs"};
  std::vector<double> differences;
  for (const auto& [plain, probed] : plain_and_probed_seconds) differences.push_back(probed - plain);
  std::sort(differences.begin(), differences.end());
  const double median = differences[differences.size() / 2];
  if (median <= 0)
    return Error{"the probed runs were no slower than the plain ones: the probe did not fire, or the machine is too busy to measure", 0,
                 "run vperf probe --calibrate again on a quieter machine"};
  return median / static_cast<double>(hits) * 1e9;
}

Result<double> measure_probe_hit_cost(const std::filesystem::path& workload, uint64_t calls, int rounds) {
  InlineProbes probe;
  VPERF_TRY(std::vector<std::string> names, probe.create({"uprobe:" + workload.string() + ":probe_target"}));
  const std::string name = names.front();  // "vperf_PID:probe_target"
  VPERF_TRY(tracing::Tracefs tracefs, tracing::Tracefs::open_mounted());
  VPERF_TRY(std::string id_text, tracefs.read("events/" + name.substr(0, name.find(':')) + "/" + name.substr(name.find(':') + 1) + "/id"));
  std::optional<uint64_t> id = parse_u64(trim(id_text));
  if (!id) return Error{"the tracepoint id of " + name + " is not a number: " + id_text};
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = *id;
  attr.disabled = 1;
  attr.enable_on_exec = 1;  // the workload's own hits only, from its exec on
  attr.inherit = 1;
  perf::KernelPerfEventOpener opener;
  std::vector<std::pair<double, double>> pairs;
  for (int round = 0; round < rounds; ++round) {
    std::pair<double, double> pair;
    for (bool probed : {false, true}) {
      VPERF_TRY(perf::Workload run, perf::Workload::prepare({workload.string(), "probe-calls", std::to_string(calls)}));
      std::optional<perf::EventFd> counter;
      if (probed) {
        VPERF_TRY(perf::EventFd opened, opener.open(attr, perf::OpenTarget{run.pid(), -1, -1, PERF_FLAG_FD_CLOEXEC}));
        counter = std::move(opened);
      }
      VPERF_TRY(run.start());
      VPERF_TRY(perf::WorkloadExit exit, run.wait());
      if (exit.signaled || exit.code != 0) return Error{"the calibration run of " + workload.string() + " failed"};
      const double seconds = exit.user_seconds + exit.system_seconds;
      if (!probed) {
        pair.first = seconds;
        continue;
      }
      uint64_t hits = 0;
      VPERF_TRY(counter->read(&hits, sizeof hits));
      if (hits != calls)
        return Error{"the calibration probe fired " + std::to_string(hits) + " times for " + std::to_string(calls) + " calls", 0,
                     "is " + workload.string() + " the bundled vperf-workload?"};
      pair.second = seconds;
    }
    pairs.push_back(pair);
  }
  return hit_cost_from_runs(pairs, calls);
}

std::vector<std::string> probe_event_names(const tracing::Tracefs& tracefs) {
  std::vector<std::string> names;
  auto add = [&](const Result<std::vector<std::string>>& lines) {
    if (!lines) return;
    for (const std::string& line : *lines) {
      std::string name = tracing::uprobe_name(line);
      if (const size_t slash = name.find('/'); slash != std::string::npos) name[slash] = ':';
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  };
  // Not std::filesystem::exists: it throws where tracefs is closed to this user (mode 0700 for
  // anyone but root), and a user's vperf stat then failed after printing its counts.
  if (tracing::tracefs_file_exists(tracefs, "uprobe_events")) add(tracing::uprobe_definitions(tracefs));
  if (tracing::has_kprobes(tracefs)) add(tracing::kprobe_definitions(tracefs));
  return names;
}

std::optional<std::string> probe_overhead_warning(std::string_view event, uint64_t hits, double seconds, const ProbeHitCost& cost,
                                                  double budget_cpus) {
  if (seconds <= 0 || hits == 0) return std::nullopt;
  const double rate = static_cast<double>(hits) / seconds;
  const double cpus = rate * cost.nanoseconds * 1e-9;
  if (cpus <= budget_cpus) return std::nullopt;
  return "vperf: warning: " + std::string(event) + " fired " + format(rate, "%.0f") + " times a second; at " +
         format(cost.nanoseconds / 1000.0, "%.2f") + " us a hit (" +
         (cost.measured ? std::string("measured on this machine") : std::string("a typical figure; vperf probe --calibrate measures this machine")) +
         ") that is " + format(cpus * 100.0, "%.0f") + "% of a CPU, over the " + format(budget_cpus * 100.0, "%g") +
         "% budget (hint: probe a less frequent function or line, or count a tracepoint; --max-overhead sets the budget)";
}

std::string probe_cost_so_far(uint64_t hits, const ProbeHitCost& cost) {
  const double ms = static_cast<double>(hits) * cost.nanoseconds * 1e-6;
  return "(~" + format(ms, ms < 10 ? "%.2f" : "%.0f") + " ms of the probed tasks' CPU at " + format(cost.nanoseconds / 1000.0, "%.2f") +
         " us a hit, " + (cost.measured ? "measured here)" : "a typical figure; vperf probe --calibrate measures this machine)");
}

}  // namespace vperf::probes
