#pragma once
// `vperf encode EVENT...`: a named PMC event (libpfm4 or perfmon JSON) to every spelling perf
// understands and to the perf_event_attr fields vperf would open it with.
#include <boost/json/value.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "events/pmc_catalog.h"
#include "events/resolved_event.h"

namespace vperf::events {

struct EncodedEvent {
  std::string input;   // as the user wrote it
  std::string source;  // "libpfm4" or "perfmon"
  ResolvedEvent event;
  std::string description;
  std::string raw_syntax;   // "rc0" (core events only)
  std::string pmu_syntax;   // "cpu/event=0xc0,umask=0x00/"
  std::string config1_term; // "offcore_rsp", "ldlat", "frontend" when config1 is used
  std::string libpfm_fully_qualified;
  std::vector<std::string> notes;  // fixed-counter and clock traps
};

// Encodes each event against the catalog: perfmon names first when perfmon files are loaded
// (Intel's tables are the reference), then libpfm4. An unknown name is a usage error with the
// closest catalog names; a known name with a bad modifier is a usage error naming it.
std::vector<EncodedEvent> encode_pmc_events(const PmcCatalog& catalog, const std::vector<std::string>& events);

void print_encoded_events(std::ostream& out, const PmcCatalog& catalog, const std::vector<EncodedEvent>& events);
boost::json::value encoded_events_json(const PmcCatalog& catalog, const std::vector<EncodedEvent>& events);

}  // namespace vperf::events
