#pragma once
// What probes cost the tasks they fire in. Every uprobe hit is a trap, the kernel's handler and
// the event's recording, paid by the probed task; a probe on a function called a million times
// a second can eat a CPU. vperf measures one hit's cost on this machine once
// (`vperf probe --calibrate`: the bundled workload's probe-calls with and without a probe on
// probe_target, task-clock compared), keeps it for the boot in the user's cache, and `vperf
// stat` on probe events warns when a probe's hits per second times that cost exceed a budget
// (`--max-overhead`, 5% of one CPU by default). Without a measurement the estimate uses a
// typical figure and says so.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/private_files.h"
#include "tracing/tracefs.h"

namespace vperf::probes {

// A uprobe hit on an x86-64 KVM guest: bench/probe.sh measured 1.2 µs here, under vperf and
// perf alike; the typical figure is rounded up.
inline constexpr double kTypicalProbeHitNs = 1500;

struct ProbeHitCost {
  double nanoseconds = kTypicalProbeHitNs;
  bool measured = false;  // from this boot's calibration, not the typical figure
};

// vperf probe's directory in the user's cache (~/.cache/vperf/probes): the calibration here,
// and probe_session's ledger of probed files. nullopt when there is none to use.
std::optional<PrivateDirectory> probes_cache_directory(CreateMissing create);

// This boot's calibrated cost (~/.cache/vperf/probes/hit-cost, keyed by the boot id), else the
// typical figure.
ProbeHitCost probe_hit_cost();
// Keeps a calibration for this boot.
Result<void> store_probe_hit_cost(double nanoseconds);

// One hit's cost from paired runs of the same `hits`-call workload, (probed - plain) task
// seconds each: the median pair's difference over the hits. An Error when the runs show no
// cost (the probe did not fire, or the machine was too noisy to tell).
Result<double> hit_cost_from_runs(const std::vector<std::pair<double, double>>& plain_and_probed_seconds, uint64_t hits);

// Measures one hit's cost here: `rounds` pairs of runs of `workload probe-calls CALLS` (the
// bundled workload), plain and with a uprobe on probe_target counted (each probed run must
// count exactly CALLS), compared by the task's CPU time (rusage). The probe is removed after.
Result<double> measure_probe_hit_cost(const std::filesystem::path& workload, uint64_t calls = 200000, int rounds = 5);

// "GROUP:EVENT" of every dynamic probe (uprobe_events and kprobe_events): the events whose
// counts are hits.
std::vector<std::string> probe_event_names(const tracing::Tracefs& tracefs);

// A warning for `event` when `hits` over `seconds` cost more than `budget_cpus` of one CPU at
// `cost` each: what it cost, how it was estimated, and what to do. nullopt within the budget.
std::optional<std::string> probe_overhead_warning(std::string_view event, uint64_t hits, double seconds, const ProbeHitCost& cost,
                                                  double budget_cpus);

// What `hits` have cost the probed tasks so far, for vperf probe -l -v beside a probe's hits
// (uprobe_profile counts hits while the event is enabled, so no rate can be told from it):
// "(~1.34 ms of the probed tasks' CPU at 1.34 us a hit, measured here)".
std::string probe_cost_so_far(uint64_t hits, const ProbeHitCost& cost);

}  // namespace vperf::probes
