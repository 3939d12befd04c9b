#include "stat/stat_session.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/cpu_set.h"
#include "events/attr_builder.h"

namespace vperf::stat {

namespace {

// Errors perf stat 6.1 takes to mean "this kernel or machine has no such event".
bool means_not_supported(int errno_value) {
  switch (errno_value) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
    case ENXIO:
    case EINVAL:
    case ENOSYS:
      return true;
    default:
      return false;
  }
}

// A weak group's refusal as a whole (too many counters to schedule together): its members are
// then counted one by one (perf's evlist__reset_weak_group), never left out.
bool means_unschedulable_group(int errno_value) { return errno_value == EINVAL || errno_value == EBADF; }
bool means_not_supported_in_weak_group(int errno_value) {
  return means_not_supported(errno_value) && !means_unschedulable_group(errno_value);
}

bool is_weak(const events::ResolvedGroup& group) {
  return group.is_group && (group.members.front().group_modifiers.weak || group.members.front().modifiers.weak);
}

bool means_no_permission(int errno_value) { return errno_value == EACCES || errno_value == EPERM; }

bool has_privilege_modifiers(const events::ResolvedEvent& e) {
  return e.modifiers.user || e.modifiers.kernel || e.modifiers.hypervisor || e.group_modifiers.user ||
         e.group_modifiers.kernel || e.group_modifiers.hypervisor;
}

std::string place_text(int cpu, pid_t thread) {
  if (thread > 0) return "task " + std::to_string(thread);
  return "CPU " + std::to_string(cpu);
}

std::string open_hint(int errno_value) {
  switch (errno_value) {
    case EACCES:
    case EPERM:
      return "counting kernel events or other users' tasks needs root, CAP_PERFMON, or a lower "
             "kernel.perf_event_paranoid (sysctl -w kernel.perf_event_paranoid=-1); 'vperf check' shows the setting";
    case EMFILE:
    case ENFILE:
      return "one counter per event per CPU or task: raise the open-file limit (ulimit -n) or count fewer events";
    case ESRCH:
      return "the task ended before its counters were opened; check the PID with ps";
    case EBUSY:
      return "another tool holds the PMU exclusively; stop it and retry";
    default:
      return "run 'vperf check' to see what this machine can count";
  }
}

// Where one group is opened: (cpu, thread) pairs.
struct Place {
  int cpu;
  pid_t thread;
};

std::vector<Place> places_for(const events::ResolvedGroup& group, const CountTarget& target) {
  std::vector<Place> places;
  const std::string& cpumask = group.members.front().cpumask;
  if (!cpumask.empty()) {
    Result<std::vector<int>> cpus = parse_cpu_list(cpumask);
    if (!cpus)
      throw UserError("PMU " + group.members.front().pmu + " has an unreadable cpumask '" + cpumask + "'",
                      "check /sys/bus/event_source/devices/" + group.members.front().pmu + "/cpumask");
    for (int cpu : *cpus) places.push_back({cpu, -1});
    return places;
  }
  if (!target.threads.empty()) {
    for (pid_t tid : target.threads) places.push_back({-1, tid});
  } else {
    for (int cpu : target.cpus) places.push_back({cpu, -1});
  }
  return places;
}

}  // namespace

