#include "report/report_json.h"

#include <cinttypes>
#include <cstdio>

#include "report/report_stdio.h"

namespace vperf::report {

namespace {

double percent(uint64_t period, uint64_t total) {
  return total ? static_cast<double>(period) * 100.0 / static_cast<double>(total) : 0.0;
}

boost::json::value key_value(const ReportData& report, SortKey key, const HistEntry& e) {
  switch (key) {
    case SortKey::Comm:
      return boost::json::value(report.hists->comms().text(e.key.comm));
    case SortKey::Pid:
    case SortKey::Tid: {
      boost::json::object thread;
      thread["tid"] = e.tid;
      thread["comm"] = report.hists->comms().text(e.comm);
      return thread;
    }
    case SortKey::Cpu:
      return boost::json::value(e.cpu);
    case SortKey::Trace:
      return boost::json::value(report.hists->traces().text(e.key.trace));
    case SortKey::Srcline:
      return boost::json::value(report.hists->srclines().text(e.key.srcline));
    case SortKey::Dso:
      return boost::json::value(dso_text(e));
    case SortKey::Sym: {
      boost::json::object sym;
      if (e.symbol && e.dso) {
        if (e.inlined_name.empty()) {
          sym["name"] = e.symbol->name;
        } else {
          sym["name"] = e.inlined_name;
          sym["inlined"] = true;
        }
      } else {
        char buf[24];
        std::snprintf(buf, sizeof buf, "%#" PRIx64, e.address);
        sym["name"] = nullptr;
        sym["address"] = buf;
      }
      sym["level"] = std::string(1, e.level);
      return sym;
    }
  }
  return nullptr;
}

}  // namespace

boost::json::value report_json(const ReportData& report, const ReportOptions& options) {
  boost::json::object root;
  root["lost_samples"] = report.lost_samples;
  root["children"] = report.layout.children;
  boost::json::array keys;
  for (SortKey key : report.layout.sort_keys) keys.emplace_back(std::string(sort_key_name(key)));
  root["sort_keys"] = std::move(keys);
  boost::json::array events;
  for (size_t ev = 0; ev < report.events.size(); ++ev) {
    const EventHists* hists = report.event_hists(ev);
    if (!hists || hists->samples == 0) continue;
    boost::json::object event;
    event["name"] = report.events[ev].name;
    event["samples"] = hists->samples;
    event["period"] = hists->total_period;
    event["shown_samples"] = hists->shown_samples;
    event["shown_period"] = hists->shown_period;
    uint64_t total = options.relative_percentage ? hists->shown_period : hists->total_period;
    boost::json::array entries;
    for (const HistEntry* e : shown_entries(report, *hists, options)) {
      boost::json::object entry;
      for (SortKey key : report.layout.sort_keys) entry[sort_key_name(key)] = key_value(report, key, *e);
      entry["self_percent"] = percent(e->self_period, total);
      if (report.layout.children) entry["children_percent"] = percent(e->children_period, total);
      entry["self_period"] = e->self_period;
      if (report.layout.children) entry["children_period"] = e->children_period;
      entry["self_samples"] = e->self_samples;
      if (report.layout.children) entry["children_samples"] = e->children_samples;
      entries.emplace_back(std::move(entry));
    }
    event["entries"] = std::move(entries);
    events.emplace_back(std::move(event));
  }
  root["events"] = std::move(events);
  return root;
}

}  // namespace vperf::report
