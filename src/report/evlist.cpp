#include "report/evlist.h"

#include <linux/perf_event.h>

#include <optional>
#include <vector>

#include "report/event_names.h"
#include "report/report_header.h"

namespace vperf::report {

std::string render_evlist(const data::PerfDataReader& reader, const tracing::TracepointDecoder* decoder,
                          const EvlistOptions& options) {
  const std::vector<data::EventAttrEntry>& attrs = reader.attrs();
  std::vector<std::string> names;
  for (const data::EventAttrEntry& attr : attrs) names.push_back(event_name(attr, decoder));
  // Each event's group leader when it is a member of a group of several (-g).
  std::vector<std::optional<data::EventGroupDesc>> group_of(attrs.size());
  if (options.groups)
    for (const data::EventGroupDesc& group : reader.features().groups)
      if (group.spans_events(attrs.size()))
        for (uint32_t i = group.leader; i < group.leader + group.members; ++i) group_of[i] = group;

  std::string out;
  bool tracepoints = false;
  for (size_t i = 0; i < attrs.size(); ++i) {
    const perf_event_attr& attr = attrs[i].attr;
    tracepoints |= attr.type == PERF_TYPE_TRACEPOINT;
    if (group_of[i]) {
      if (group_of[i]->leader != i) continue;  // perf shows a group once, at its leader
      out += '{';
      for (uint32_t m = group_of[i]->leader; m < group_of[i]->leader + group_of[i]->members; ++m)
        out += (m == group_of[i]->leader ? "" : ",") + names[m];
      out += '}';
    } else {
      out += names[i];
    }
    if (options.verbose) {
      bool first = true;
      for_each_attr_field(attr, [&](const char* name, const std::string& text) {
        out += (first ? ": " : ", ") + std::string(name) + ": " + text;
        first = false;
      });
    } else if (options.frequency) {
      out += attr.freq ? ": sample_freq=" : ": sample_period=";
      out += std::to_string(attr.sample_period);
    } else if (options.trace_fields) {
      if (attr.type != PERF_TYPE_TRACEPOINT) {
        out += ": (not a tracepoint)";
      } else {
        out += ": trace_fields: ";
        bool first = true;
        for (const std::string& field : decoder ? decoder->field_names(attr.config) : std::vector<std::string>{}) {
          if (field.starts_with("common_")) continue;
          out += (first ? "" : ",") + field;
          first = false;
        }
      }
    }
    out += '\n';
  }
  if (tracepoints && !options.trace_fields) out += "# Tip: use 'perf evlist --trace-fields' to show fields for tracepoint events\n";
  return out;
}

}  // namespace vperf::report
