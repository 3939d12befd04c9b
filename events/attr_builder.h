#pragma once
// ResolvedEvent + SampleSettings -> perf_event_attr, with no syscalls, the way perf 6.1
// fills it (checked field by field against `perf stat -vv` in
// tests/integration/events_perf_crosscheck_test.cpp).
//
// Privilege and guest/host bits follow perf's modifier rules:
//  - no modifiers at all: exclude_guest=1 (perf counts the host only by default); under
//    `kvm` (MachineScope) the defaults are exclude_host = !host, exclude_guest = !guest, as
//    perf kvm sets its perf_host/perf_guest before event_attr_init;
//  - the first of u/k/h excludes all three levels, then each given letter re-includes its
//    own (":u" -> exclude_kernel, exclude_hv; ":uk" -> exclude_hv only);
//  - ":u" and ":p" also set exclude_guest unless G or H was given or the scope is a guest's;
//  - ":G" -> exclude_host=1 (guest only), ":H" -> exclude_guest=1 (host only), ":GH" -> neither;
//  - group modifiers "{...}:mods" apply after each member's own, starting from its bits,
//    so "{cs:k,faults}:u" counts cs in user and kernel; a group's D pins only the leader;
//  - a libpfm4 event's own privilege levels (ResolvedEvent::exclude_*) stand unless the
//    event's perf modifiers name u, k or h.
// Group members are read with their leader: read_format gets GROUP|ID on every member, and
// only the leader (or a lone event) starts disabled and enables on exec.
#include <linux/perf_event.h>

#include <cstdint>
#include <optional>

#include "events/resolved_event.h"

namespace vperf::events {

// Which machines events count on when their modifiers do not say (perf's perf_host and
// perf_guest globals): the host alone for every command but `vperf kvm`.
struct MachineScope {
  bool host = true;
  bool guest = false;
  bool operator==(const MachineScope&) const = default;
};

struct SampleSettings {
  // Sampling: a frequency (attr.freq=1, sample_freq) wins over a period (sample_period).
  // Neither: counting only.
  std::optional<uint64_t> sample_period;
  std::optional<uint64_t> sample_frequency;
  uint64_t sample_type = 0;    // PERF_SAMPLE_* bits; perf stat uses PERF_SAMPLE_IDENTIFIER
  bool read_id = false;        // add PERF_FORMAT_ID to read_format even for lone events
  bool start_disabled = true;  // leaders and lone events: attr.disabled
  bool enable_on_exec = false; // leaders and lone events: attr.enable_on_exec
  bool inherit = true;         // count child tasks too
  MachineScope scope{};        // default guest/host exclusion (vperf kvm)

  bool sampling() const { return sample_period.has_value() || sample_frequency.has_value(); }
};

// What `perf stat COMMAND` counts with: IDENTIFIER samples, disabled until exec, inherited.
SampleSettings perf_stat_settings();

// The exclude_* bits after perf's modifier rules (see above); exposed for tests and `encode`.
struct PrivilegeBits {
  bool exclude_user = false;
  bool exclude_kernel = false;
  bool exclude_hv = false;
  bool exclude_guest = false;
  bool exclude_host = false;
  bool operator==(const PrivilegeBits&) const = default;
};
PrivilegeBits privilege_bits(const ResolvedEvent& event, MachineScope scope = {});

perf_event_attr build_attr(const ResolvedEvent& event, const SampleSettings& settings);

// perf's --all-user / --all-kernel (record and stat): every event counts in that mode alone,
// whatever its modifiers; set last, as perf's evsel__config does, --all-kernel winning.
void apply_all_user_or_kernel(perf_event_attr& attr, bool all_user, bool all_kernel);

// A zeroed attr of this kernel's size for `type`/`config`: the start of every attr vperf
// builds by hand (capability probes, the msr PMU's counters) as well as build_attr's.
perf_event_attr blank_attr(uint32_t type, uint64_t config);

}  // namespace vperf::events
