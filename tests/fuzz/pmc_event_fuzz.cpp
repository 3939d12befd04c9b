// libFuzzer target for event names that reach libpfm4 (pmc/pfm_event_source.h) and Intel's
// perfmon tables (pmc/perfmon_event_source.h) through the resolver, as `vperf encode --model
// skx` and `vperf stat -e` do: any byte string must resolve or throw vperf::UserError. Each name
// opens and closes libpfm4 sessions (forced to skx, or to the model a prefix names), so this also
// drives libpfm4's initialise/terminate cycle that once read freed tables where debugfs was
// mounted; its replay runs in every mount state (tests/CMakeLists.txt, mount_state.*).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/error.h"
#include "events/attr_builder.h"
#include "pmc/event_environment.h"
#include "events/event_spec.h"

namespace {

using namespace vperf::events;

const EventEnvironment& skx_environment() {
  static const std::unique_ptr<EventEnvironment> env = [] {
    EventEnvironmentOptions options;
    options.pmc.model = "skx";
    options.pmc.perfmon = std::filesystem::path(VPERF_TESTDATA) / "perfmon";
    return EventEnvironment::load(options);
  }();
  return *env;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    for (const ResolvedGroup& group : skx_environment().catalog().resolve(parse_event_list(input)))
      for (const ResolvedEvent& event : group.members) (void)build_attr(event, SampleSettings{});
  } catch (const vperf::UserError&) {
    // Rejected input with a message: the expected outcome for most inputs.
  }
  return 0;
}
