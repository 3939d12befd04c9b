#include "events/pmc_encode.h"

#include <boost/json.hpp>

#include "core/strings.h"
#include "events/perfmon_event_source.h"
#include "events/pfm_event_source.h"
#include "events/pmc_notes.h"

namespace vperf::events {

namespace {

namespace json = boost::json;

// perf's own modifier suffix for what the event asked for: "u", "k", "pp".
std::string perf_modifier_suffix(const ResolvedEvent& e) {
  std::string s;
  if (e.exclude_kernel && !e.exclude_user) s += "u";
  if (e.exclude_user && !e.exclude_kernel) s += "k";
  s += std::string(static_cast<size_t>(std::max(0, e.modifiers.precise)), 'p');
  return s;
}

void fill_syntax(EncodedEvent& out, const PmcCatalog& cat) {
  const ResolvedEvent& e = out.event;
  if (e.type != kPerfTypeRaw) return;  // uncore/RAPL events from libpfm carry their own PMU type
  std::string suffix = perf_modifier_suffix(e);
  out.raw_syntax = perf_raw_syntax(e.config) + (suffix.empty() ? "" : ":" + suffix);
  out.pmu_syntax = perf_cpu_pmu_syntax(e.config, e.config1, out.config1_term, cat.layout) + suffix;
}

std::string precise_levels_text(const ResolvedEvent& e) {
  if (!e.max_precise || *e.max_precise == 0) return "0 only (not a PEBS event)";
  return "0-" + std::to_string(*e.max_precise) + " (PEBS)";
}

}  // namespace

std::vector<EncodedEvent> encode_pmc_events(const PmcCatalog& cat, const std::vector<std::string>& events) {
  PfmEventSource pfm(cat);
  std::optional<PerfmonEventSource> perfmon;
  if (!cat.perfmon.empty()) perfmon.emplace(cat.perfmon, cat.layout);
  std::string list_hint = "see 'vperf list --pmc --model " + cat.model.name + "'";

  std::vector<EncodedEvent> out;
  for (const std::string& name : events) {
    EncodedEvent enc;
    enc.input = name;
    bool found = false;
    if (perfmon) {
      if (std::optional<Result<ResolvedEvent>> r = perfmon->resolve(name)) {
        if (!*r) throw usage_error(r->error().message, list_hint);
        enc.source = "perfmon";
        enc.event = r->value();
        const PerfmonEvent* pe = perfmon->find(split(trim(name), ':').front());
        PerfmonEncoding pen = encode_perfmon_event(*pe, cat.layout);
        enc.description = pe->brief_description;
        enc.config1_term = pen.config1_term;
        if (!pen.fixed_counter_note.empty()) enc.notes.push_back("perfmon: " + pen.fixed_counter_note);
        found = true;
      }
    }
    if (!found) {
      if (auto r = pfm.resolve_with_details(name)) {
        if (!*r) throw usage_error(r->error().message, list_hint);
        enc.source = "libpfm4";
        enc.event = r->value().first;
        enc.description = r->value().second.description;
        enc.libpfm_fully_qualified = r->value().second.fully_qualified;
        enc.config1_term = std::string(config1_term_for_event_code(static_cast<uint32_t>(enc.event.config & 0xff)));
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> candidates = pfm.names();
      if (perfmon)
        for (std::string& n : perfmon->names()) candidates.push_back(std::move(n));
      std::vector<std::string> close = closest_names(split(trim(name), ':').front(), candidates);
      throw usage_error("unknown PMC event '" + name + "' for model " + cat.model.name,
                        (close.empty() ? std::string() : "did you mean " + join_alternatives(close) + "? ") + list_hint);
    }
    if (enc.event.config1 == 0) enc.config1_term.clear();
    fill_syntax(enc, cat);
    for (std::string& n : encoding_notes(cat.model, enc.event.config)) enc.notes.push_back(std::move(n));
    out.push_back(std::move(enc));
  }
  return out;
}

void print_encoded_events(std::ostream& out, const PmcCatalog& cat, const std::vector<EncodedEvent>& events) {
  bool first = true;
  for (const EncodedEvent& e : events) {
    if (!first) out << "\n";
    first = false;
    const ResolvedEvent& r = e.event;
    out << e.input << "  [" << e.source << ", model " << cat.model.name << "]\n";
    auto line = [&](std::string_view label, const std::string& value) {
      out << "  " << label << std::string(label.size() < 16 ? 16 - label.size() : 1, ' ') << value << "\n";
    };
    line("name", r.name);
    if (!e.description.empty()) line("description", e.description);
    if (!e.raw_syntax.empty()) line("perf raw", e.raw_syntax);
    if (!e.pmu_syntax.empty()) line("perf pmu", e.pmu_syntax);
    line("extra MSR", r.config1 == 0 ? std::string("none")
                                     : (e.config1_term.empty() ? std::string("config1") : e.config1_term) + "=" +
                                           hex(r.config1) + " (config1)");
    line("precise levels", precise_levels_text(r));
    line("perf_event_attr", "type=" + std::to_string(r.type) + (r.type == kPerfTypeRaw ? " (PERF_TYPE_RAW)" : "") +
                                " config=" + hex(r.config) + " config1=" + hex(r.config1) + " config2=" +
                                hex(r.config2));
    line("", "exclude_user=" + std::to_string(r.exclude_user) + " exclude_kernel=" + std::to_string(r.exclude_kernel) +
                 " exclude_hv=" + std::to_string(r.exclude_hv) + " precise_ip=" + std::to_string(r.modifiers.precise));
    if (!e.libpfm_fully_qualified.empty()) line("libpfm4", e.libpfm_fully_qualified);
    for (const std::string& n : e.notes) line("note", n);
  }
}

json::value encoded_events_json(const PmcCatalog& cat, const std::vector<EncodedEvent>& events) {
  json::array arr;
  for (const EncodedEvent& e : events) {
    const ResolvedEvent& r = e.event;
    json::object o;
    o["input"] = e.input;
    o["source"] = e.source;
    o["model"] = cat.model.name;
    o["name"] = r.name;
    o["description"] = e.description;
    o["pmu"] = r.pmu;
    o["raw"] = e.raw_syntax.empty() ? json::value(nullptr) : json::value(e.raw_syntax);
    o["perf"] = e.pmu_syntax.empty() ? json::value(nullptr) : json::value(e.pmu_syntax);
    o["config1_term"] = e.config1_term.empty() ? json::value(nullptr) : json::value(e.config1_term);
    json::array levels;
    for (int p = 0; p <= r.max_precise.value_or(0); ++p) levels.push_back(p);
    o["precise_levels"] = std::move(levels);
    json::object attr;
    attr["type"] = r.type;
    attr["config"] = r.config;
    attr["config1"] = r.config1;
    attr["config2"] = r.config2;
    attr["exclude_user"] = r.exclude_user;
    attr["exclude_kernel"] = r.exclude_kernel;
    attr["exclude_hv"] = r.exclude_hv;
    attr["precise_ip"] = r.modifiers.precise;
    o["perf_event_attr"] = std::move(attr);
    o["config_hex"] = hex(r.config);
    if (!e.libpfm_fully_qualified.empty()) o["libpfm"] = e.libpfm_fully_qualified;
    json::array notes;
    for (const std::string& n : e.notes) notes.push_back(json::value(n));
    o["notes"] = std::move(notes);
    arr.push_back(std::move(o));
  }
  return arr;
}

}  // namespace vperf::events
