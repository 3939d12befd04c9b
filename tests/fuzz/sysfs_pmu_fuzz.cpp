// libFuzzer target for a PMU as sysfs describes it (/sys/bus/event_source/devices/PMU/):
// format/TERM files ("config:0-7,32-35"), events/ALIAS files ("event=0x3c,umask=0x1") and
// caps/. The input is the PMU's files, one a line, "KIND<TAB>NAME<TAB>CONTENTS" with KIND f
// (format), e (events) or c (caps); the PMU is named "fz" and is the core PMU. Every format
// file must parse or fail with an Error; the PMU must then list, and every alias and term
// must resolve (as fz/ALIAS/, ALIAS, fz/TERM=VALUE/ with a small and an all-ones value) into
// an attr or fail with a UserError (the first kMaxTried of each, so that a long input stays
// one quick run).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "events/attr_builder.h"
#include "events/event_catalog.h"
#include "events/event_listing.h"
#include "events/sysfs_pmu.h"

namespace {

using namespace vperf::events;

constexpr size_t kMaxTried = 32;

SysfsPmu pmu_from_files(std::string_view text) {
  SysfsPmu pmu;
  pmu.name = "fz";
  pmu.type = 4;
  for (std::string_view line : vperf::split(text, '\n')) {
    std::vector<std::string_view> f = vperf::split(line, '\t');
    if (f.size() != 3) continue;
    std::string name(f[1]), contents(f[2]);
    if (f[0] == "f") {
      if (auto term = parse_format_term(name, contents)) pmu.format.push_back(std::move(term).value());
    } else if (f[0] == "e") {
      pmu.events.push_back(PmuEventAlias{name, std::string(vperf::trim(contents)), "", ""});
    } else if (f[0] == "c") {
      pmu.caps[name] = std::string(vperf::trim(contents));
    }
  }
  return pmu;
}

void resolve(const EventCatalog& catalog, const std::string& event) {
  try {
    for (const ResolvedGroup& group : catalog.resolve(event))
      for (const ResolvedEvent& resolved : group.members) (void)build_attr(resolved, SampleSettings{});
  } catch (const vperf::UserError&) {
    // Rejected with a message and a hint: expected for most terms and aliases.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<SysfsPmu> pmus{pmu_from_files(text)};
  const SysfsPmu& pmu = pmus.front();
  std::vector<std::string> events;
  for (const PmuEventAlias& alias : std::span(pmu.events).first(std::min(pmu.events.size(), kMaxTried))) {
    events.push_back("fz/" + alias.name + "/");
    events.push_back(alias.name + ":ppp");
  }
  for (const PmuFormatTerm& term : std::span(pmu.format).first(std::min(pmu.format.size(), kMaxTried))) {
    events.push_back("fz/" + term.name + "=0x1/");
    events.push_back("fz/" + term.name + "=0xffffffffffffffff/");
  }
  EventCatalog catalog(std::move(pmus), TracepointCatalog(std::vector<Tracepoint>{}), {}, "fz");
  (void)list_events(catalog, "");
  for (const std::string& event : events) resolve(catalog, event);
  return 0;
}
