// vperf encode [--model NAME] [--perfmon FILE|DIR] [--json] EVENT...
// The logic lives in pmc/pmc_encode.h (encode_events), callable without the CLI.
#include <memory>

#include "cli/command.h"
#include "pmc/pmc_encode.h"
#include "output/json.h"

namespace vperf::cli {

namespace {

struct EncodeOptions {
  ModelOptions model;
  bool json = false;
  std::vector<std::string> events;
};

int run_encode(const EncodeOptions& options, std::ostream& out) {
  events::EventEnvironmentOptions env_options;
  env_options.pmc = options.model.catalog_options();
  auto env = events::EventEnvironment::load(env_options);
  std::vector<events::EncodedEvent> encoded = events::encode_events(*env, options.events);
  if (options.json)
    output::print_json(out, events::encoded_events_json(env->pmc(), encoded));
  else
    events::print_encoded_events(out, env->pmc(), encoded);
  return 0;
}

}  // namespace

void add_encode_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<EncodeOptions>();
  CLI::App* sub = app.add_subcommand(
      "encode", "Encode events (libpfm4 and Intel perfmon names, raw, builtin, sysfs, tracepoints) as perf syntax and perf_event_attr");
  add_model_options(*sub, options->model);
  add_json_flag(*sub, options->json);
  sub->add_option("events", options->events, "Events: INST_RETIRED:ANY_P, ivb::L2_STORE_LOCK_RQSTS:HIT_M:u, INST_RETIRED.ANY_P, r13c:k, {cycles,instructions} ...")
      ->required();
  sub->callback([&inv, options] { inv.action = [&inv, options] { return run_encode(*options, *inv.out); }; });
}

}  // namespace vperf::cli
