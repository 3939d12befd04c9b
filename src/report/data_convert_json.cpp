#include "report/data_convert_json.h"

#include <linux/perf_event.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <string_view>

#include "report/sample_replay.h"
#include "report/record_source.h"

namespace vperf::report {

namespace {

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) <= 0x1f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// perf's output_json_key_format: a comma ending the previous value, a newline, `depth` tabs.
void key(std::string& out, bool after_value, int depth, std::string_view name) {
  if (after_value) out += ',';
  out += '\n';
  out.append(static_cast<size_t>(depth), '\t');
  out += '"';
  out += name;
  out += "\": ";
}

void headers(std::string& out, const data::PerfDataReader& reader, const std::string& path) {
  const data::HeaderFeatures& f = reader.features();
  key(out, false, 2, "header-version");
  out += "1";
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    char buf[64];
    std::tm tm{};
    gmtime_r(&st.st_mtime, &tm);
    std::strftime(buf, sizeof buf, "%FT%TZ", &tm);
    key(out, true, 2, "captured-on");
    json_string(out, buf);
  }
  key(out, true, 2, "data-offset");
  out += std::to_string(reader.data_offset());
  key(out, true, 2, "data-size");
  out += std::to_string(reader.data_size());
  key(out, true, 2, "feat-offset");
  out += std::to_string(reader.data_offset() + reader.data_size());
  for (const auto& [name, value] : {std::pair<std::string_view, const std::string*>{"hostname", &f.hostname},
                                    {"os-release", &f.osrelease}, {"arch", &f.arch}, {"cpu-desc", &f.cpudesc}, {"cpuid", &f.cpuid}}) {
    key(out, true, 2, name);
    json_string(out, *value);
  }
  key(out, true, 2, "nrcpus-online");
  out += std::to_string(f.nr_cpus_online);
  key(out, true, 2, "nrcpus-avail");
  out += std::to_string(f.nr_cpus_available);
  key(out, true, 2, "perf-version");
  json_string(out, f.version);
  key(out, true, 2, "cmdline");
  out += '[';
  for (size_t i = 0; i < f.cmdline.size(); ++i) {
    if (i) out += ',';
    out += "\n\t\t\t";
    json_string(out, f.cmdline[i]);
  }
  out += "\n\t\t]";
}

void callchain_entry(std::string& out, uint64_t ip, const symbols::ResolvedAddress& at) {
  out += "\n\t\t\t\t{";
  key(out, false, 5, "ip");
  char hex[24];
  std::snprintf(hex, sizeof hex, "\"0x%llx\"", static_cast<unsigned long long>(ip));
  out += hex;
  if (at.symbol && !at.symbol->name.empty()) {
    key(out, true, 5, "symbol");
    json_string(out, at.symbol->name);
    if (const symbols::Dso* dso = at.dso(); dso && !dso->short_name().empty()) {
      key(out, true, 5, "dso");
      json_string(out, dso->short_name());
    }
  }
  out += "\n\t\t\t\t}";
}

}  // namespace

Result<JsonConversion> write_perf_json(data::PerfDataReader& reader, const std::string& path, symbols::Machines& machines,
                                       std::ostream& out) {
  std::string text = "{";
  text += "\n\t\"linux-perf-json-version\": 1";
  key(text, true, 1, "headers");
  text += '{';
  headers(text, reader, path);
  text += "\n\t}";
  key(text, true, 1, "samples");
  text += '[';

  uint64_t combined = 0;
  for (const data::EventAttrEntry& attr : reader.attrs()) combined |= attr.attr.sample_type;
  JsonConversion result;
  SampleReplay replay(machines, ReplayOptions{.ordered = true, .resolve_chain = false});
  PerfDataSource source(reader);
  Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& sample) {
    text += result.samples++ ? ",\n\t\t{" : "\n\t\t{";
    key(text, false, 3, "timestamp");
    text += std::to_string(static_cast<int64_t>(sample.time));
    key(text, true, 3, "pid");
    text += std::to_string(sample.pid);
    key(text, true, 3, "tid");
    text += std::to_string(sample.tid);
    if (combined & PERF_SAMPLE_CPU) {
      const bool own = sample.view.attr && (sample.view.attr->attr.sample_type & PERF_SAMPLE_CPU);
      key(text, true, 3, "cpu");
      text += std::to_string(own ? static_cast<int32_t>(sample.cpu) : -1);
    }
    key(text, true, 3, "comm");
    json_string(text, sample.comm);
    key(text, true, 3, "callchain");
    text += '[';
    const std::vector<uint64_t>& chain = sample.sample.callchain;
    if (!chain.empty()) {
      uint8_t mode = sample.cpumode;
      bool first = true;
      for (uint64_t ip : chain) {
        if (std::optional<uint8_t> switched = SampleReplay::context_mode(ip)) {
          mode = *switched;
          continue;
        }
        if (ip >= PERF_CONTEXT_MAX) continue;
        if (!first) text += ',';
        first = false;
        callchain_entry(text, ip, machines.resolve(sample.pid, sample.tid, mode, ip));
      }
    } else {
      callchain_entry(text, sample.sample.ip, sample.at);
    }
    text += "\n\t\t\t]\n\t\t}";
    if (text.size() > (size_t{1} << 18)) {
      out << text;
      text.clear();
    }
    return true;
  });
  if (!stats) return stats.error();
  text += "\n\t]\n}\n";
  out << text;
  result.stats = *stats;
  return result;
}

}  // namespace vperf::report
