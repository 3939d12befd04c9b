#include "pmc/pmc_decode.h"

#include <boost/json.hpp>

#include "core/strings.h"
#include "pmc/perfmon_encoding.h"
#include "pmc/pmc_notes.h"

namespace vperf::events {

namespace {

namespace json = boost::json;

bool config1_matches(const RawEncoding& raw, uint64_t config1) { return !raw.has_config1 || raw.config1 == config1; }

// Where a config match goes: a match, or a variant when only config1 (not given) would decide.
void add_match(const RawEncoding& raw, DecodeMatch m, DecodedRaw& d) {
  if (!raw.has_config1 && m.config1 != 0)
    d.config1_variants.push_back(std::move(m));
  else
    d.matches.push_back(std::move(m));
}

void match_libpfm(const PmcCatalog& cat, const EncodingDisagreements& disagreements, const RawEncoding& raw,
                  DecodedRaw& out) {
  for (const PmcPmuEntry& entry : cat.pmus) {
    if (!entry.encoded || entry.pmu.kind != PfmPmuKind::Core) continue;  // raw forms name the core PMU
    for (const PfmEvent& e : entry.pmu.events) {
      std::string base = e.pmu + "::" + e.name;
      if (e.umasks.empty()) {
        if (e.encoding && e.encoding->config == raw.config && config1_matches(raw, e.encoding->config1))
          add_match(raw, {"libpfm4", base, e.description, e.encoding->config1, e.is_precise ? "PEBS" : "", std::nullopt},
                    out);
        continue;
      }
      for (size_t i = 0; i < e.umasks.size() && i < e.umask_encodings.size(); ++i) {
        const std::optional<PfmEncoding>& enc = e.umask_encodings[i];
        if (!enc || enc->config != raw.config || !config1_matches(raw, enc->config1)) continue;
        const PfmUmask& u = e.umasks[i];
        std::vector<std::string> detail;
        if (!u.alias_of.empty()) detail.push_back("alias of " + u.alias_of);
        if (u.is_default) detail.push_back("default umask");
        if (u.is_precise) detail.push_back("PEBS");
        add_match(raw,
                  {"libpfm4", base + ":" + u.name, u.description, enc->config1, join(detail, ", "),
                   perfmon_encoding_if_different(disagreements, e.name, u.name)},
                  out);
      }
    }
  }
}

void match_perfmon(const PmcCatalog& cat, const EncodingDisagreements& disagreements, const RawEncoding& raw,
                   DecodedRaw& out) {
  for (const PerfmonFile& f : cat.perfmon) {
    for (const PerfmonEvent& e : f.events) {
      if (e.is_uncore()) continue;
      PerfmonEncoding enc = encode_perfmon_event(e, cat.layout);
      bool config_hit = enc.config == raw.config;
      for (uint64_t alt : enc.alternative_configs) config_hit = config_hit || alt == raw.config;
      if (!config_hit || !config1_matches(raw, enc.config1)) continue;
      std::vector<std::string> detail;
      if (e.fixed_counter) detail.push_back("fixed counter " + std::to_string(*e.fixed_counter));
      if (e.pebs > 0) detail.push_back("PEBS");
      if (e.deprecated) detail.push_back("deprecated");
      add_match(raw,
                {"perfmon", e.name, e.brief_description, enc.config1, join(detail, ", "),
                 libpfm_encoding_if_different(disagreements, e.name)},
                out);
    }
  }
}

}  // namespace

DecodedRaw decode_pmc_encoding(const PmcCatalog& cat, const RawEncoding& raw) {
  DecodedRaw d;
  d.raw = raw;
  d.fields = split_core_config(raw.config, cat.layout);
  d.raw_syntax = perf_raw_syntax(raw.config);
  d.pmu_syntax = perf_cpu_pmu_syntax(raw.config, raw.config1,
                                     config1_term_for_event_code(d.fields.event & 0xff, cat.layout), cat.layout);
  EncodingDisagreements disagreements(cat);
  match_libpfm(cat, disagreements, raw, d);
  match_perfmon(cat, disagreements, raw, d);
  d.notes = encoding_notes(cat.model, raw.config);
  return d;
}

std::vector<DecodedRaw> decode_pmc_encodings(const PmcCatalog& cat, const std::vector<std::string>& tokens) {
  std::vector<RawEncoding> parsed;
  for (const std::string& t : tokens) {
    Result<RawEncoding> raw = parse_raw_encoding(t, cat.layout);
    if (!raw)
      throw usage_error(raw.error().message, cat.layout == CoreLayout::Arm
                                                 ? "write rNNN (hex config) or armv8_pmuv3/event=0x../"
                                                 : "write rNNN (hex config) or cpu/event=0x..,umask=0x../");
    parsed.push_back(*raw);
  }
  std::vector<DecodedRaw> out;
  for (const RawEncoding& raw : parsed) out.push_back(decode_pmc_encoding(cat, raw));
  return out;
}

namespace {

std::string fields_text(const CoreEventFields& f, CoreLayout layout) {
  if (layout == CoreLayout::Arm) return "event=" + hex(f.event);
  std::string s = "event=" + hex_padded(f.event, 2) + " umask=" + hex_padded(f.umask, 2);
  if (f.cmask) s += " cmask=" + std::to_string(f.cmask);
  if (f.invert) s += " inv";
  if (f.edge) s += " edge";
  if (f.any_thread) s += " any";
  if (f.pin_control) s += " pc";
  if (f.in_tx) s += " in_tx";
  if (f.in_tx_checkpointed) s += " in_tx_cp";
  return s;
}

}  // namespace

void print_decoded(std::ostream& out, const PmcCatalog& cat, const std::vector<DecodedRaw>& decoded) {
  bool first = true;
  for (const DecodedRaw& d : decoded) {
    if (!first) out << "\n";
    first = false;
    out << d.raw.text << " on " << cat.model.name << ": " << d.raw_syntax << " = " << d.pmu_syntax << "  ("
        << fields_text(d.fields, cat.layout) << ")\n";
    if (d.matches.empty() && d.config1_variants.empty()) {
      out << "  no catalog event has this encoding"
          << (cat.perfmon.empty() ? " in libpfm4's tables" : "") << "\n";
    }
    size_t width = 0;
    for (const DecodeMatch& m : d.matches) width = std::max(width, m.name.size());
    for (const DecodeMatch& m : d.matches) {
      out << "  " << (m.source == "libpfm4" ? "libpfm4 " : "perfmon ") << m.name << std::string(width - m.name.size() + 2, ' ');
      if (m.other_catalog) out << m.other_catalog->text() << " ";
      if (!m.detail.empty()) out << "[" << m.detail << "] ";
      if (m.config1 != 0) out << "[config1=" << hex(m.config1) << "] ";
      out << m.description << "\n";
    }
    if (!d.config1_variants.empty()) {
      std::string term(config1_term_for_event_code(d.fields.event & 0xff, cat.layout));
      if (term.empty()) term = "config1";
      out << "  " << d.config1_variants.size() << " events use this event select with an extra MSR value; add " << term
          << "=0x.. to pick one:\n";
      constexpr size_t kShown = 6;
      for (size_t i = 0; i < d.config1_variants.size() && i < kShown; ++i) {
        const DecodeMatch& m = d.config1_variants[i];
        out << "    " << m.source << " " << m.name << "  " << term << "=" << hex(m.config1) << "\n";
      }
      if (d.config1_variants.size() > kShown) out << "    ... (" << d.config1_variants.size() - kShown << " more; --json lists all)\n";
    }
    // "A = B": the libpfm4 and perfmon names of the same counter, as the user will search for both.
    std::vector<std::string> pfm_names, perfmon_names;
    for (const DecodeMatch& m : d.matches) (m.source == "libpfm4" ? pfm_names : perfmon_names).push_back(m.name);
    if (!pfm_names.empty() && !perfmon_names.empty())
      out << "  same counter: " << join(pfm_names, ", ") << " (libpfm4) = " << join(perfmon_names, ", ") << " (perfmon)\n";
    for (const std::string& n : d.notes) out << "  note: " << n << "\n";
  }
}

json::value decoded_json(const PmcCatalog& cat, const std::vector<DecodedRaw>& decoded) {
  json::array arr;
  for (const DecodedRaw& d : decoded) {
    json::object o;
    o["input"] = d.raw.text;
    o["model"] = cat.model.name;
    o["config"] = d.raw.config;
    o["config_hex"] = hex(d.raw.config);
    o["config1"] = d.raw.has_config1 ? json::value(d.raw.config1) : json::value(nullptr);
    o["raw"] = d.raw_syntax;
    o["perf"] = d.pmu_syntax;
    json::object f;
    f["event"] = d.fields.event;
    f["umask"] = d.fields.umask;
    f["cmask"] = d.fields.cmask;
    f["inv"] = d.fields.invert;
    f["edge"] = d.fields.edge;
    f["any"] = d.fields.any_thread;
    f["pc"] = d.fields.pin_control;
    f["in_tx"] = d.fields.in_tx;
    f["in_tx_cp"] = d.fields.in_tx_checkpointed;
    o["fields"] = std::move(f);
    json::array matches;
    for (const DecodeMatch& m : d.matches)
      matches.push_back(json::object{{"source", m.source}, {"name", m.name}, {"description", m.description},
                                     {"config1", hex(m.config1)}, {"detail", m.detail},
                                     {"other_catalog", other_catalog_json(m.other_catalog)}});
    o["matches"] = std::move(matches);
    json::array variants;
    for (const DecodeMatch& m : d.config1_variants)
      variants.push_back(json::object{{"source", m.source}, {"name", m.name}, {"description", m.description},
                                      {"config1", hex(m.config1)}, {"detail", m.detail}});
    o["config1_variants"] = std::move(variants);
    json::array notes;
    for (const std::string& n : d.notes) notes.push_back(json::value(n));
    o["notes"] = std::move(notes);
    arr.push_back(std::move(o));
  }
  return arr;
}

}  // namespace vperf::events
