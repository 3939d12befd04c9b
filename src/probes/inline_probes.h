#pragma once
// Probes named inside an event list, as bpftrace names them, that live exactly as long as the
// command using them:
//   uprobe:PATH:FUNC[+OFFSET]   uretprobe:PATH:FUNC   usdt:PATH:PROVIDER:NAME
// `vperf stat -e uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc -- CMD` creates the uprobe in a
// group of its own, vperf_PID (PID: this vperf's), counts it as the tracepoint
// vperf_PID:malloc, and removes it when the InlineProbes object goes: at the command's end, on
// an error (the exception unwinds through it), and on SIGINT/SIGTERM/SIGHUP (the run loop turns
// them into a normal end). A vperf killed outright leaves its group behind; the next command
// that creates inline probes, and every `vperf probe` command, removes the groups of vperf
// processes that are gone (remove_leftover_inline_probes).
// kprobe:FUNC[+OFF] and kretprobe:FUNC probe kernel functions the same way (a kernel without
// kprobes refuses them in one line that names CONFIG_KPROBE_EVENTS).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "probes/probe_plan.h"
#include "tracing/tracefs.h"

namespace vperf::probes {

class InlineProbes {
 public:
  InlineProbes() = default;
  InlineProbes(const InlineProbes&) = delete;
  InlineProbes& operator=(const InlineProbes&) = delete;
  // Declare it before anything that opens the events: the kernel refuses to remove a probe
  // that an open perf event still uses.
  ~InlineProbes();

  // `events` (the -e values, each a comma list, braces allowed) with every inline probe created
  // and replaced by its GROUP:EVENT. Lists without one come back unchanged, tracefs untouched.
  Result<std::vector<std::string>> create(const std::vector<std::string>& events);

  // The tracepoints created so far, GROUP:EVENT.
  std::vector<std::string> names() const;

 private:
  Result<std::string> create_one(std::string_view spec);
  std::optional<tracing::Tracefs> tracefs_;
  std::vector<PlannedProbe> created_;
};

// The group of this process's inline probes: "vperf_" and the PID.
std::string inline_probe_group();

// Removes the inline probes of vperf processes that are no longer running (groups vperf_PID
// whose PID is not a live vperf); returns their GROUP:EVENT names. Probes still in use (a
// racing run) are left for later.
std::vector<std::string> remove_leftover_inline_probes(const tracing::Tracefs& tracefs);

// Whether an event term names an inline probe (uprobe:, uretprobe:, usdt:, kprobe:, kretprobe:).
bool is_inline_probe(std::string_view term);

}  // namespace vperf::probes
