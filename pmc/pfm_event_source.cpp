#include "pmc/pfm_event_source.h"

#include "core/strings.h"
#include "pmc/pmc_encoding.h"

namespace vperf::events {

namespace {

// libpfm reports the PMU of a core event under its own name ("ivb"); perf calls it "cpu".
constexpr std::string_view kPerfCorePmu = "cpu";
// libpfm4's PEBS events accept precise_ip 1 and 2 (3 only where the kernel has PDIR).
constexpr int kPebsMaxPrecise = 2;

struct ParsedName {
  std::string prefix;  // libpfm PMU before "::", or empty
  std::string event;
  std::vector<std::string> attrs;  // umasks and modifiers, as written
  bool dotted = false;
};

std::optional<ParsedName> parse_name(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty() || s.find_first_of("/{}, \t") != std::string_view::npos) return std::nullopt;
  ParsedName p;
  if (size_t sep = s.find("::"); sep != std::string_view::npos) {
    p.prefix = std::string(s.substr(0, sep));
    s = s.substr(sep + 2);
    if (p.prefix.empty()) return std::nullopt;
  }
  std::vector<std::string_view> parts = split(s, ':');
  std::string_view event = parts.front();
  if (event.empty()) return std::nullopt;
  if (size_t dot = event.find('.'); dot != std::string_view::npos) {
    std::string_view umask = event.substr(dot + 1);
    // Only EVENT.UMASK maps onto libpfm4; three-part perfmon names (OFFCORE_RESPONSE.X.Y) do not.
    if (umask.empty() || umask.find('.') != std::string_view::npos) return std::nullopt;
    p.attrs.emplace_back(umask);
    event = event.substr(0, dot);
    p.dotted = true;
  }
  p.event = std::string(event);
  for (size_t i = 1; i < parts.size(); ++i) p.attrs.emplace_back(parts[i]);
  return p;
}

const PfmUmask* find_umask(const PfmEvent& e, std::string_view name) {
  for (const PfmUmask& u : e.umasks)
    if (equals_nocase(u.name, name)) return &u;
  return nullptr;
}

const PfmModifier* find_modifier(const PfmEvent& e, std::string_view name) {
  for (const PfmModifier& m : e.modifiers)
    if (equals_nocase(m.name, name)) return &m;
  return nullptr;
}

}  // namespace

PfmEventSource::PfmEventSource(const PmcCatalog& catalog) : model_(catalog.model) {
  for (const PmcPmuEntry& entry : catalog.pmus) {
    if (!entry.encoded) continue;
    pmu_names_.push_back(entry.pmu.name);
    for (const PfmEvent& e : entry.pmu.events) {
      if (!e.requires_umask()) names_.push_back(e.name);
      for (const PfmUmask& u : e.umasks) names_.push_back(e.name + ":" + u.name);
    }
  }
}

std::vector<std::string> PfmEventSource::names() const { return names_; }

std::optional<Result<ResolvedEvent>> PfmEventSource::resolve(std::string_view name) const {
  std::optional<Result<std::pair<ResolvedEvent, Details>>> r = resolve_with_details(name);
  if (!r) return std::nullopt;
  if (!*r) return Result<ResolvedEvent>(r->error());
  return Result<ResolvedEvent>(r->value().first);
}

std::optional<Result<std::pair<ResolvedEvent, PfmEventSource::Details>>> PfmEventSource::resolve_with_details(
    std::string_view name) const {
  using Out = Result<std::pair<ResolvedEvent, Details>>;
  std::optional<ParsedName> parsed = parse_name(name);
  if (!parsed) return std::nullopt;

  // Which model's tables to use: the catalog's, unless a prefix names another core PMU.
  std::optional<std::string> forced;
  if (!model_.running_cpu) forced = model_.libpfm_pmu;
  if (!parsed->prefix.empty()) {
    if (std::optional<PmcModel> other = find_known_pmc_model(parsed->prefix)) {
      parsed->prefix = other->libpfm_pmu;
      if (!equals_nocase(other->libpfm_pmu, model_.libpfm_pmu)) forced = other->libpfm_pmu;
    }
  }
  Result<PfmSession> session = PfmSession::open(forced);
  if (!session) return Out(session.error());
  // Always look names up qualified with their PMU (see pfm_session.h for why).
  std::optional<PfmEvent> event;
  std::string qualified;
  if (parsed->prefix.empty()) {
    for (const std::string& pmu : pmu_names_) {
      qualified = pmu + "::" + parsed->event;
      if ((event = session->find_event(qualified))) break;
    }
  } else {
    qualified = parsed->prefix + "::" + parsed->event;
    event = session->find_event(qualified);
    if (!event && forced != parsed->prefix) {
      // A prefix vperf's model table does not know may still be a libpfm4 core PMU name.
      session = Result<PfmSession>(Error{"closed"});
      session = PfmSession::open(parsed->prefix);
      if (!session) return Out(session.error());
      event = session->find_event(qualified);
    }
  }
  if (!event) return std::nullopt;

  std::vector<std::string> attrs;
  std::vector<std::string> written_modifiers;
  bool precise = event->is_precise;
  for (size_t i = 0; i < parsed->attrs.size(); ++i) {
    const std::string& a = parsed->attrs[i];
    std::string_view key = std::string_view(a).substr(0, a.find('='));
    if (const PfmUmask* u = find_umask(*event, key); u && a.find('=') == std::string::npos) {
      attrs.push_back(u->name);
      precise = precise || u->is_precise;
      continue;
    }
    if (parsed->dotted && i == 0) return std::nullopt;  // EVENT.X where X is no umask: not libpfm's
    if (find_modifier(*event, key) != nullptr) {
      attrs.push_back(a);
      written_modifiers.push_back(a);
      continue;
    }
    std::vector<std::string> choices;
    for (const PfmUmask& u : event->umasks) choices.push_back(u.name);
    for (const PfmModifier& m : event->modifiers) choices.push_back(m.name);
    std::vector<std::string> close = closest_names(key, choices);
    return Out(Error{"libpfm4 event " + event->pmu + "::" + event->name + " has no umask or modifier '" + std::string(key) +
                     "'" + (close.empty() ? "" : "; did you mean " + join_alternatives(close) + "?")});
  }

  std::string full = qualified;
  for (const std::string& a : attrs) full += ":" + a;
  Result<PfmEncoding> enc = session->encode(full);
  if (!enc) return Out(enc.error());

  ResolvedEvent r;
  r.name = enc->canonical_name();
  for (const std::string& m : written_modifiers) r.name += ":" + m;
  bool core = false;
  for (const PfmPmu& p : session->list_pmus())
    if (p.name == event->pmu) core = p.kind == PfmPmuKind::Core;
  r.pmu = core ? std::string(kPerfCorePmu) : event->pmu;
  r.type = core ? kPerfTypeRaw : enc->type;
  r.config = enc->config;
  r.config1 = enc->config1;
  r.config2 = enc->config2;
  r.origin = EventOrigin::Libpfm;
  r.exclude_user = enc->exclude_user;
  r.exclude_kernel = enc->exclude_kernel;
  r.exclude_hv = enc->exclude_hv;
  // libpfm's ":precise=N" means what perf's N 'p' modifiers mean: perf_event_attr.precise_ip.
  r.modifiers.precise = enc->precise_ip;
  r.max_precise = precise ? kPebsMaxPrecise : 0;
  Details d{event->description, enc->fully_qualified, precise};
  for (const std::string& a : attrs)
    if (const PfmUmask* u = find_umask(*event, a)) d.description = u->description;
  return Out(std::make_pair(std::move(r), std::move(d)));
}

}  // namespace vperf::events