Result<StatSession> StatSession::open(const perf::PerfEventOpener& kernel,
                                      const std::vector<events::ResolvedGroup>& groups, const CountTarget& target) {
  perf::GuestFilterFallbackOpener opener(kernel);
  StatSession session;
  for (const events::ResolvedGroup& group : groups) {
    std::vector<size_t> indices;
    for (const events::ResolvedEvent& event : group.members) {
      StatEvent stat_event;
      stat_event.name = event.written.empty() ? event.name : event.written;
      stat_event.event = event;
      // A tool event is measured, not opened: a {group} of it and counters is the counters'
      // group (perf 6.1 makes the tool event the leader and then counts nothing of the rest).
      if (!event.is_tool()) {
        indices.push_back(session.events_.size());
        stat_event.group_leader = group.is_group ? static_cast<int>(indices.front()) : -1;
      }
      session.events_.push_back(std::move(stat_event));
      session.status_.push_back(OpenStatus::Opened);
    }
    if (indices.empty()) continue;
    if (group.members.front().origin == events::EventOrigin::Absent) {
      for (size_t index : indices) session.status_[index] = OpenStatus::NotSupported;
      continue;
    }
    events::ResolvedGroup counted;
    counted.is_group = group.is_group;
    for (const events::ResolvedEvent& event : group.members)
      if (!event.is_tool()) counted.members.push_back(event);
    if (counted.is_group && counted.members.size() < group.members.size())
      for (size_t m = 0; m < indices.size(); ++m)
        session.events_[indices[m]].event.group_role = m == 0 ? events::GroupRole::Leader : events::GroupRole::Member;

    Result<void> opened = session.open_group(opener, counted, indices, target);
    // perf's weak group ({a,b}:W): when the kernel refuses the group as a whole (EINVAL,
    // EBADF: too many counters to schedule together), its members are counted one by one.
    if (!opened && is_weak(counted) && means_unschedulable_group(opened.error().errno_value)) {
      session.close_group(indices.front());
      for (size_t index : indices) {
        StatEvent& member = session.events_[index];
        member.event.group_role = events::GroupRole::Alone;
        member.group_leader = -1;
        VPERF_TRY(session.open_group(opener, events::ResolvedGroup{{member.event}, false}, {index}, target));
      }
      continue;
    }
    if (!opened) return opened.error();
  }
  return session;
}

void StatSession::close_group(size_t first_event) {
  std::erase_if(opened_, [first_event](const OpenedGroup& g) { return g.events.front() == first_event; });
}

Result<void> StatSession::open_group(const perf::PerfEventOpener& opener, const events::ResolvedGroup& group,
                                     const std::vector<size_t>& indices, const CountTarget& target) {
  bool per_cpu_pmu = !group.members.front().cpumask.empty();
  bool system_wide = per_cpu_pmu || target.threads.empty();
  events::SampleSettings settings = events::perf_stat_settings();
  settings.enable_on_exec = target.enable_on_exec && !system_wide;
  settings.inherit = target.inherit && !system_wide;

  auto build_attrs = [&] {
    std::vector<perf_event_attr> attrs;
    for (size_t index : indices) {
      attrs.push_back(events::build_attr(events_[index].event, settings));
      events::apply_all_user_or_kernel(attrs.back(), target.all_user, target.all_kernel);
    }
    return attrs;
  };
  std::vector<perf_event_attr> attrs = build_attrs();

  for (const Place& place : places_for(group, target)) {
    perf::OpenTarget where;
    where.cpu = place.cpu;
    where.pid = place.thread;
    if (place.thread < 0 && target.cgroup_fd >= 0 && !per_cpu_pmu) {
      where.pid = target.cgroup_fd;
      where.flags |= PERF_FLAG_PID_CGROUP;
    }
    // perf stat's rule for a member after the leader that the kernel refuses as unsupported
    // (stat_handle_error: COUNTER_SKIP): it shows "<not supported>" and the rest count without it.
    bool (*leave_out)(int) = !group.is_group ? nullptr : is_weak(group) ? means_not_supported_in_weak_group : means_not_supported;
    Result<perf::CounterGroup> counters = perf::CounterGroup::open(opener, attrs, where, leave_out);
    int err = counters ? 0 : counters.error().errno_value;

    // perf's fallback: without privilege modifiers, count user space only and say so.
    if (!counters && means_no_permission(err) && !system_wide && group.members.size() == 1 &&
        !has_privilege_modifiers(group.members.front())) {
      StatEvent& only = events_[indices.front()];
      only.event.modifiers.user = true;
      only.name += ":u";
      attrs = build_attrs();
      counters = perf::CounterGroup::open(opener, attrs, where);
      err = counters ? 0 : counters.error().errno_value;
    }
    if (counters) {
      std::vector<size_t> members;
      const std::vector<size_t>& left_out = counters->left_out();
      for (size_t m = 0; m < indices.size(); ++m) {
        if (std::find(left_out.begin(), left_out.end(), m) == left_out.end())
          members.push_back(indices[m]);
        else
          status_[indices[m]] = OpenStatus::NotSupported;
      }
      opened_.push_back(OpenedGroup{std::move(members), place.cpu, place.thread, settings.enable_on_exec, std::move(counters).value()});
      continue;
    }
    if (err == ESRCH && place.thread > 0 && target.skip_ended_threads) continue;
    if (means_not_supported(err) && !group.is_group) {
      // Not on this machine: the event is printed as "<not supported>" and nothing of it stays open.
      status_[indices.front()] = OpenStatus::NotSupported;
      close_group(indices.front());
      return {};
    }
    std::string names;
    for (size_t index : indices) names += (names.empty() ? "" : ",") + events_[index].name;
    if (means_not_supported(err))
      return Error{"the group {" + names + "} cannot be counted: " + counters.error().message, err};
    return Error{"cannot count " + (group.is_group ? "{" + names + "}" : names) + " on " +
                     place_text(place.cpu, place.thread) + ": " + counters.error().message,
                 err};
  }
  return {};
}

