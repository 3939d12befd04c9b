#pragma once
// The event resolver: turns parsed EventSpecs into ResolvedGroups against everything this
// machine (or a fake of it) knows:
//   builtins      perf's hardware, software and cache events (events/builtin_events.h)
//   sysfs PMUs    PMU/terms/ with format bits, PMU/alias/ and bare aliases ("tsc"), from
//                 <sysfs root>/<pmu>/{type,format,events,caps}; "cpu" is the default core PMU
//   raw           rNNN -> PERF_TYPE_RAW
//   tracepoints   subsys:event and globs, ids from <tracefs root>/events
//   named sources libpfm4 and perfmon names, asked in order (NamedEventSource)
// Everything is read once by load(); resolving does no I/O. No global state: where to look
// travels in EventCatalogConfig.
//
// Resolution order for a name that is not a builtin, raw or PMU-term event:
//   1. an exact tracepoint ("sched:sched_switch"), or a glob over tracepoints ("sched:*");
//   2. a sysfs alias on every PMU that has it ("tsc", "energy-psys");
//   3. each named source with the full text ("INST_RETIRED:ANY_P:u", libpfm's own modifiers);
//   4. when the last ':' part is perf modifiers, steps 1-3 with the base and those modifiers
//      ("sched:sched_switch:u", "L2_STORE_LOCK_RQSTS.HIT_M:pp").
// Unknown names throw usage_error("unknown event 'cyclse'", "did you mean cycles? ...").
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "events/event_spec.h"
#include "events/named_event_source.h"
#include "events/resolved_event.h"
#include "events/sysfs_pmu.h"
#include "tracing/tracefs_events.h"

namespace vperf::events {

// The resolver's tracepoints are tracefs's (tracing/tracefs_events.h).
using tracing::Tracepoint;
using tracing::TracepointCatalog;

struct EventCatalogConfig {
  std::filesystem::path sysfs_pmu_root = kSysfsPmuRoot;
  // nullopt: find the tracefs mount (find_tracefs_root).
  std::optional<std::filesystem::path> tracefs_root;
  // Asked in order; not owned, must outlive the catalog.
  std::vector<const NamedEventSource*> named_sources;
  // The PMU that counts builtin hardware events, raw events and "cpu/.../".
  std::string core_pmu = "cpu";
  // Replaces this machine's core PMU (or stands in for a missing one) when encoding for
  // another CPU model: its format terms are that model's, not this machine's.
  std::optional<SysfsPmu> core_pmu_override;
};

class EventCatalog {
 public:
  // Reads sysfs PMUs and tracepoints. Missing tracefs is not an error here: resolving a
  // tracepoint later reports why none are known.
  static EventCatalog load(const EventCatalogConfig& config);

  // From parts already in memory (tests, or callers that loaded them themselves).
  // `tracepoints` is an Error when tracefs could not be read; it is reported on use.
  EventCatalog(std::vector<SysfsPmu> pmus, Result<TracepointCatalog> tracepoints,
               std::vector<const NamedEventSource*> named_sources, std::string core_pmu = "cpu");

  // Parses and resolves a whole -e argument. A brace group becomes one ResolvedGroup; a
  // lone spec that expands to several events (a tracepoint glob, an alias on several
  // PMUs) becomes one single-event ResolvedGroup per event. Throws usage_error.
  std::vector<ResolvedGroup> resolve(std::string_view event_list) const;
  std::vector<ResolvedGroup> resolve(const std::vector<GroupSpec>& groups) const;
  // Every event one spec stands for, with its own modifiers (group_modifiers/role unset).
  std::vector<ResolvedEvent> resolve_event(const EventSpec& spec) const;

  const std::vector<SysfsPmu>& pmus() const { return pmus_; }
  const SysfsPmu* find_pmu(std::string_view name) const;
  // The tracepoints, or why there are none.
  const Result<TracepointCatalog>& tracepoints() const { return tracepoints_; }
  const std::vector<const NamedEventSource*>& named_sources() const { return named_sources_; }
  const std::string& core_pmu() const { return core_pmu_; }

  // Every name a user could have meant, for "did you mean": builtins and aliases,
  // "pmu/alias/" and bare aliases, tracepoints, and the named sources' names.
  std::vector<std::string> known_names() const;

 private:
  std::vector<SysfsPmu> pmus_;
  Result<TracepointCatalog> tracepoints_;
  std::vector<const NamedEventSource*> named_sources_;
  std::string core_pmu_;
};

// Why no tracepoint can be named or listed (`error`: the tracefs catalog's), and how to mount
// tracefs: the hint of an unknown tracepoint and list's note.
std::string tracefs_hint(const Error& error);

}  // namespace vperf::events
