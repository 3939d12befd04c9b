#include "pmc/pmc_encode.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include <boost/json.hpp>

#include "core/strings.h"
#include "events/attr_builder.h"
#include "pmc/pmc_notes.h"

namespace vperf::events {

namespace {

namespace json = boost::json;

std::string_view origin_label(EventOrigin origin) {
  switch (origin) {
    case EventOrigin::Builtin: return "perf builtin";
    case EventOrigin::Raw: return "raw";
    case EventOrigin::SysfsPmu: return "sysfs";
    case EventOrigin::Libpfm: return "libpfm4";
    case EventOrigin::Perfmon: return "perfmon";
    case EventOrigin::Tracepoint: return "tracefs";
    case EventOrigin::Breakpoint: return "breakpoint";
    case EventOrigin::Absent: return "absent";
  }
  return "unknown";
}

// perf's own modifier suffix for the privilege levels and precision the event ends up with.
std::string perf_modifier_suffix(const ResolvedEvent& e) {
  PrivilegeBits bits = privilege_bits(e);
  std::string s;
  if (bits.exclude_kernel && !bits.exclude_user) s += "u";
  if (bits.exclude_user && !bits.exclude_kernel) s += "k";
  s += std::string(static_cast<size_t>(std::max(0, e.modifiers.precise)), 'p');
  return s;
}

// Core-PMU events (raw type) also get perf's rNNN and cpu/.../ spellings.
void fill_syntax(EncodedEvent& out, const PmcCatalog& cat) {
  const ResolvedEvent& e = out.event;
  if (e.type != kPerfTypeRaw) return;  // uncore/RAPL/software events carry their own PMU type
  std::string suffix = perf_modifier_suffix(e);
  // rNNN carries config only: for an event that also programs an MSR it would count something else.
  if (e.config1 == 0)
    out.raw_syntax = perf_raw_syntax(e.config) + (suffix.empty() ? "" : ":" + suffix);
  else
    out.notes.push_back("no rNNN form: it cannot carry config1 (" +
                        (out.config1_term.empty() ? std::string("config1") : out.config1_term) + "=" + hex(e.config1) +
                        "); use the cpu/.../ form");
  out.pmu_syntax = perf_cpu_pmu_syntax(e.config, e.config1, out.config1_term, cat.layout) + suffix;
}

std::string precise_levels_text(const ResolvedEvent& e, CoreLayout layout) {
  if (!e.max_precise) return "not known for this event (vperf check probes what this machine allows)";
  if (layout == CoreLayout::Arm) return "0 only (PMUv3 samples with skid; arm64's precise sampling is SPE, a PMU of its own)";
  if (*e.max_precise == 0) return "0 only (not a PEBS event)";
  return "0-" + std::to_string(*e.max_precise) + " (PEBS)";
}

// What the catalog that resolved a named event knows about it beyond its encoding.
void add_named_details(EncodedEvent& enc, const EventEnvironment& env) {
  const ResolvedEvent& r = enc.event;
  if (r.origin == EventOrigin::Perfmon && env.perfmon() != nullptr) {
    if (const PerfmonEvent* pe = env.perfmon()->find(split(r.name, ':').front())) {
      PerfmonEncoding pen = encode_perfmon_event(*pe, env.pmc().layout);
      enc.description = pe->brief_description;
      enc.config1_term = pen.config1_term;
      if (!pen.fixed_counter_note.empty()) enc.notes.push_back("perfmon: " + pen.fixed_counter_note);
    }
  } else if (r.origin == EventOrigin::Libpfm) {
    if (auto details = env.pfm().resolve_with_details(r.name); details && *details) {
      enc.description = (*details)->second.description;
      enc.libpfm_fully_qualified = (*details)->second.fully_qualified;
    }
  }
  // Raw and cpu/.../ events say only config1=; name the MSR the event select programs.
  if (enc.config1_term.empty() && r.type == kPerfTypeRaw)
    enc.config1_term = std::string(config1_term_for_event_code(static_cast<uint32_t>(r.config & 0xff), env.pmc().layout));
  if (r.config1 == 0) enc.config1_term.clear();
}

// Where the catalog that did not resolve the event encodes the same name otherwise.
std::optional<OtherCatalogEncoding> other_catalog_encoding(const ResolvedEvent& r, const EncodingDisagreements& disagreements) {
  if (r.type != kPerfTypeRaw) return std::nullopt;
  if (r.origin == EventOrigin::Perfmon) return libpfm_encoding_if_different(disagreements, split(r.name, ':').front());
  if (r.origin != EventOrigin::Libpfm) return std::nullopt;
  // "ivb::EVENT:UMASK[:modifier...]"
  std::string_view name = r.name;
  if (size_t sep = name.find("::"); sep != std::string_view::npos) name = name.substr(sep + 2);
  std::vector<std::string_view> parts = split(name, ':');
  if (parts.size() < 2) return std::nullopt;
  return perfmon_encoding_if_different(disagreements, parts[0], parts[1]);
}

}  // namespace

std::vector<EncodedEvent> encode_events(const EventEnvironment& env, const std::vector<std::string>& events) {
  std::vector<EncodedEvent> out;
  EncodingDisagreements disagreements(env.pmc());
  for (const std::string& input : events) {
    for (const ResolvedGroup& group : env.catalog().resolve(input)) {
      for (const ResolvedEvent& event : group.members) {
        EncodedEvent enc;
        enc.input = input;
        enc.event = event;
        enc.source = std::string(origin_label(event.origin));
        enc.attr = build_attr(event, SampleSettings{});
        add_named_details(enc, env);
        fill_syntax(enc, env.pmc());
        enc.other_catalog = other_catalog_encoding(event, disagreements);
        if (event.type == kPerfTypeRaw)
          for (std::string& n : encoding_notes(env.pmc().model, event.config)) enc.notes.push_back(std::move(n));
        out.push_back(std::move(enc));
      }
    }
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
    // Where libpfm4 and Intel disagree, the first encoding line says so.
    std::string other = e.other_catalog ? "  " + e.other_catalog->text() : "";
    if (!e.raw_syntax.empty()) line("perf raw", e.raw_syntax + other);
    if (!e.pmu_syntax.empty()) line("perf pmu", e.pmu_syntax + (e.raw_syntax.empty() ? other : ""));
    if (r.type == PERF_TYPE_BREAKPOINT) {
      // A breakpoint's config1 and config2 are the attr's bp_addr and bp_len (a union).
      std::string access;
      for (auto [bit, letter] : {std::pair{HW_BREAKPOINT_R, 'r'}, std::pair{HW_BREAKPOINT_W, 'w'}, std::pair{HW_BREAKPOINT_X, 'x'}})
        if (r.bp_type & bit) access += letter;
      line("breakpoint", "address " + hex(r.config1) + ", " + std::to_string(r.config2) + " bytes, access " + access +
                             " (bp_type=" + std::to_string(r.bp_type) + ")");
    } else if (cat.layout != CoreLayout::Arm)
      line("extra MSR", r.config1 == 0 ? std::string("none")
                                       : (e.config1_term.empty() ? std::string("config1") : e.config1_term) + "=" +
                                             hex(r.config1) + " (config1)");
    line("precise levels", precise_levels_text(r, cat.layout));
    const perf_event_attr& a = e.attr;
    line("perf_event_attr", "type=" + std::to_string(a.type) + (a.type == kPerfTypeRaw ? " (PERF_TYPE_RAW)" : "") +
                                " config=" + hex(a.config) + " config1=" + hex(a.config1) + " config2=" +
                                hex(a.config2));
    line("", "exclude_user=" + std::to_string(a.exclude_user) + " exclude_kernel=" + std::to_string(a.exclude_kernel) +
                 " exclude_hv=" + std::to_string(a.exclude_hv) + " exclude_guest=" + std::to_string(a.exclude_guest) +
                 " exclude_host=" + std::to_string(a.exclude_host) + " precise_ip=" + std::to_string(a.precise_ip) +
                 " pinned=" + std::to_string(a.pinned));
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
    o["precise_levels"] = r.max_precise ? json::value(std::move(levels)) : json::value(nullptr);
    const perf_event_attr& a = e.attr;
    json::object attr;
    attr["type"] = a.type;
    attr["config"] = a.config;
    attr["config1"] = a.config1;
    attr["config2"] = a.config2;
    attr["bp_type"] = a.bp_type;
    attr["exclude_user"] = static_cast<bool>(a.exclude_user);
    attr["exclude_kernel"] = static_cast<bool>(a.exclude_kernel);
    attr["exclude_hv"] = static_cast<bool>(a.exclude_hv);
    attr["exclude_guest"] = static_cast<bool>(a.exclude_guest);
    attr["exclude_host"] = static_cast<bool>(a.exclude_host);
    attr["precise_ip"] = a.precise_ip;
    attr["pinned"] = static_cast<bool>(a.pinned);
    o["perf_event_attr"] = std::move(attr);
    o["config_hex"] = hex(r.config);
    o["other_catalog"] = other_catalog_json(e.other_catalog);
    if (!e.libpfm_fully_qualified.empty()) o["libpfm"] = e.libpfm_fully_qualified;
    json::array notes;
    for (const std::string& n : e.notes) notes.push_back(json::value(n));
    o["notes"] = std::move(notes);
    arr.push_back(std::move(o));
  }
  return arr;
}

}  // namespace vperf::events