std::string open_failure_hint(const Error& error) {
  // Only a {group} fails for a missing event: a lone one is kept as "<not supported>".
  if (means_not_supported(error.errno_value))
    return "a group is counted all together or not at all; count the unsupported member alone to see "
           "'<not supported>', or run 'vperf check'";
  return open_hint(error.errno_value);
}

Result<void> StatSession::set_filter(size_t index, const std::string& filter) const {
  for (const OpenedGroup& group : opened_)
    for (size_t member = 0; member < group.events.size(); ++member)
      if (group.events[member] == index) {
        if (Result<void> set = group.counters.set_filter(member, filter); !set)
          return Error{set.error().message + " on " + events_[index].name, set.error().errno_value};
      }
  return {};
}

Result<void> StatSession::enable() const {
  for (const OpenedGroup& group : opened_)
    if (!group.starts_on_exec)
      VPERF_TRY(group.counters.enable());
  return {};
}

Result<void> StatSession::disable() const {
  for (const OpenedGroup& group : opened_) VPERF_TRY(group.counters.disable());
  return {};
}

Result<StatSnapshot> StatSession::read(uint64_t elapsed_ns, const CommandTimes& command) const {
  StatSnapshot snapshot;
  snapshot.elapsed_ns = elapsed_ns;
  snapshot.counts.resize(events_.size());
  for (size_t i = 0; i < events_.size(); ++i) {
    snapshot.counts[i].status = status_[i];
    if (!events_[i].event.is_tool()) continue;
    uint64_t value = 0;
    switch (static_cast<events::ToolEvent>(events_[i].event.config)) {
      case events::ToolEvent::DurationTime: value = elapsed_ns; break;
      case events::ToolEvent::UserTime: value = command.user_ns; break;
      case events::ToolEvent::SystemTime: value = command.system_ns; break;
    }
    snapshot.counts[i].samples.push_back(CounterSample{-1, -1, perf::CounterReading{value, value, value, std::nullopt}});
  }
  for (const OpenedGroup& group : opened_) {
    // perf reads a group as the leader's attr says it has members: with one left out, the
    // kernel's answer is short, the read fails ("failed to read counter") and every member
    // shows "<not counted>". perf 6.1 prints exactly that for {task-clock,cycles} without a
    // PMU, and for a group larger than the PMU's counters.
    if (!group.counters.left_out().empty()) continue;
    Result<std::vector<perf::CounterReading>> readings = group.counters.read();
    if (!readings) return readings.error();
    for (size_t m = 0; m < group.events.size() && m < readings->size(); ++m)
      snapshot.counts[group.events[m]].samples.push_back(CounterSample{group.cpu, group.thread, (*readings)[m]});
  }
  return snapshot;
}

}  // namespace vperf::stat
