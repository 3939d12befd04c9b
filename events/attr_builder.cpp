#include "events/attr_builder.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace vperf::events {

namespace {

constexpr int kMaxPrecise = 3;

// perf's get_event_modifier() state: the five bits plus whether any of u/k/h (exclude) or
// G/H (exclude_gh) has been seen, which decides whether a letter first excludes the others.
struct ModifierState {
  PrivilegeBits bits;
  bool levels_chosen = false;
  bool guest_host_chosen = false;
};

void choose_level(ModifierState& s) {
  if (s.levels_chosen) return;
  s.levels_chosen = true;
  s.bits.exclude_user = s.bits.exclude_kernel = s.bits.exclude_hv = true;
}

void choose_guest_host(ModifierState& s) {
  if (s.guest_host_chosen) return;
  s.guest_host_chosen = true;
  s.bits.exclude_guest = s.bits.exclude_host = true;
}

// The result does not depend on the order the letters were written in (perf's rules
// commute), so applying them in a fixed order is exact.
void apply(const Modifiers& m, ModifierState& s, MachineScope scope) {
  if (m.user) {
    choose_level(s);
    s.bits.exclude_user = false;
    if (!s.guest_host_chosen && !scope.guest) s.bits.exclude_guest = true;
  }
  if (m.kernel) {
    choose_level(s);
    s.bits.exclude_kernel = false;
  }
  if (m.hypervisor) {
    choose_level(s);
    s.bits.exclude_hv = false;
  }
  if (m.guest) {
    choose_guest_host(s);
    s.bits.exclude_guest = false;
  }
  if (m.host) {
    choose_guest_host(s);
    s.bits.exclude_host = false;
  }
  // perf: precise sampling requires exclude_guest.
  if (m.precise > 0 && !s.guest_host_chosen && !scope.guest) s.bits.exclude_guest = true;
}

bool names_levels(const Modifiers& m) { return m.user || m.kernel || m.hypervisor; }

}  // namespace

PrivilegeBits privilege_bits(const ResolvedEvent& event, MachineScope scope) {
  ModifierState state;
  if (!names_levels(event.modifiers)) {
    // libpfm4's own plm ("INST_RETIRED:ANY_P:u"); perf modifiers with levels replace it.
    state.bits.exclude_user = event.exclude_user;
    state.bits.exclude_kernel = event.exclude_kernel;
    state.bits.exclude_hv = event.exclude_hv;
    state.levels_chosen = event.exclude_user || event.exclude_kernel || event.exclude_hv;
  }
  // perf's event_attr_init(): the scope's machines (the host alone outside perf kvm). With
  // modifiers, exclude_guest is left to them (u and p set it), as perf 6.1 fills it.
  state.bits.exclude_host = !scope.host;
  if (event.modifiers.empty()) state.bits.exclude_guest = !scope.guest;
  else apply(event.modifiers, state, scope);
  apply(event.group_modifiers, state, scope);
  return state.bits;
}

perf_event_attr blank_attr(uint32_t type, uint64_t config) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  return attr;
}

perf_event_attr build_attr(const ResolvedEvent& event, const SampleSettings& settings) {
  // Only stat measures tool events (it never builds their attrs); perf 6.1's record takes
  // them and silently records nothing.
  if (event.is_tool())
    throw usage_error(event.name + " is one of stat's tool events (the run's time), not a counter to sample",
                      "count it with 'vperf stat -e " + event.name + "', and record another event");
  perf_event_attr attr = blank_attr(event.type, event.config);
  attr.config1 = event.config1;
  attr.config2 = event.config2;
  attr.bp_type = event.bp_type;  // 0 (HW_BREAKPOINT_EMPTY) for every other event

  PrivilegeBits bits = privilege_bits(event, settings.scope);
  attr.exclude_user = bits.exclude_user;
  attr.exclude_kernel = bits.exclude_kernel;
  attr.exclude_hv = bits.exclude_hv;
  attr.exclude_guest = bits.exclude_guest;
  attr.exclude_host = bits.exclude_host;
  attr.precise_ip = static_cast<uint64_t>(std::min(kMaxPrecise, event.modifiers.precise + event.group_modifiers.precise));
  // P: perf asks for the top level and lets the kernel's answer lower it; vperf knows the
  // PMU's max_precise where sysfs publishes it.
  if (event.modifiers.precise_max || event.group_modifiers.precise_max)
    attr.precise_ip = static_cast<uint64_t>(event.max_precise.value_or(kMaxPrecise));
  attr.exclude_idle = event.modifiers.exclude_idle || event.group_modifiers.exclude_idle;

  const bool in_group = event.group_role != GroupRole::Alone;
  const bool leads = event.group_role != GroupRole::Member;
  // A group's D pins the group through its leader; a member's own D is passed on as written.
  attr.pinned = event.modifiers.pinned || (leads && event.group_modifiers.pinned);
  attr.exclusive = event.modifiers.exclusive || (leads && event.group_modifiers.exclusive);
  attr.disabled = settings.start_disabled && leads;
  attr.enable_on_exec = settings.enable_on_exec && leads;
  attr.inherit = settings.inherit;

  attr.sample_type = settings.sample_type;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  if (settings.read_id) attr.read_format |= PERF_FORMAT_ID;
  if (in_group) attr.read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;

  const bool sample_read = event.modifiers.sample_read || event.group_modifiers.sample_read;
  if (settings.sampling()) {
    if (sample_read) {
      // The leader's samples carry the counts of the whole group; members do not sample.
      attr.sample_type |= PERF_SAMPLE_READ;
      attr.read_format |= PERF_FORMAT_ID | (in_group ? PERF_FORMAT_GROUP : 0);
    }
    if (!(sample_read && event.group_role == GroupRole::Member)) {
      if (settings.sample_frequency) {
        attr.freq = 1;
        attr.sample_freq = *settings.sample_frequency;
      } else {
        attr.sample_period = *settings.sample_period;
      }
    }
  }
  return attr;
}

void apply_all_user_or_kernel(perf_event_attr& attr, bool all_user, bool all_kernel) {
  if (all_user) {
    attr.exclude_kernel = 1;
    attr.exclude_user = 0;
  }
  if (all_kernel) {
    attr.exclude_kernel = 0;
    attr.exclude_user = 1;
  }
}

SampleSettings perf_stat_settings() {
  SampleSettings settings;
  settings.sample_type = PERF_SAMPLE_IDENTIFIER;
  settings.enable_on_exec = true;
  return settings;
}

}  // namespace vperf::events
