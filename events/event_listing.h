#pragma once
// The data and rendering behind `vperf list [FILTER]`, in perf 6.1's groups and order:
//   Hardware event, Software event, Hardware cache event, Kernel PMU event (sysfs aliases
//   as "pmu/alias/"), Raw hardware event descriptor, Tracepoint event.
// (perf prints the raw descriptors before the tracepoints; so does vperf.) Within a group
// names are sorted in byte order, as perf sorts them.
//
// Text output is perf's: "  " + name (with " OR alias" for each alias) padded to 50
// columns + " [Group]". JSON output is an array of
//   {"name", "aliases": [...], "group", "pmu", "encoding", "description"}
// where encoding is "type=T,config=0x..[,config1=0x..]" (empty for the raw descriptors).
//
// FILTER: empty lists everything; a group keyword (hw, hardware, sw, software, cache,
// hwcache, pmu, tracepoint) lists that group; otherwise a glob ("sched:*") or, without
// glob characters, a substring ("cache", "msr") matched against names and aliases.
#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <ostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/event_catalog.h"

namespace vperf::events {

// RawDescriptor and Breakpoint lines describe a syntax, not one event.
enum class ListGroup { Hardware, Software, Tool, HardwareCache, KernelPmu, RawDescriptor, Breakpoint, Tracepoint };

// "Hardware event", "Software event", ... as perf prints them in brackets.
std::string_view list_group_label(ListGroup group);

struct ListedEvent {
  std::string name;
  std::vector<std::string> aliases;
  ListGroup group = ListGroup::Hardware;
  std::string pmu;
  std::string encoding;
  std::string description;
};

struct ListingResult {
  std::vector<ListedEvent> events;  // in print order
  // Set when the filter asks for tracepoints and there are none to read (tracefs not mounted,
  // or not readable): why, and how to mount it. perf mounts tracefs itself; vperf says so.
  std::optional<std::string> tracepoints_unavailable;
};

struct ListingOptions {
  // perf lists hardware and cache events only when the kernel accepts them. When set, this
  // is asked for each (type, config) of those groups and false hides the event; the CLI
  // answers it with a real perf_event_open. Unset: every builtin is listed.
  std::function<bool(uint32_t type, uint64_t config)> hardware_event_supported;
  // Fill ListedEvent::encoding for the listed tracepoints too: one id file read each, which
  // the text listing does not need (perf reads none either).
  bool with_encodings = true;
};

ListingResult list_events(const EventCatalog& catalog, std::string_view filter, const ListingOptions& options = {});
void print_listing(std::ostream& out, const ListingResult& listing);
// perf list --raw-dump: the names alone (no aliases), each followed by a space, no newline: the
// form shell completion and perf's own tests read (for p in $(perf list --raw-dump pmu)).
void print_raw_dump(std::ostream& out, const ListingResult& listing);
boost::json::value listing_json(const ListingResult& listing);

}  // namespace vperf::events
