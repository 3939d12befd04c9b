// libFuzzer target for the event-string parser and resolver (events/event_spec.h,
// events/event_catalog.h): any byte string must either parse or throw vperf::UserError,
// never crash, hang or throw anything else. The catalog is built in memory (a fake "cpu"
// and "msr" PMU, a few tracepoints) so that runs do no I/O and are reproducible.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "events/attr_builder.h"
#include "events/event_catalog.h"
#include "events/event_spec.h"

namespace {

using namespace vperf::events;

SysfsPmu fake_pmu(const char* name, uint32_t type, std::vector<std::pair<const char*, const char*>> format,
                  std::vector<PmuEventAlias> aliases) {
  SysfsPmu pmu;
  pmu.name = name;
  pmu.type = type;
  for (const auto& [term, spec] : format) pmu.format.push_back(parse_format_term(term, spec).value());
  pmu.events = std::move(aliases);
  return pmu;
}

const EventCatalog& fuzz_catalog() {
  static const EventCatalog catalog = [] {
    std::vector<SysfsPmu> pmus;
    pmus.push_back(fake_pmu("cpu", 4,
                            {{"event", "config:0-7"}, {"umask", "config:8-15,32-35"}, {"inv", "config:23"},
                             {"cmask", "config:24-31"}, {"ldlat", "config1:0-15"}},
                            {{"mem-loads", "event=0xcd,umask=0x1,ldlat=3", "", ""}}));
    pmus.push_back(fake_pmu("msr", 10, {{"event", "config:0-63"}}, {{"tsc", "event=0x00", "", ""}}));
    pmus.push_back(fake_pmu("uncore_imc_0", 20, {{"event", "config:0-7"}}, {{"cas", "event=0x4", "", ""}}));
    TracepointCatalog tracepoints({{"sched", "sched_switch", {}, 372}, {"sched", "sched_wakeup", {}, 374},
                                   {"syscalls", "sys_enter_read", {}, 700}});
    return EventCatalog(std::move(pmus), std::move(tracepoints), {});
  }();
  return catalog;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    std::vector<GroupSpec> groups = parse_event_list(input);
    for (const ResolvedGroup& group : fuzz_catalog().resolve(groups))
      for (const ResolvedEvent& event : group.members) (void)build_attr(event, SampleSettings{});
  } catch (const vperf::UserError&) {
    // Rejected input with a message: the expected outcome for most inputs.
  }
  return 0;
}
