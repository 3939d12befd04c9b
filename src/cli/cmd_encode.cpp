// vperf encode [--model NAME] [--perfmon FILE|DIR] [--json] EVENT...
// The logic lives in events/pmc_encode.h (encode_pmc_events), callable without the CLI.
#include <memory>

#include "cli/command.h"
#include "events/pmc_encode.h"
#include "output/json.h"

namespace vperf::cli {

namespace {

struct EncodeOptions {
  std::string model;
  std::string perfmon;
  bool json = false;
  std::vector<std::string> events;
};

int run_encode(const EncodeOptions& options, std::ostream& out) {
  events::PmcCatalogOptions catalog_options;
  catalog_options.model = options.model;
  if (!options.perfmon.empty()) catalog_options.perfmon = options.perfmon;
  events::PmcCatalog catalog = events::load_pmc_catalog(catalog_options);
  std::vector<events::EncodedEvent> encoded = events::encode_pmc_events(catalog, options.events);
  if (options.json)
    output::print_json(out, events::encoded_events_json(catalog, encoded));
  else
    events::print_encoded_events(out, catalog, encoded);
  return 0;
}

}  // namespace

void add_encode_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<EncodeOptions>();
  CLI::App* sub = app.add_subcommand(
      "encode", "Encode PMC events (libpfm4 or Intel perfmon names) as perf raw syntax and perf_event_attr");
  sub->add_option("--model", options->model, "CPU model to encode for (ivb, skx, icx, spr, zen3, ...); default: this CPU");
  sub->add_option("--perfmon", options->perfmon, "Intel perfmon JSON file, or a perfmon checkout root with mapfile.csv");
  add_json_flag(*sub, options->json);
  sub->add_option("events", options->events, "Events: INST_RETIRED:ANY_P, ivb::L2_STORE_LOCK_RQSTS:HIT_M:u, INST_RETIRED.ANY_P ...")
      ->required();
  sub->callback([&inv, options] { inv.action = [&inv, options] { return run_encode(*options, *inv.out); }; });
}

}  // namespace vperf::cli
