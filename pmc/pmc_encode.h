#pragma once
// `vperf encode EVENT...`: any event string vperf accepts (a libpfm4 or perfmon name, a raw
// rNNN or cpu/.../ event, a builtin, a sysfs alias, a tracepoint, a {group}) to every spelling
// perf understands and to the perf_event_attr vperf would open it with. Strings go through
// the one parser and resolver (events/event_catalog.h); the attr comes from AttrBuilder.
#include <linux/perf_event.h>

#include <boost/json/value.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "pmc/encoding_disagreements.h"
#include "pmc/event_environment.h"
#include "events/resolved_event.h"

namespace vperf::events {

struct EncodedEvent {
  std::string input;   // the string the user wrote (a group yields one entry per member)
  std::string source;  // "libpfm4", "perfmon", "perf builtin", "raw", "sysfs", "tracefs"
  ResolvedEvent event;
  perf_event_attr attr{};  // as AttrBuilder builds it for counting
  std::string description;
  std::string raw_syntax;   // "rc0" (core events only)
  std::string pmu_syntax;   // "cpu/event=0xc0,umask=0x00/"
  std::string config1_term; // "offcore_rsp", "ldlat", "frontend" when config1 is used
  std::string libpfm_fully_qualified;
  std::vector<std::string> notes;  // fixed-counter and clock traps
  // The other catalog's encoding of the same name where libpfm4 and Intel's table disagree:
  // libpfm4's for a perfmon event, Intel's for a libpfm4 one.
  std::optional<OtherCatalogEncoding> other_catalog;
};

// Resolves and encodes each string. Unknown names and bad modifiers are usage errors with
// the closest catalog names, as everywhere else.
std::vector<EncodedEvent> encode_events(const EventEnvironment& env, const std::vector<std::string>& events);

void print_encoded_events(std::ostream& out, const PmcCatalog& catalog, const std::vector<EncodedEvent>& events);
boost::json::value encoded_events_json(const PmcCatalog& catalog, const std::vector<EncodedEvent>& events);

}  // namespace vperf::events
