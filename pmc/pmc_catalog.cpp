#include "pmc/pmc_catalog.h"

#include <algorithm>
#include <boost/json.hpp>
#include <set>

#include "core/files.h"
#include "core/strings.h"
#include "pmc/encoding_disagreements.h"
#include "pmc/perf_arm64_events.h"
#include "pmc/perfmon_bundle.h"
#include "pmc/perfmon_encoding.h"
#include "pmc/perfmon_mapfile.h"
#include "output/table.h"

namespace vperf::events {

namespace {

namespace json = boost::json;

PfmSession open_session(const std::optional<std::string>& forced_pmu) {
  Result<PfmSession> s = PfmSession::open(forced_pmu);
  if (!s) throw UserError(s.error().message, "check that libpfm4 is installed (libpfm4 package)");
  return std::move(s).value();
}

bool is_candidate_core_pmu(const PfmPmu& p) { return p.kind == PfmPmuKind::Core && p.present; }

// Whether this libpfm4 build has a PMU of that name at all (present or not).
bool libpfm_has_pmu(const std::string& name) {
  if (name.empty()) return false;
  PfmSession session = open_session(std::nullopt);
  for (const PfmPmu& p : session.list_pmus())
    if (p.name == name) return true;
  return false;
}

PmcModel model_for_libpfm_pmu(const PfmPmu& pmu) {
  if (std::optional<PmcModel> known = find_known_pmc_model(pmu.name)) return *known;
  PmcModel m;
  m.name = pmu.name;
  m.libpfm_pmu = pmu.name;
  m.description = pmu.description;
  return m;
}

CoreLayout layout_for(const PmcModel& model) {
  if (model.is_arm() || starts_with_nocase(model.libpfm_pmu, "arm_")) return CoreLayout::Arm;
  if (model.cpu) return model.cpu->vendor == "AuthenticAMD" ? CoreLayout::Amd : CoreLayout::Intel;
  return starts_with_nocase(model.libpfm_pmu, "amd64") ? CoreLayout::Amd : CoreLayout::Intel;
}

// Fills the encodings of every event and umask; only valid while `pmu` is active in `session`.
void encode_events(const PfmSession& session, PfmPmu& pmu) {
  for (PfmEvent& e : pmu.events) {
    std::string base = e.pmu + "::" + e.name;
    Result<PfmEncoding> enc = session.encode(base);
    if (enc)
      e.encoding = *enc;
    else
      e.encoding_error = enc.error().message;
    e.umask_encodings.clear();
    for (const PfmUmask& u : e.umasks) {
      Result<PfmEncoding> ue = session.encode(base + ":" + u.name);
      e.umask_encodings.push_back(ue ? std::optional<PfmEncoding>(*ue) : std::nullopt);
    }
  }
}

std::string name_stem(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  return name.substr(0, end);
}

// Uncore boxes come as many identical libpfm PMUs (skx_unc_cha0 .. skx_unc_cha27); list one.
void fold_instances(std::vector<PmcPmuEntry>& entries) {
  std::vector<PmcPmuEntry> folded;
  for (PmcPmuEntry& e : entries) {
    auto same = std::find_if(folded.begin(), folded.end(), [&](const PmcPmuEntry& f) {
      return f.pmu.kind == PfmPmuKind::Uncore && e.pmu.kind == PfmPmuKind::Uncore &&
             name_stem(f.pmu.name) == name_stem(e.pmu.name) && f.pmu.event_count == e.pmu.event_count &&
             name_stem(f.pmu.name) != f.pmu.name;
    });
    if (same != folded.end()) {
      same->instance_names.push_back(e.pmu.name);
      continue;
    }
    e.instance_names = {e.pmu.name};
    folded.push_back(std::move(e));
  }
  entries = std::move(folded);
}

std::set<std::string> sysfs_pmu_names(const std::filesystem::path& root) {
  Result<std::vector<std::string>> names = list_directory(root);
  if (!names) return {};
  return {names->begin(), names->end()};
}

std::string kernel_status_for(const PmcPmuEntry& entry, const PmcCatalog& catalog, const std::set<std::string>& sysfs,
                              const std::filesystem::path& root) {
  if (!catalog.model.running_cpu)
    return "not asked: --model " + catalog.model.name + " describes a CPU other than this machine's";
  auto has = [&](std::string_view n) { return sysfs.count(std::string(n)) != 0; };
  if (entry.pmu.kind == PfmPmuKind::Core || entry.pmu.name.empty()) {
    for (std::string_view n : {"cpu", "cpu_core", "cpu_atom"})
      if (has(n)) return "the kernel exposes the '" + std::string(n) + "' PMU (" + (root / n).string() + ")";
    for (const std::string& n : sysfs)
      if (n.starts_with("armv8_") || n.starts_with("armv9_"))
        return "the kernel exposes the '" + n + "' PMU (" + (root / n).string() + ")";
    return "no core PMU (cpu, cpu_core, armv8_*) under " + root.string() +
           ": the kernel cannot count these events here (a VM without a virtual PMU?)";
  }
  if (entry.pmu.name == catalog.model.rapl_pmu || entry.pmu.name == "rapl" || entry.pmu.name == "amd64_rapl")
    return has("power") ? "the kernel exposes the 'power' PMU (RAPL energy counters)"
                        : "no 'power' PMU under " + root.string();
  size_t uncore = std::count_if(sysfs.begin(), sysfs.end(), [](const std::string& n) { return n.rfind("uncore_", 0) == 0; });
  if (uncore > 0) return "the kernel exposes " + std::to_string(uncore) + " uncore_* PMUs";
  return "no uncore_* PMU under " + root.string() + ": the kernel cannot count these events here";
}

void add_pmu(PmcCatalog& cat, const PfmSession& session, PfmPmu pmu, bool encodable, std::string libpfm_status) {
  pmu.events = session.load_events(pmu);
  if (encodable) encode_events(session, pmu);
  PmcPmuEntry entry;
  entry.pmu = std::move(pmu);
  entry.encoded = encodable;
  entry.libpfm_status = std::move(libpfm_status);
  cat.pmus.push_back(std::move(entry));
}

bool belongs_to_model(const PfmPmu& pmu, const PmcModel& model) {
  if (!model.rapl_pmu.empty() && pmu.name == model.rapl_pmu) return true;
  for (const std::string& prefix : model.uncore_pmu_prefixes)
    if (pmu.name.rfind(prefix, 0) == 0) return true;
  return false;
}

int kind_rank(const PmcPmuEntry& e, const PmcModel& model) {
  if (e.pmu.kind == PfmPmuKind::Core) return 0;
  if (e.pmu.name == model.rapl_pmu) return 2;
  return 1;
}

}  // namespace

const PmcPmuEntry* PmcCatalog::core_pmu() const {
  for (const PmcPmuEntry& e : pmus)
    if (e.pmu.kind == PfmPmuKind::Core) return &e;
  return nullptr;
}

size_t PmcCatalog::libpfm_event_count() const {
  size_t n = 0;
  for (const PmcPmuEntry& e : pmus) n += e.pmu.events.size();
  return n;
}

size_t PmcCatalog::perfmon_event_count() const {
  size_t n = 0;
  for (const PerfmonFile& f : perfmon) n += f.events.size();
  return n;
}

static std::optional<PmcModel> running_cpu_pmc_model() {
  // arm64: by MIDR, which also names the cores libpfm4 does not know (AmpereOne, Cortex-A72).
  if (std::optional<uint32_t> midr = running_midr()) {
    std::optional<PmcModel> m = find_pmc_model_by_midr(*midr);
    if (m) m->running_cpu = true;
    return m;
  }
  PfmSession session = open_session(std::nullopt);
  std::vector<PfmPmu> pmus = session.list_pmus();
  std::optional<CpuSignature> cpu = running_cpu_signature();
  // By CPUID first: a PMU forced earlier in this process also reads as present (see
  // pfm_session.h).
  std::optional<PmcModel> by_cpu = cpu ? find_pmc_model_by_cpu(*cpu) : std::nullopt;
  const PfmPmu* core = nullptr;
  for (const PfmPmu& p : pmus)
    if (is_candidate_core_pmu(p) && by_cpu && p.name == by_cpu->libpfm_pmu) core = &p;
  for (const PfmPmu& p : pmus)
    if (core == nullptr && is_candidate_core_pmu(p)) core = &p;
  if (core == nullptr) return std::nullopt;
  PmcModel m = model_for_libpfm_pmu(*core);
  if (cpu) m.cpu = cpu;
  m.running_cpu = true;
  return m;
}

bool running_cpu_has_pmc_model() { return running_cpu_pmc_model().has_value(); }

namespace {

// This machine's CPU when no table knows it (a CPU newer than libpfm4, QEMU's -cpu max): named
// by its signature or MIDR, in its vendor's layout, with no tables of its own.
PmcModel table_less_running_model() {
  PmcModel m;
  m.running_cpu = true;
  if (std::optional<uint32_t> midr = running_midr()) {
    m.midr = *midr;
    m.name = "MIDR " + hex_padded(*midr, 8);
    m.description = "this machine's arm64 CPU, which neither vperf's model table nor perf's arm64 tables name";
  } else {
    m.cpu = running_cpu_signature();
    m.name = m.cpu ? m.cpu->mapfile_key() : std::string("this CPU");
    m.description = "this machine's CPU, which libpfm4 does not know";
  }
  return m;
}

// The one line list --pmc says when nothing describes this machine's CPU.
[[noreturn]] void throw_no_tables(const PmcModel& model) {
  if (model.midr)
    throw UserError("no PMC tables for this arm64 CPU (" + model.name +
                        "): neither vperf's model table nor perf's arm64 tables name it",
                    "pass --model NAME for the core it is or resembles, e.g. --model neoverse-n1; vperf list --pmc "
                    "--model NAME lists any known model's events");
  throw UserError("libpfm4 does not recognise this CPU (" + model.name + ") and no bundled table names it",
                  "pass --model NAME to describe a CPU vperf knows, e.g. --model skx");
}

}  // namespace

PmcModel resolve_pmc_model(std::string_view requested) {
  if (requested.empty()) {
    if (std::optional<PmcModel> m = running_cpu_pmc_model()) return *m;
    return table_less_running_model();
  }
  if (std::optional<PmcModel> known = find_known_pmc_model(requested)) return *known;
  PfmSession session = open_session(std::nullopt);
  std::vector<std::string> candidates;
  for (const PmcModel& m : known_pmc_models()) {
    candidates.push_back(m.name);
    for (const std::string& a : m.aliases) candidates.push_back(a);
  }
  size_t libpfm_core_pmus = 0;
  for (const PfmPmu& p : session.list_pmus()) {
    if (p.kind != PfmPmuKind::Core) continue;
    if (equals_nocase(p.name, requested)) return model_for_libpfm_pmu(p);
    candidates.push_back(p.name);
    ++libpfm_core_pmus;
  }
  std::vector<std::string> names;
  for (const PmcModel& m : known_pmc_models()) names.push_back(m.name);
  std::vector<std::string> closest = closest_names(requested, candidates);
  std::string hint = closest.empty() ? std::string() : "did you mean " + join_alternatives(closest) + "? ";
  throw usage_error("unknown CPU model '" + std::string(requested) + "'",
                    hint + "known models: " + join(names, ", ") + "; or any of the " + std::to_string(libpfm_core_pmus) +
                        " libpfm4 core PMU names (vperf list --pmc --model NAME)");
}

PmcCatalog load_libpfm_catalog(const PmcCatalogOptions& options) {
  PmcCatalog cat;
  cat.model = resolve_pmc_model(options.model);
  cat.layout = layout_for(cat.model);

  if (cat.model.is_arm() && !libpfm_has_pmu(cat.model.libpfm_pmu)) {
    // libpfm4 compiles its arm tables into its arm64 build only: an x86 vperf, or a core libpfm4
    // does not know, lists perf's arm64 tables alone.
    cat.notes.push_back(cat.model.libpfm_pmu.empty()
                            ? "libpfm4 has no table for " + cat.model.name + ": perf's arm64 tables only"
                            : "libpfm4 has no '" + cat.model.libpfm_pmu +
                                  "' PMU in this build (its arm tables are in its arm64 build only): perf's arm64 "
                                  "tables only");
  } else if (cat.model.running_cpu) {
    PfmSession session = open_session(std::nullopt);
    for (PfmPmu& p : session.list_pmus()) {
      if (!p.present) continue;
      // One core PMU: the model's. Others may read as present only because an earlier session
      // in this process forced them (see pfm_session.h).
      if (p.kind == PfmPmuKind::Core && p.name != cat.model.libpfm_pmu) continue;
      if (p.kind != PfmPmuKind::Core && p.kind != PfmPmuKind::Uncore) continue;
      add_pmu(cat, session, std::move(p), true, "present by CPU model (libpfm4 reads CPUID; it does not probe the PMU)");
    }
  } else {
    {
      PfmSession forced = open_session(cat.model.libpfm_pmu);
      bool found = false;
      for (PfmPmu& p : forced.list_pmus()) {
        if (p.name != cat.model.libpfm_pmu) continue;
        if (!p.present)
          throw UserError("libpfm4 could not activate PMU '" + p.name + "' for --model " + cat.model.name,
                          "this libpfm4 build may not support it; try another --model");
        add_pmu(cat, forced, std::move(p), true, "forced for --model (LIBPFM_FORCE_PMU=" + cat.model.libpfm_pmu + ")");
        found = true;
      }
      if (!found)
        throw UserError("libpfm4 has no PMU named '" + cat.model.libpfm_pmu + "'", "try another --model");
    }
    if (!cat.model.uncore_pmu_prefixes.empty() || !cat.model.rapl_pmu.empty()) {
      PfmSession tables = open_session(std::nullopt);
      bool any_table_only = false;
      for (PfmPmu& p : tables.list_pmus()) {
        if (!belongs_to_model(p, cat.model)) continue;
        any_table_only = true;
        add_pmu(cat, tables, std::move(p), false, "table only (libpfm4 activates uncore and RAPL PMUs only on their own CPU)");
      }
      if (any_table_only)
        cat.notes.push_back("uncore and RAPL events of --model " + cat.model.name +
                            " are listed from libpfm4's tables without encodings: LIBPFM_FORCE_PMU activates one core "
                            "PMU only");
    }
  }
  std::stable_sort(cat.pmus.begin(), cat.pmus.end(), [&](const PmcPmuEntry& a, const PmcPmuEntry& b) {
    return kind_rank(a, cat.model) < kind_rank(b, cat.model);
  });
  fold_instances(cat.pmus);

  std::set<std::string> sysfs = sysfs_pmu_names(options.sysfs_pmu_root);
  for (PmcPmuEntry& e : cat.pmus) e.kernel_status = kernel_status_for(e, cat, sysfs, options.sysfs_pmu_root);
  return cat;
}

void add_perfmon_tables(PmcCatalog& cat, const PmcCatalogOptions& options) {
  PerfmonImport imported;
  if (cat.model.is_arm()) {
    if (options.perfmon)
      throw usage_error("--perfmon reads Intel's perfmon tables, and " + cat.model.name + " is an arm64 core",
                        "drop --perfmon: arm64 models use vperf's bundled copy of perf's arm64 tables");
    std::filesystem::path bundle = bundled_perf_arm64_dir();
    imported = import_bundled_perf_arm64(bundle, *cat.model.midr);
    cat.perfmon_origin = "vperf's bundled copy of Linux perf's arm64 tables (" + bundle.string() + ")";
  } else if (options.perfmon) {
    imported = import_perfmon(*options.perfmon, cat.model.cpu);
    cat.perfmon_origin = "--perfmon " + options.perfmon->string();
  } else if (cat.model.cpu && cat.model.cpu->is_intel()) {
    std::filesystem::path bundle = bundled_perfmon_dir();
    imported = import_bundled_perfmon(bundle, *cat.model.cpu);
    cat.perfmon_origin = "vperf's bundled copy of Intel's tables (" + bundle.string() + ")";
  } else if (!cat.model.cpu && cat.layout == CoreLayout::Intel) {
    cat.notes.push_back("model " + cat.model.name +
                        " has no CPU signature in vperf's model table, so Intel's perfmon tables cannot be chosen for it: "
                        "libpfm4's names only (--perfmon FILE.json adds Intel's)");
  }
  cat.perfmon = std::move(imported.files);
  for (std::string& n : imported.notes) cat.notes.push_back(std::move(n));
}

PmcCatalog load_pmc_catalog(const PmcCatalogOptions& options) {
  PmcCatalog cat = load_libpfm_catalog(options);
  add_perfmon_tables(cat, options);
  if (cat.model.running_cpu && cat.pmus.empty() && cat.perfmon.empty()) {
    if (options.require_tables) throw_no_tables(cat.model);
    cat.notes.push_back("no table describes this machine's CPU (" + cat.model.name +
                        "): raw events (rNNN) encode and decode; --model NAME gives a known model's names");
  }
  return cat;
}

bool pmc_filter_matches(std::string_view filter, std::string_view name) {
  if (filter.empty()) return true;
  if (has_glob(filter)) return glob_match(to_upper(filter), to_upper(name));
  return to_upper(name).find(to_upper(filter)) != std::string::npos;
}

namespace {

// Aligned columns without a header line.
output::TextTable unlabeled_columns(size_t count) {
  return output::TextTable(std::vector<output::TextTable::Column>(count, {"", output::Align::Left}));
}

std::string encoding_cells(const std::optional<PfmEncoding>& enc, CoreLayout layout, bool core,
                           std::string* pmu_syntax) {
  if (!enc) return "-";
  if (core) {
    uint32_t code = static_cast<uint32_t>(enc->config & 0xff);
    *pmu_syntax = perf_cpu_pmu_syntax(enc->config, enc->config1, config1_term_for_event_code(code, layout), layout);
    return perf_raw_syntax(enc->config);
  }
  *pmu_syntax = "type=" + std::to_string(enc->type) + ",config=" + hex(enc->config);
  return hex(enc->config);
}

struct EventSelection {
  bool event_matches = false;
  std::vector<size_t> umasks;  // indexes of umasks to show
};

EventSelection select_event(const PfmEvent& e, std::string_view filter) {
  EventSelection sel;
  sel.event_matches = pmc_filter_matches(filter, e.name) || pmc_filter_matches(filter, e.pmu + "::" + e.name);
  for (size_t i = 0; i < e.umasks.size(); ++i)
    if (sel.event_matches || pmc_filter_matches(filter, e.name + ":" + e.umasks[i].name) ||
        pmc_filter_matches(filter, e.name + "." + e.umasks[i].name))
      sel.umasks.push_back(i);
  return sel;
}

std::string modifier_list(const PfmEvent& e) {
  std::vector<std::string> parts;
  for (const PfmModifier& m : e.modifiers) parts.push_back(m.takes_value ? m.name + "=<n>" : m.name);
  return join(parts, " ");
}

// libpfm4's own counts: per core with Hyper-Threading off on Intel (SPR: 16, though CPUID
// leaf 0xA gives 8 per thread), so they are labelled as libpfm4's, not stated as facts.
std::string counters_text(const PfmPmu& p) {
  std::string s = "libpfm4: " + std::to_string(p.generic_counters) + " generic";
  if (p.fixed_counters > 0) s += " + " + std::to_string(p.fixed_counters) + " fixed";
  return s + " counters";
}

std::string perfmon_flags(const PerfmonEvent& e) {
  std::vector<std::string> f;
  if (e.pebs > 0) f.push_back(e.precise_distribution ? "PEBS+PDIST" : "PEBS");
  if (e.fixed_counter) f.push_back("fixed" + std::to_string(*e.fixed_counter));
  if (e.deprecated) f.push_back("deprecated");
  if (e.is_uncore()) f.push_back(e.unit);
  return join(f, ",");
}

json::object encoding_json(const std::optional<PfmEncoding>& enc, CoreLayout layout, bool core) {
  json::object o;
  if (!enc) return o;
  o["type"] = enc->type;
  o["config"] = hex(enc->config);
  o["config1"] = hex(enc->config1);
  o["config2"] = hex(enc->config2);
  std::string pmu_syntax;
  o["raw"] = encoding_cells(enc, layout, core, &pmu_syntax);
  o["perf"] = pmu_syntax;
  o["libpfm"] = enc->fully_qualified;
  return o;
}

}  // namespace

void print_pmc_catalog(std::ostream& out, const PmcCatalog& cat, std::string_view filter) {
  out << "PMC catalog for " << cat.model.name << " (" << cat.model.description << ")";
  if (cat.model.running_cpu) out << ", the CPU of this machine";
  if (cat.model.cpu) out << ", CPUID " << cat.model.cpu->mapfile_key();
  out << "\nlibpfm4: " << cat.pmus.size() << " PMU tables, " << cat.libpfm_event_count() << " events";
  if (!cat.perfmon.empty()) out << "; perfmon JSON: " << cat.perfmon.size() << " files, " << cat.perfmon_event_count() << " events";
  out << "\n";
  if (!cat.perfmon_origin.empty()) out << "perfmon: " << cat.perfmon_origin << "; its names and encodings win over libpfm4's\n";
  EncodingDisagreements disagreements(cat);
  for (const std::string& n : cat.notes) out << "note: " << n << "\n";

  for (const PmcPmuEntry& entry : cat.pmus) {
    const PfmPmu& p = entry.pmu;
    bool core = p.kind == PfmPmuKind::Core;
    std::vector<std::pair<const PfmEvent*, EventSelection>> shown;
    for (const PfmEvent& e : p.events) {
      EventSelection sel = select_event(e, filter);
      if (sel.event_matches || !sel.umasks.empty()) shown.emplace_back(&e, std::move(sel));
    }
    if (!filter.empty() && shown.empty()) continue;
    out << "\n" << p.name << ": " << p.description << " [" << pfm_pmu_kind_name(p.kind) << " PMU, " << counters_text(p)
        << ", " << p.events.size() << " events]\n";
    if (entry.instance_names.size() > 1)
      out << "  instances: " << entry.instance_names.front() << " .. " << entry.instance_names.back() << " ("
          << entry.instance_names.size() << " with the same events)\n";
    out << "  libpfm4: " << entry.libpfm_status << "\n  kernel:  " << entry.kernel_status << "\n";
    for (const auto& [e, sel] : shown) {
      out << "\n  " << e->name << "  code " << hex(e->code) << (e->is_precise ? "  PEBS" : "") << "  " << e->description
          << "\n";
      if (e->umasks.empty()) {
        std::string pmu_syntax;
        std::string raw = entry.encoded ? encoding_cells(e->encoding, cat.layout, core, &pmu_syntax) : "-";
        out << "    encoding: " << raw << (pmu_syntax.empty() ? "" : "  " + pmu_syntax) << "\n";
      } else {
        std::vector<std::string> defaults;
        for (const PfmUmask& u : e->umasks)
          if (u.is_default) defaults.push_back(u.name);
        out << "    default umask: " << (defaults.empty() ? std::string("none (a umask is required)") : join(defaults, ":"))
            << "\n";
        output::TextTable table = unlabeled_columns(6);
        for (size_t i : sel.umasks) {
          const PfmUmask& u = e->umasks[i];
          std::string pmu_syntax;
          std::string raw = entry.encoded && i < e->umask_encodings.size()
                                ? encoding_cells(e->umask_encodings[i], cat.layout, core, &pmu_syntax)
                                : "-";
          if (core)
            if (std::optional<OtherCatalogEncoding> intel = perfmon_encoding_if_different(disagreements, e->name, u.name))
              raw += " " + intel->text();
          std::vector<std::string> flags;
          if (u.is_default) flags.push_back("default");
          if (u.is_precise) flags.push_back("PEBS");
          if (!u.alias_of.empty()) flags.push_back("=" + u.alias_of);
          table.add_row({u.name, hex(u.code), join(flags, ","), raw, pmu_syntax, u.description});
        }
        table.render(out, "    ");
      }
      out << "    modifiers: " << modifier_list(*e) << "\n";
    }
  }

  for (const PerfmonFile& f : cat.perfmon) {
    output::TextTable table = unlabeled_columns(5);
    size_t rows = 0;
    for (const PerfmonEvent& e : f.events) {
      if (!pmc_filter_matches(filter, e.name)) continue;
      PerfmonEncoding enc = encode_perfmon_event(e, cat.layout);
      std::string raw = enc.raw_syntax.empty() ? "-" : enc.raw_syntax;
      if (std::optional<OtherCatalogEncoding> libpfm = libpfm_encoding_if_different(disagreements, e.name);
          libpfm && !e.is_uncore())
        raw += " " + libpfm->text();
      table.add_row({e.name, raw, enc.pmu_syntax, perfmon_flags(e), e.brief_description});
      ++rows;
    }
    if (rows == 0) continue;
    out << "\nperfmon " << f.source << ": " << f.info << " [" << f.events.size() << " events";
    if (!filter.empty()) out << ", " << rows << " match";
    out << "]\n";
    table.render(out, "  ");
  }
}

namespace {

json::object model_json(const PmcModel& model) {
  return json::object{{"name", model.name},
                      {"libpfm_pmu", model.libpfm_pmu},
                      {"description", model.description},
                      {"running_cpu", model.running_cpu},
                      {"cpuid", model.cpu ? json::value(model.cpu->mapfile_key()) : json::value(nullptr)}};
}

// One libpfm4 event with the umasks `selection` kept; for a core PMU, each umask's encoding as
// Intel's tables give it when they disagree.
json::object libpfm_event_json(const PfmEvent& e, const EventSelection& selection, const PmcPmuEntry& entry, const PmcCatalog& cat,
                               const EncodingDisagreements& disagreements) {
  const bool core = entry.pmu.kind == PfmPmuKind::Core;
  json::object ev;
  ev["name"] = e.name;
  ev["code"] = hex(e.code);
  ev["description"] = e.description;
  ev["precise"] = e.is_precise;
  ev["requires_umask"] = e.requires_umask();
  json::array defaults, umasks, modifiers;
  for (size_t i : selection.umasks) {
    const PfmUmask& u = e.umasks[i];
    json::object uo;
    uo["name"] = u.name;
    uo["code"] = hex(u.code);
    uo["description"] = u.description;
    uo["default"] = u.is_default;
    uo["precise"] = u.is_precise;
    if (!u.alias_of.empty()) uo["alias_of"] = u.alias_of;
    if (entry.encoded && i < e.umask_encodings.size()) uo["encoding"] = encoding_json(e.umask_encodings[i], cat.layout, core);
    if (core) uo["other_catalog"] = other_catalog_json(perfmon_encoding_if_different(disagreements, e.name, u.name));
    umasks.push_back(std::move(uo));
  }
  for (const PfmUmask& u : e.umasks)
    if (u.is_default) defaults.push_back(json::value(u.name));
  for (const PfmModifier& m : e.modifiers)
    modifiers.push_back(json::object{{"name", m.name}, {"takes_value", m.takes_value}, {"description", m.description}});
  ev["default_umasks"] = std::move(defaults);
  ev["umasks"] = std::move(umasks);
  ev["modifiers"] = std::move(modifiers);
  ev["encoding"] = entry.encoded && e.encoding ? encoding_json(e.encoding, cat.layout, core) : json::value(nullptr);
  return ev;
}

json::object pmu_json(const PmcPmuEntry& entry, json::array events) {
  const PfmPmu& p = entry.pmu;
  json::array instances;
  for (const std::string& n : entry.instance_names) instances.push_back(json::value(n));
  json::object po;
  po["name"] = p.name;
  po["description"] = p.description;
  po["kind"] = std::string(pfm_pmu_kind_name(p.kind));
  po["libpfm_present"] = p.present;
  po["libpfm_status"] = entry.libpfm_status;
  po["kernel_status"] = entry.kernel_status;
  po["generic_counters"] = p.generic_counters;
  po["fixed_counters"] = p.fixed_counters;
  po["instances"] = std::move(instances);
  po["event_count"] = p.events.size();
  po["events"] = std::move(events);
  return po;
}

json::array hex_array(const std::vector<uint32_t>& values) {
  json::array out;
  for (uint32_t v : values) out.push_back(json::value(hex(v)));
  return out;
}

// One event of Intel's tables with its encoding; a core event's libpfm4 encoding when the two
// catalogs disagree.
json::object perfmon_event_json(const PerfmonEvent& e, const PmcCatalog& cat, const EncodingDisagreements& disagreements) {
  const PerfmonEncoding enc = encode_perfmon_event(e, cat.layout);
  json::object eo;
  eo["name"] = e.name;
  eo["event_codes"] = hex_array(e.event_codes);
  eo["umask"] = hex(e.umask);
  if (!e.umask_alternatives.empty()) eo["umask_alternatives"] = hex_array(e.umask_alternatives);
  if (e.umask_ext != 0) eo["umask_ext"] = hex(e.umask_ext);
  eo["cmask"] = e.counter_mask;
  eo["inv"] = e.invert;
  eo["edge"] = e.edge_detect;
  eo["any"] = e.any_thread;
  eo["msr_index"] = hex_array(e.msr_indexes);
  eo["msr_value"] = hex(e.msr_value);
  eo["pebs"] = e.pebs;
  eo["counter"] = e.counter;
  eo["fixed_counter"] = e.fixed_counter ? json::value(*e.fixed_counter) : json::value(nullptr);
  eo["sample_after_value"] = e.sample_after_value;
  eo["deprecated"] = e.deprecated;
  eo["unit"] = e.is_uncore() ? json::value(e.unit) : json::value(nullptr);
  eo["description"] = e.brief_description;
  eo["config"] = hex(enc.config);
  eo["config1"] = hex(enc.config1);
  eo["raw"] = enc.raw_syntax.empty() ? json::value(nullptr) : json::value(enc.raw_syntax);
  eo["perf"] = enc.pmu_syntax;
  eo["max_precise"] = enc.max_precise;
  eo["other_catalog"] = other_catalog_json(e.is_uncore() ? std::nullopt : libpfm_encoding_if_different(disagreements, e.name));
  return eo;
}

}  // namespace

json::value pmc_catalog_json(const PmcCatalog& cat, std::string_view filter) {
  const EncodingDisagreements disagreements(cat);
  json::array pmus;
  for (const PmcPmuEntry& entry : cat.pmus) {
    json::array events;
    for (const PfmEvent& e : entry.pmu.events) {
      EventSelection selection = select_event(e, filter);
      if (selection.event_matches || !selection.umasks.empty())
        events.push_back(libpfm_event_json(e, selection, entry, cat, disagreements));
    }
    if (filter.empty() || !events.empty()) pmus.push_back(pmu_json(entry, std::move(events)));
  }
  json::array files;
  for (const PerfmonFile& f : cat.perfmon) {
    json::array events;
    for (const PerfmonEvent& e : f.events)
      if (pmc_filter_matches(filter, e.name)) events.push_back(perfmon_event_json(e, cat, disagreements));
    files.push_back(json::object{{"file", f.source}, {"info", f.info}, {"version", f.version},
                                 {"event_count", f.events.size()}, {"events", std::move(events)}});
  }
  json::array notes;
  for (const std::string& n : cat.notes) notes.push_back(json::value(n));
  json::object root;
  root["model"] = model_json(cat.model);
  root["pmus"] = std::move(pmus);
  root["perfmon"] = std::move(files);
  root["perfmon_origin"] = cat.perfmon_origin.empty() ? json::value(nullptr) : json::value(cat.perfmon_origin);
  root["notes"] = std::move(notes);
  return root;
}

}  // namespace vperf::events
