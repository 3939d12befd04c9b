#include "events/event_catalog.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "events/builtin_events.h"

namespace vperf::events {

namespace {

constexpr int kMaxPrecise = 3;
constexpr std::string_view kListHint = "run 'vperf list' to see the events this machine knows";
// Terms every PMU accepts besides its format/ terms (perf's generic terms that vperf handles).
constexpr std::string_view kGenericTerms[] = {"config", "config1", "config2", "name", "period", "freq", "time", "inherit",
                                              "no-inherit", "call-graph", "stack-size", "max-stack"};
// The per-event settings perf 6.1 takes on a tracepoint (config_term_tracepoint): a tracepoint
// samples every hit, under its own name, with a time.
constexpr std::string_view kTracepointTerms[] = {"call-graph", "stack-size", "max-stack", "inherit", "no-inherit"};

uint64_t term_number(const std::string& key, const std::optional<std::string>& value, uint64_t low, uint64_t high,
                     const std::string& event_text) {
  std::optional<uint64_t> number = value ? parse_u64(*value) : std::nullopt;
  if (!number || *number < low || *number > high)
    throw usage_error((value ? "bad value '" + *value + "'" : std::string("no value")) + " for term '" + key + "' in '" + event_text + "'",
                      key + " takes a number from " + std::to_string(low) + " to " + std::to_string(high) + ", e.g. " + key + "=" +
                          std::to_string(std::max<uint64_t>(low, std::min<uint64_t>(high, 1000))));
  return *number;
}

// perf's per-event settings (its config terms): period=, freq=, time=, inherit, no-inherit,
// call-graph=, stack-size=, max-stack=. False for any other term, which is the caller's.
bool apply_setting(const std::string& key, const std::optional<std::string>& value, EventSettings& settings,
                   const std::string& event_text) {
  if (key == "period" || key == "freq") {
    settings.rate = EventSettings::Rate{key == "freq", term_number(key, value, 1, UINT64_MAX >> 1, event_text)};
  } else if (key == "time") {
    settings.time = !value || term_number(key, value, 0, 1, event_text) == 1;
  } else if (key == "inherit" || key == "no-inherit") {
    if (value) throw usage_error("term '" + key + "' takes no value in '" + event_text + "'", "write '" + key + "' alone");
    settings.inherit = key == "inherit";
  } else if (key == "call-graph") {
    if (value == "fp") settings.call_graph = CallGraph::FramePointer;
    else if (value == "dwarf") settings.call_graph = CallGraph::Dwarf;
    else if (value == "no") settings.call_graph = CallGraph::None;
    else if (value == "lbr")
      throw usage_error("call-graph=lbr in '" + event_text + "' needs Intel's last branch records, which vperf does not sample",
                        "use call-graph=fp or call-graph=dwarf");
    else
      throw usage_error("bad value '" + value.value_or("") + "' for term 'call-graph' in '" + event_text + "'", "call-graph=fp, dwarf or no");
  } else if (key == "stack-size") {
    // perf's bound: a sample's user stack copy must fit in its 64 KiB record with the rest.
    settings.stack_size = static_cast<uint32_t>((term_number(key, value, 8, 65528, event_text) + 7) & ~uint64_t{7});
  } else if (key == "max-stack") {
    settings.max_stack = static_cast<uint16_t>(term_number(key, value, 1, 65535, event_text));
  } else {
    return false;
  }
  return true;
}

// A builtin's or a named event's terms: the settings (a tracepoint's own few), and for
// builtins and non-tracepoints name= and config=, config1=, config2=.
void apply_named_terms(const EventSpec& spec, ResolvedEvent& event) {
  const bool tracepoint = event.origin == EventOrigin::Tracepoint;
  for (const PmuTermSpec& term : spec.terms) {
    const bool allowed = !tracepoint || std::find(std::begin(kTracepointTerms), std::end(kTracepointTerms), term.key) != std::end(kTracepointTerms);
    if (allowed && apply_setting(term.key, term.value, event.settings, spec.text)) continue;
    if (!tracepoint && term.key == "name" && term.value) {
      event.name = event.written = *term.value;
      continue;
    }
    if (!tracepoint && (term.key == "config" || term.key == "config1" || term.key == "config2")) {
      uint64_t number = term_number(term.key, term.value, 0, UINT64_MAX, spec.text);
      (term.key == "config" ? event.config : term.key == "config1" ? event.config1 : event.config2) = number;
      continue;
    }
    std::vector<std::string> valid;
    if (tracepoint) valid.assign(std::begin(kTracepointTerms), std::end(kTracepointTerms));
    else valid.assign(std::begin(kGenericTerms), std::end(kGenericTerms));
    throw usage_error("unknown term '" + term.key + "' for " + (tracepoint ? "tracepoint '" : "event '") + spec.name + "' in '" + spec.text + "'",
                      (tracepoint ? "a tracepoint samples every hit; its terms are " : "its terms are ") + join(valid, ", "));
  }
}

Modifiers merge(const Modifiers& a, const Modifiers& b) {
  Modifiers m;
  m.user = a.user || b.user;
  m.kernel = a.kernel || b.kernel;
  m.hypervisor = a.hypervisor || b.hypervisor;
  m.guest = a.guest || b.guest;
  m.host = a.host || b.host;
  m.precise = a.precise + b.precise;
  m.sample_read = a.sample_read || b.sample_read;
  m.pinned = a.pinned || b.pinned;
  m.exclude_idle = a.exclude_idle || b.exclude_idle;
  m.weak = a.weak || b.weak;
  m.exclusive = a.exclusive || b.exclusive;
  m.precise_max = a.precise_max || b.precise_max;
  m.bpf_counter = a.bpf_counter || b.bpf_counter;
  return m;
}

std::optional<int> max_precise_of(const SysfsPmu* pmu) {
  if (pmu == nullptr) return std::nullopt;
  auto it = pmu->caps.find("max_precise");
  if (it == pmu->caps.end()) return std::nullopt;
  auto value = parse_u64(it->second);
  if (!value || *value > kMaxPrecise) return std::nullopt;
  return static_cast<int>(*value);
}

// "uncore_imc" names uncore_imc_0, uncore_imc_1 ...: perf's rule for PMUs with numbered
// instances. Also "imc" for "uncore_imc_N".
bool is_instance_of(std::string_view instance, std::string_view name) {
  for (std::string_view prefix : {std::string_view{}, std::string_view{"uncore_"}}) {
    if (!instance.starts_with(prefix)) continue;
    std::string_view rest = instance.substr(prefix.size());
    if (!rest.starts_with(name) || rest.size() < name.size() + 2 || rest[name.size()] != '_') continue;
    std::string_view number = rest.substr(name.size() + 1);
    if (std::all_of(number.begin(), number.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return true;
  }
  return false;
}

class PmuTermApplier {
 public:
  PmuTermApplier(const SysfsPmu& pmu, const std::string& event_text) : pmu_(pmu), event_text_(event_text) {}

  void apply(const std::string& key, const std::optional<std::string>& value, bool from_alias) {
    if (apply_setting(key, value, settings_, event_text_)) return;
    if (key == "config" || key == "config1" || key == "config2") {
      uint64_t number = number_or_throw(key, value);
      (key == "config" ? config_.config : key == "config1" ? config_.config1 : config_.config2) = number;
      return;
    }
    if (key == "name") {
      if (!value) throw usage_error("term 'name' needs a value in '" + event_text_ + "'", "write name=LABEL, e.g. 'cpu/event=0x3c,name=cycles0/'");
      name_ = *value;
      return;
    }
    if (const PmuFormatTerm* term = pmu_.find_term(key)) {
      uint64_t number = value ? number_or_throw(key, value) : 1;  // a flag ("inv") sets 1
      auto placed = place_term_value(*term, number, config_);
      if (!placed)
        throw usage_error(placed.error().message + " in '" + event_text_ + "'",
                          "term '" + key + "' has " + std::to_string(term_width(*term)) + " bits on PMU '" + pmu_.name + "'");
      config_ = *placed;
      return;
    }
    if (const PmuEventAlias* alias = pmu_.find_event(key); alias != nullptr && !value && !from_alias) {
      for (std::string_view part : split(alias->terms, ',')) {
        part = trim(part);
        if (part.empty()) continue;
        size_t eq = part.find('=');
        std::optional<std::string> alias_value;
        if (eq != std::string_view::npos) alias_value = std::string(part.substr(eq + 1));
        apply(std::string(part.substr(0, eq)), alias_value, true);
      }
      return;
    }
    throw usage_error("unknown term '" + key + "' for PMU '" + pmu_.name + "' in '" + event_text_ + "'",
                      "valid terms: " + join(valid_terms(), ", ") +
                          (pmu_.events.empty() ? std::string() : "; events: " + join(alias_names(), ", ")));
  }

  const PmuConfig& config() const { return config_; }
  const std::optional<std::string>& name() const { return name_; }
  const EventSettings& settings() const { return settings_; }

 private:
  uint64_t number_or_throw(const std::string& key, const std::optional<std::string>& value) const {
    if (!value) throw usage_error("term '" + key + "' needs a value in '" + event_text_ + "'", "write " + key + "=VALUE, e.g. " + key + "=0x1");
    auto number = parse_u64(*value);
    if (!number)
      throw usage_error("bad value '" + *value + "' for term '" + key + "' in '" + event_text_ + "'",
                        "values are numbers such as 0x3c or 60");
    return *number;
  }

  std::vector<std::string> valid_terms() const {
    std::vector<std::string> out;
    for (const PmuFormatTerm& term : pmu_.format) out.push_back(term.name);
    for (std::string_view generic : kGenericTerms) out.emplace_back(generic);
    return out;
  }

  std::vector<std::string> alias_names() const {
    std::vector<std::string> out;
    for (const PmuEventAlias& alias : pmu_.events) out.push_back(alias.name);
    return out;
  }

  const SysfsPmu& pmu_;
  const std::string& event_text_;
  PmuConfig config_;
  std::optional<std::string> name_;
  EventSettings settings_;
};

ResolvedEvent pmu_event(const SysfsPmu& pmu, const PmuConfig& config, std::string name) {
  ResolvedEvent event;
  event.name = std::move(name);
  event.pmu = pmu.name;
  event.type = pmu.type;
  event.config = config.config;
  event.config1 = config.config1;
  event.config2 = config.config2;
  event.origin = EventOrigin::SysfsPmu;
  event.max_precise = max_precise_of(&pmu);
  event.cpumask = pmu.cpumask;
  return event;
}

ResolvedEvent alias_event(const SysfsPmu& pmu, const PmuEventAlias& alias) {
  std::string name = pmu.name + "/" + alias.name + "/";
  PmuTermApplier applier(pmu, name);
  applier.apply(alias.name, std::nullopt, false);
  return pmu_event(pmu, applier.config(), name);
}

// Text of a PMU-term event without its trailing modifiers ("cpu/event=1/" of "cpu/event=1/u").
std::string without_modifiers(const EventSpec& spec) {
  return spec.text.substr(0, spec.text.rfind('/') + 1);
}

}  // namespace

std::string tracefs_hint(const Error& error) {
  return "tracepoints are unavailable (" + error.describe() +
         "); as root, mount tracefs: mount -t tracefs nodev /sys/kernel/tracing";
}

EventCatalog::EventCatalog(std::vector<SysfsPmu> pmus, Result<TracepointCatalog> tracepoints,
                           std::vector<const NamedEventSource*> named_sources, std::string core_pmu)
    : pmus_(std::move(pmus)),
      tracepoints_(std::move(tracepoints)),
      named_sources_(std::move(named_sources)),
      core_pmu_(std::move(core_pmu)) {}

EventCatalog EventCatalog::load(const EventCatalogConfig& config) {
  Result<TracepointCatalog> tracepoints = Error{"no tracefs"};
  Result<std::filesystem::path> root =
      config.tracefs_root ? Result<std::filesystem::path>(*config.tracefs_root) : tracing::find_tracefs_root();
  tracepoints = root ? TracepointCatalog::load(*root) : Result<TracepointCatalog>(root.error());
  std::vector<SysfsPmu> pmus = load_sysfs_pmus(config.sysfs_pmu_root);
  if (config.core_pmu_override) {
    std::erase_if(pmus, [&](const SysfsPmu& p) { return p.name == config.core_pmu; });
    pmus.push_back(*config.core_pmu_override);
    pmus.back().name = config.core_pmu;
    std::sort(pmus.begin(), pmus.end(), [](const SysfsPmu& a, const SysfsPmu& b) { return a.name < b.name; });
  }
  return EventCatalog(std::move(pmus), std::move(tracepoints), config.named_sources, config.core_pmu);
}

const SysfsPmu* EventCatalog::find_pmu(std::string_view name) const {
  auto it = std::find_if(pmus_.begin(), pmus_.end(), [&](const SysfsPmu& p) { return p.name == name; });
  return it == pmus_.end() ? nullptr : &*it;
}

std::vector<std::string> EventCatalog::known_names() const {
  std::vector<std::string> names = builtin_event_names();
  for (const SysfsPmu& pmu : pmus_)
    for (const PmuEventAlias& alias : pmu.events) {
      names.push_back(pmu.name + "/" + alias.name + "/");
      names.push_back(alias.name);
    }
  if (tracepoints_)
    for (const Tracepoint& tp : tracepoints_->all()) names.push_back(tp.name());
  for (const NamedEventSource* source : named_sources_) {
    std::vector<std::string> more = source->names();
    names.insert(names.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return names;
}

namespace {

// One attempt at a name (steps 1-3 of the header's order). nullopt: nothing knows it.
// `source_error` keeps the first "mine, but malformed" answer of a named source.
struct NameLookup {
  const EventCatalog& catalog;

  std::optional<std::vector<ResolvedEvent>> find(std::string_view name, const Modifiers& mods,
                                                 std::optional<Error>& source_error) const {
    std::vector<ResolvedEvent> out;
    bool colon_name = name.find(':') != std::string_view::npos && name.find("::") == std::string_view::npos;
    if (colon_name && catalog.tracepoints()) {
      const TracepointCatalog& tps = *catalog.tracepoints();
      std::vector<const Tracepoint*> found;
      if (has_glob(name)) {
        found = tps.match(name);
      } else if (const Tracepoint* tp = tps.find(name)) {
        found.push_back(tp);
      }
      for (const Tracepoint* tp : found) {
        ResolvedEvent event;
        event.name = tp->name();
        event.pmu = "tracepoint";
        event.type = PERF_TYPE_TRACEPOINT;
        Result<uint64_t> id = tp->id();
        if (!id)
          throw UserError("cannot read the id of tracepoint " + tp->name() + ": " + id.error().describe(),
                          "tracefs must be readable: run as root, or mount tracefs at /sys/kernel/tracing");
        event.config = *id;
        event.modifiers = mods;
        event.origin = EventOrigin::Tracepoint;
        out.push_back(std::move(event));
      }
      if (!out.empty()) return out;
    }
    if (name.find(':') == std::string_view::npos && !has_glob(name)) {
      for (const SysfsPmu& pmu : catalog.pmus())
        if (const PmuEventAlias* alias = pmu.find_event(name)) {
          out.push_back(alias_event(pmu, *alias));
          out.back().modifiers = mods;
        }
      if (!out.empty()) return out;
    }
    for (const NamedEventSource* source : catalog.named_sources()) {
      auto answer = source->resolve(name);
      if (!answer) continue;
      if (!answer->ok()) {
        if (!source_error) source_error = answer->error();
        return std::nullopt;
      }
      ResolvedEvent event = std::move(*answer).value();
      event.modifiers = merge(event.modifiers, mods);
      out.push_back(std::move(event));
      return out;
    }
    return std::nullopt;
  }
};

}  // namespace

std::vector<ResolvedEvent> EventCatalog::resolve_event(const EventSpec& spec) const {
  const SysfsPmu* core = find_pmu(core_pmu_);
  switch (spec.kind) {
    case SpecKind::Builtin: {
      auto builtin = find_builtin_event(spec.name);
      if (!builtin) throw usage_error("unknown event '" + spec.name + "'", std::string(kListHint));
      ResolvedEvent event;
      event.name = spec.name;
      event.pmu = builtin->kind == BuiltinKind::Software ? "software" : builtin->kind == BuiltinKind::Tool ? "tool" : core_pmu_;
      event.type = builtin->type;
      event.config = builtin->config;
      event.modifiers = spec.modifiers;
      event.origin = EventOrigin::Builtin;
      if (builtin->kind == BuiltinKind::Hardware || builtin->kind == BuiltinKind::HardwareCache) event.max_precise = max_precise_of(core);
      apply_named_terms(spec, event);
      return {event};
    }
    case SpecKind::Raw: {
      ResolvedEvent event;
      event.name = spec.name;
      event.pmu = core_pmu_;
      event.type = PERF_TYPE_RAW;
      event.config = spec.raw_config;
      event.modifiers = spec.modifiers;
      event.origin = EventOrigin::Raw;
      event.max_precise = max_precise_of(core);
      return {event};
    }
    case SpecKind::Breakpoint: {
      // As perf's parse_events_add_breakpoint: read and write unless the access is written,
      // a length of 4 for data and of a pointer for code unless written, every hit sampled.
      ResolvedEvent event;
      event.name = spec.name;
      event.pmu = "breakpoint";
      event.type = PERF_TYPE_BREAKPOINT;
      event.bp_type = spec.bp_type ? spec.bp_type : HW_BREAKPOINT_R | HW_BREAKPOINT_W;
      event.config1 = spec.bp_addr;
      uint64_t default_len = event.bp_type == HW_BREAKPOINT_X ? sizeof(long) : uint64_t{HW_BREAKPOINT_LEN_4};
      event.config2 = spec.bp_len ? spec.bp_len : default_len;
      event.origin = EventOrigin::Breakpoint;
      return {event};
    }
    case SpecKind::PmuTerms: {
      std::vector<const SysfsPmu*> targets;
      if (const SysfsPmu* exact = find_pmu(spec.pmu)) {
        targets.push_back(exact);
      } else {
        for (const SysfsPmu& pmu : pmus_)
          if (is_instance_of(pmu.name, spec.pmu)) targets.push_back(&pmu);
      }
      if (targets.empty()) {
        std::vector<std::string> names;
        for (const SysfsPmu& pmu : pmus_) names.push_back(pmu.name);
        auto close = closest_names(spec.pmu, names);
        std::string hint = (close.empty() ? std::string() : "did you mean " + join_alternatives(close) + "? ") +
                           "PMUs on this machine: " + join(names, ", ");
        if (spec.pmu == core_pmu_)
          hint = "this machine exposes no core PMU (usual in a VM without a virtual PMU); 'vperf check' says why. " +
                 hint;
        throw usage_error("unknown PMU '" + spec.pmu + "' in '" + spec.text + "'", hint);
      }
      std::vector<ResolvedEvent> out;
      std::string written = without_modifiers(spec);
      for (const SysfsPmu* pmu : targets) {
        std::string name = targets.size() == 1 ? written : pmu->name + written.substr(spec.pmu.size());
        PmuTermApplier applier(*pmu, spec.text);
        for (const PmuTermSpec& term : spec.terms) applier.apply(term.key, term.value, false);
        out.push_back(pmu_event(*pmu, applier.config(), applier.name().value_or(name)));
        out.back().modifiers = spec.modifiers;
        out.back().settings = applier.settings();
      }
      return out;
    }
    case SpecKind::Name:
      break;
  }

  NameLookup lookup{*this};
  std::optional<Error> source_error;
  if (auto found = lookup.find(spec.name, spec.modifiers, source_error)) {
    for (ResolvedEvent& event : *found) apply_named_terms(spec, event);
    return *found;
  }
  if (spec.modifier_suffix) {
    if (auto found = lookup.find(spec.modifier_suffix->base, spec.modifier_suffix->modifiers, source_error))
      return *found;
  }
  if (source_error) throw usage_error(source_error->message + " in '" + spec.text + "'", std::string(kListHint));
  if (spec.shape == NameShape::Glob) {
    if (!tracepoints_) throw usage_error("no tracepoint matches '" + spec.text + "'", tracefs_hint(tracepoints_.error()));
    throw usage_error("no tracepoint matches '" + spec.text + "'",
                      "globs select tracepoints as subsystem:event, e.g. 'sched:*'; run 'vperf list tracepoint' to see them");
  }
  std::string wanted = spec.modifier_suffix ? spec.modifier_suffix->base : spec.name;
  std::vector<std::string> suggestions = closest_names(wanted, known_names());
  std::string hint = suggestions.empty() ? std::string(kListHint)
                                         : "did you mean " + join_alternatives(suggestions) + "? " + std::string(kListHint);
  // "a:b" may be a tracepoint that tracefs would show, or a misspelt libpfm4 name: say both.
  if (spec.shape == NameShape::Colon && !tracepoints_)
    hint = (suggestions.empty() ? std::string() : "did you mean " + join_alternatives(suggestions) + "? if a tracepoint: ") +
           tracefs_hint(tracepoints_.error());
  // "INST_RETIRED.ANY_P" is an Intel perfmon name: its table is a CPU model's, which this
  // machine (an AMD or Arm CPU, a VM without a model) may not have.
  if (spec.shape == NameShape::Dotted && suggestions.empty())
    throw usage_error("unknown event '" + spec.name + "': it reads as an Intel perfmon name, and no event table of this machine has it",
                      "Intel's names belong to a CPU model's table: name the model, e.g. vperf encode --model skx " + spec.name +
                          "; run 'vperf list' for this machine's events");
  throw usage_error("unknown event '" + spec.name + "'", hint);
}

namespace {

std::vector<ResolvedEvent> name_as_written(std::vector<ResolvedEvent> events, const EventSpec& spec) {
  // perf names a named event with terms as written ("cpu-clock/period=100000/"), unless a
  // name= term names it or it is a tracepoint, whose name stays its own ("sched:sched_switch").
  const bool named_by_term = spec.kind != SpecKind::PmuTerms &&
                             std::any_of(spec.terms.begin(), spec.terms.end(), [](const PmuTermSpec& t) { return t.key == "name"; });
  for (ResolvedEvent& event : events) {
    if (named_by_term || (!spec.terms.empty() && event.origin == EventOrigin::Tracepoint) ||
        event.origin == EventOrigin::Breakpoint) {
      event.written = event.name;
    } else if (events.size() == 1 && spec.shape != NameShape::Glob) {
      event.written = spec.text;
    } else {
      std::string mods = modifiers_text(event.modifiers);
      event.written = event.name + (mods.empty() ? "" : ":" + mods);
    }
  }
  return events;
}

}  // namespace

std::vector<ResolvedGroup> EventCatalog::resolve(const std::vector<GroupSpec>& groups) const {
  std::vector<ResolvedGroup> out;
  for (const GroupSpec& group : groups) {
    if (!group.braced) {
      for (ResolvedEvent& event : name_as_written(resolve_event(group.members.front()), group.members.front())) {
        ResolvedGroup single;
        single.members.push_back(std::move(event));
        out.push_back(std::move(single));
      }
      continue;
    }
    ResolvedGroup resolved;
    resolved.is_group = true;
    for (const EventSpec& spec : group.members)
      for (ResolvedEvent& event : name_as_written(resolve_event(spec), spec)) {
        event.group_modifiers = group.modifiers;
        event.group_role = resolved.members.empty() ? GroupRole::Leader : GroupRole::Member;
        if (event.modifiers.precise + group.modifiers.precise > kMaxPrecise)
          throw usage_error("too many 'p' modifiers for '" + spec.text + "' in '" + group.text + "'",
                            "precise levels are p, pp and ppp (0..3), the member's and the group's together");
        resolved.members.push_back(std::move(event));
      }
    out.push_back(std::move(resolved));
  }
  return out;
}

std::vector<ResolvedGroup> EventCatalog::resolve(std::string_view event_list) const {
  return resolve(parse_event_list(event_list));
}

}  // namespace vperf::events
