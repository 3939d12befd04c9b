#include "events/event_listing.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>

#include "core/strings.h"
#include "events/builtin_events.h"

namespace vperf::events {

namespace {

constexpr int kNameColumnWidth = 50;

struct GroupKeyword {
  std::string_view keyword;
  ListGroup group;
};

constexpr std::array<GroupKeyword, 8> kGroupKeywords{{
    {"hw", ListGroup::Hardware},
    {"hardware", ListGroup::Hardware},
    {"sw", ListGroup::Software},
    {"software", ListGroup::Software},
    {"cache", ListGroup::HardwareCache},
    {"hwcache", ListGroup::HardwareCache},
    {"pmu", ListGroup::KernelPmu},
    {"tracepoint", ListGroup::Tracepoint},
}};

std::string encoding_of(uint32_t type, uint64_t config, uint64_t config1 = 0, uint64_t config2 = 0) {
  std::string out = "type=" + std::to_string(type) + ",config=" + hex(config);
  if (config1 != 0) out += ",config1=" + hex(config1);
  if (config2 != 0) out += ",config2=" + hex(config2);
  return out;
}

std::string describe_alias(const PmuEventAlias& alias) {
  std::string out = alias.terms;
  if (!alias.unit.empty()) out += " (unit: " + alias.unit + (alias.scale.empty() ? "" : ", scale: " + alias.scale) + ")";
  return out;
}

void add_builtins(std::vector<ListedEvent>& out, const std::vector<BuiltinEvent>& events, ListGroup group,
                  const std::string& pmu, const ListingOptions& options) {
  std::vector<ListedEvent> listed;
  for (const BuiltinEvent& event : events) {
    if ((group == ListGroup::Hardware || group == ListGroup::HardwareCache) && options.hardware_event_supported &&
        !options.hardware_event_supported(event.type, event.config))
      continue;
    ListedEvent item;
    item.name = event.name;
    if (!event.alias.empty()) item.aliases.push_back(event.alias);
    item.group = group;
    item.pmu = pmu;
    item.encoding = encoding_of(event.type, event.config);
    item.description = std::string(list_group_label(group));
    listed.push_back(std::move(item));
  }
  // perf sorts its symbol tables by name but lists the tool events in their own order.
  if (group != ListGroup::Tool)
    std::sort(listed.begin(), listed.end(), [](const ListedEvent& a, const ListedEvent& b) { return a.name < b.name; });
  out.insert(out.end(), listed.begin(), listed.end());
}

std::optional<ListGroup> keyword_group(std::string_view filter);

// Every listed event but the tracepoints (tracepoints_for picks those).
std::vector<ListedEvent> everything(const EventCatalog& catalog, const ListingOptions& options) {
  std::vector<ListedEvent> out;
  add_builtins(out, hardware_events(), ListGroup::Hardware, catalog.core_pmu(), options);
  add_builtins(out, software_events(), ListGroup::Software, "software", options);
  add_builtins(out, tool_events(), ListGroup::Tool, "tool", options);
  add_builtins(out, hardware_cache_events(), ListGroup::HardwareCache, catalog.core_pmu(), options);

  std::vector<ListedEvent> pmu_events;
  for (const SysfsPmu& pmu : catalog.pmus())
    for (const PmuEventAlias& alias : pmu.events) {
      ListedEvent item;
      item.name = pmu.name + "/" + alias.name + "/";
      item.group = ListGroup::KernelPmu;
      item.pmu = pmu.name;
      item.description = describe_alias(alias);
      // An alias whose terms do not apply (a format file vperf cannot read) is still listed.
      try {
        std::vector<ResolvedEvent> resolved = catalog.resolve_event(parse_event_list(item.name).front().members.front());
        item.encoding = encoding_of(resolved.front().type, resolved.front().config, resolved.front().config1,
                                    resolved.front().config2);
      } catch (const UserError&) {
      }
      pmu_events.push_back(std::move(item));
    }
  std::sort(pmu_events.begin(), pmu_events.end(), [](const ListedEvent& a, const ListedEvent& b) { return a.name < b.name; });
  out.insert(out.end(), pmu_events.begin(), pmu_events.end());

  std::string core = catalog.core_pmu();
  for (std::string name : {std::string("rNNN"), core + "/t1=v1[,t2=v2,t3 ...]/modifier"}) {
    ListedEvent item;
    item.name = std::move(name);
    item.group = ListGroup::RawDescriptor;
    item.pmu = core;
    item.description = "raw encoding of a PMU event (see 'vperf encode')";
    out.push_back(std::move(item));
  }
  ListedEvent breakpoint;
  breakpoint.name = "mem:<addr>[/len][:access]";
  breakpoint.group = ListGroup::Breakpoint;
  breakpoint.pmu = "breakpoint";
  breakpoint.description = "a hardware breakpoint (watchpoint) on an address: access r, w, x";
  out.push_back(std::move(breakpoint));

  return out;
}

// The tracepoints a filter can list, reading only the tracefs subsystems it can match.
std::vector<const Tracepoint*> tracepoints_for(const EventCatalog& catalog, std::string_view filter) {
  std::vector<const Tracepoint*> out;
  if (!catalog.tracepoints()) return out;
  const TracepointCatalog& tps = *catalog.tracepoints();
  std::optional<ListGroup> group = keyword_group(filter);
  if (filter.empty() || group == ListGroup::Tracepoint) {
    for (const Tracepoint& tp : tps.all()) out.push_back(&tp);
  } else if (!group) {
    out = tps.match(has_glob(filter) ? std::string(filter) : "*" + std::string(filter) + "*");
  }
  return out;
}

std::optional<ListGroup> keyword_group(std::string_view filter) {
  for (const GroupKeyword& k : kGroupKeywords)
    if (k.keyword == filter) return k.group;
  return std::nullopt;
}

bool name_matches(const ListedEvent& event, std::string_view pattern) {
  if (glob_match(pattern, event.name)) return true;
  return std::any_of(event.aliases.begin(), event.aliases.end(),
                     [&](const std::string& alias) { return glob_match(pattern, alias); });
}

}  // namespace

std::string_view list_group_label(ListGroup group) {
  switch (group) {
    case ListGroup::Hardware: return "Hardware event";
    case ListGroup::Software: return "Software event";
    case ListGroup::Tool: return "Tool event";
    case ListGroup::HardwareCache: return "Hardware cache event";
    case ListGroup::KernelPmu: return "Kernel PMU event";
    case ListGroup::RawDescriptor: return "Raw hardware event descriptor";
    case ListGroup::Breakpoint: return "Hardware breakpoint";
    case ListGroup::Tracepoint: return "Tracepoint event";
  }
  return "";
}

namespace {

std::vector<ListedEvent> filtered(std::vector<ListedEvent> all, std::string_view filter) {
  filter = trim(filter);
  if (filter.empty()) return all;
  std::vector<ListedEvent> out;
  if (auto group = keyword_group(filter)) {
    // perf's "sw" lists the tool events too.
    std::copy_if(all.begin(), all.end(), std::back_inserter(out), [&](const ListedEvent& e) {
      return e.group == *group || (*group == ListGroup::Software && e.group == ListGroup::Tool);
    });
    return out;
  }
  // perf turns a plain word into "*word*"; the raw descriptors are templates, not names.
  std::string pattern = has_glob(filter) ? std::string(filter) : "*" + std::string(filter) + "*";
  std::copy_if(all.begin(), all.end(), std::back_inserter(out), [&](const ListedEvent& e) {
    return e.group != ListGroup::RawDescriptor && e.group != ListGroup::Breakpoint && name_matches(e, pattern);
  });
  return out;
}

}  // namespace

ListingResult list_events(const EventCatalog& catalog, std::string_view filter, const ListingOptions& options) {
  filter = trim(filter);
  std::vector<ListedEvent> candidates = everything(catalog, options);
  for (const Tracepoint* tp : tracepoints_for(catalog, filter)) {
    ListedEvent item;
    item.name = tp->name();
    item.group = ListGroup::Tracepoint;
    item.pmu = "tracepoint";
    item.description = tp->format_path().string();
    candidates.push_back(std::move(item));
  }
  ListingResult result;
  const std::optional<ListGroup> group = keyword_group(filter);
  if (!catalog.tracepoints() && (!group || group == ListGroup::Tracepoint))
    result.tracepoints_unavailable = tracefs_hint(catalog.tracepoints().error());
  result.events = filtered(std::move(candidates), filter);
  // Tracepoint ids are read only for the tracepoints listed, and only when asked for.
  if (options.with_encodings && catalog.tracepoints()) {
    for (ListedEvent& e : result.events) {
      if (e.group != ListGroup::Tracepoint) continue;
      const Tracepoint* tp = catalog.tracepoints()->find(e.name);
      if (Result<uint64_t> id = tp ? tp->id() : Result<uint64_t>(Error{"gone"}); id)
        e.encoding = encoding_of(2 /* PERF_TYPE_TRACEPOINT */, *id);
    }
  }
  return result;
}

void print_listing(std::ostream& out, const ListingResult& listing) {
  for (const ListedEvent& event : listing.events) {
    std::string names = event.name;
    for (const std::string& alias : event.aliases) names += " OR " + alias;
    out << "  " << names;
    if (names.size() < static_cast<size_t>(kNameColumnWidth)) out << std::string(kNameColumnWidth - names.size(), ' ');
    out << " [" << list_group_label(event.group) << "]\n";
  }
}

void print_raw_dump(std::ostream& out, const ListingResult& listing) {
  // The syntax lines ("rNNN", "cpu/t1=v1.../modifier", "mem:<addr>...") describe a form, not an event.
  for (const ListedEvent& event : listing.events)
    if (event.group != ListGroup::RawDescriptor && event.group != ListGroup::Breakpoint) out << event.name << ' ';
}

boost::json::value listing_json(const ListingResult& listing) {
  boost::json::array array;
  for (const ListedEvent& event : listing.events) {
    boost::json::array aliases;
    for (const std::string& alias : event.aliases) aliases.emplace_back(alias);
    array.push_back(boost::json::object{
        {"name", event.name},
        {"aliases", std::move(aliases)},
        {"group", list_group_label(event.group)},
        {"pmu", event.pmu},
        {"encoding", event.encoding},
        {"description", event.description},
    });
  }
  return array;
}

}  // namespace vperf::events
