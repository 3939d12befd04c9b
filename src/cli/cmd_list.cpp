// vperf list [FILTER] [--json]                           perf's events available here
// vperf list --pmc [--model M] [--perfmon P] [FILTER]    the libpfm4 (+ perfmon) PMC catalog
// The logic lives in events/event_listing.h and pmc/pmc_catalog.h; this file decides which
// one runs and answers the listing's "does the kernel accept this hardware event" question.
#include <memory>

#include "cli/command.h"
#include "events/event_catalog.h"
#include "events/event_listing.h"
#include "pmc/pmc_catalog.h"
#include "output/json.h"
#include "perf/event_fd.h"
#include "stat/stat_metrics.h"

namespace vperf::cli {

namespace {

struct ListOptions {
  std::string filter;
  bool pmc = false;
  ModelOptions model;
  bool json = false;
  bool raw_dump = false;
};

// perf lists hardware and cache events only when the kernel opens them; so does vperf.
bool kernel_opens(const perf::PerfEventOpener& opener, uint32_t type, uint64_t config) {
  perf_event_attr attr = perf::user_space_probe_attr(type, config);
  attr.disabled = 1;
  return opener.open(attr, perf::OpenTarget{}).ok();
}

// vperf's named metrics (stat -M), laid out as perf list metrics lays out its own.
void print_metrics(std::ostream& out, bool json) {
  if (json) {
    boost::json::array metrics;
    for (const stat::NamedMetric& m : stat::named_metrics())
      metrics.push_back(boost::json::object{{"name", m.name}, {"events", m.events}, {"shows", m.shows}});
    output::print_json(out, boost::json::object{{"metrics", std::move(metrics)}});
    return;
  }
  out << "\nMetrics:\n\n";
  for (const stat::NamedMetric& m : stat::named_metrics())
    out << "  " << m.name << "\n       [" << m.shows << ": " << m.events << "]\n";
}

int run_list(const ListOptions& options, std::ostream& out, std::ostream& err) {
  if (options.raw_dump && (options.filter == "metrics" || options.filter == "metric")) {
    for (const stat::NamedMetric& m : stat::named_metrics()) out << m.name << ' ';
    out << '\n';  // as perf ends its metrics dump
    return 0;
  }
  // vperf's metrics have no groups: perf prints nothing where it has none.
  if (options.raw_dump && (options.filter == "metricgroups" || options.filter == "metricgroup")) return 0;
  if (options.filter == "metrics" || options.filter == "metric") {
    print_metrics(out, options.json);
    return 0;
  }
  if (options.pmc || !options.model.model.empty() || !options.model.perfmon.empty()) {
    events::PmcCatalogOptions catalog_options = options.model.catalog_options();
    catalog_options.require_tables = true;
    events::PmcCatalog catalog = events::load_pmc_catalog(catalog_options);
    if (options.json)
      output::print_json(out, events::pmc_catalog_json(catalog, options.filter));
    else
      events::print_pmc_catalog(out, catalog, options.filter);
    return 0;
  }
  events::EventCatalog catalog = events::EventCatalog::load(events::EventCatalogConfig{});
  perf::KernelPerfEventOpener opener;
  events::ListingOptions listing_options;
  listing_options.with_encodings = options.json;  // only --json prints them
  listing_options.hardware_event_supported = [&opener](uint32_t type, uint64_t config) {
    return kernel_opens(opener, type, config);
  };
  events::ListingResult listing = events::list_events(catalog, options.filter, listing_options);
  if (options.raw_dump)
    events::print_raw_dump(out, listing);
  else if (options.json)
    output::print_json(out, events::listing_json(listing));
  else
    events::print_listing(out, listing);
  // perf mounts tracefs to list tracepoints; vperf lists what it can and says in one line why
  // there are none and how to have them (never a silent list without them).
  if (listing.tracepoints_unavailable) err << "vperf: note: no tracepoints listed: " << *listing.tracepoints_unavailable << '\n';
  return 0;
}

}  // namespace

void add_list_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<ListOptions>();
  CLI::App* sub = app.add_subcommand("list", "List events: perf's groups here, or the PMC catalog of any CPU model");
  sub->add_option("filter", options->filter,
                  "A group (hw, sw, cache, pmu, tracepoint, metrics), a glob ('sched:*') or a substring ('cache')");
  sub->add_flag("--pmc", options->pmc, "List the libpfm4 PMC catalog: every core, uncore and RAPL event with its encoding");
  add_model_options(*sub, options->model);
  add_json_flag(*sub, options->json);
  sub->add_flag("--raw-dump", options->raw_dump, "Names only, space-separated, as perf list --raw-dump prints them (for scripts)")
      ->excludes("--json");
  sub->callback([&inv, options] { inv.action = [&inv, options] { return run_list(*options, *inv.out, *inv.err); }; });
}

}  // namespace vperf::cli
