// vperf decode [--model NAME] [--perfmon FILE|DIR] [--json] RAW...
// The logic lives in pmc/pmc_decode.h (decode_pmc_encodings), callable without the CLI.
#include <memory>

#include "cli/command.h"
#include "pmc/pmc_decode.h"
#include "output/json.h"

namespace vperf::cli {

namespace {

struct DecodeOptions {
  ModelOptions model;
  bool json = false;
  std::vector<std::string> encodings;
};

int run_decode(const DecodeOptions& options, std::ostream& out) {
  events::PmcCatalog catalog = events::load_pmc_catalog(options.model.catalog_options());
  std::vector<events::DecodedRaw> decoded = events::decode_pmc_encodings(catalog, options.encodings);
  if (options.json)
    output::print_json(out, events::decoded_json(catalog, decoded));
  else
    events::print_decoded(out, catalog, decoded);
  return 0;
}

}  // namespace

void add_decode_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<DecodeOptions>();
  CLI::App* sub = app.add_subcommand("decode", "List the catalog events (libpfm4, perfmon JSON) with a raw encoding");
  add_model_options(*sub, options->model);
  add_json_flag(*sub, options->json);
  sub->add_option("raw", options->encodings, "Raw encodings: r13c, 0x13c, cpu/event=0x3c,umask=0x01/")->required();
  sub->callback([&inv, options] { inv.action = [&inv, options] { return run_decode(*options, *inv.out); }; });
}

}  // namespace vperf::cli
