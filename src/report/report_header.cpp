#include "report/report_header.h"

#include <functional>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <span>
#include <utility>
#include <vector>

#include "core/byte_reader.h"
#include "data/perf_data_format.h"

namespace vperf::report {

namespace {

std::string bits(uint64_t value, std::span<const std::pair<uint64_t, const char*>> names) {
  std::string text;
  for (const auto& [bit, name] : names) {
    if (!(value & bit)) continue;
    if (!text.empty()) text += '|';
    text += name;
    value &= ~bit;
  }
  if (value) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%s%#" PRIx64, text.empty() ? "" : "|", value);
    text += buf;
  }
  return text;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#" PRIx64, v);
  return buf;
}

// "seconds.microseconds" as perf's timestamp__scnprintf_usec.
std::string usec_time(uint64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, ns / uint64_t{1000000000}, (ns % uint64_t{1000000000}) / uint64_t{1000});
  return buf;
}

const data::RawFeature* raw_feature(const data::HeaderFeatures& f, int feature) {
  for (const data::RawFeature& raw : f.other)
    if (raw.feature == feature) return &raw;
  return nullptr;
}

// PMU_MAPPINGS: u32 nr, then {u32 type, string name} (a string is u32 len + padded bytes).
std::optional<std::string> pmu_mappings(std::span<const uint8_t> bytes) {
  ByteReader r(bytes);
  auto nr = r.u32("nr");
  if (!nr) return std::nullopt;
  std::string text = "# pmu mappings: ";
  for (uint32_t i = 0; i < *nr; ++i) {
    auto type = r.u32("type");
    auto len = type ? r.u32("len") : Result<uint32_t>(type.error());
    if (!len) return std::nullopt;
    auto name = r.bytes(*len, "name");
    if (!name) return std::nullopt;
    std::string s(reinterpret_cast<const char*>(name->data()), name->size());
    s.resize(std::strlen(s.c_str()));
    if (i) text += ", ";
    text += s + " = " + std::to_string(*type);
  }
  return text + "\n";
}

}  // namespace

std::string sample_type_names(uint64_t sample_type) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {PERF_SAMPLE_IP, "IP"}, {PERF_SAMPLE_TID, "TID"}, {PERF_SAMPLE_TIME, "TIME"}, {PERF_SAMPLE_ADDR, "ADDR"},
      {PERF_SAMPLE_READ, "READ"}, {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"}, {PERF_SAMPLE_ID, "ID"},
      {PERF_SAMPLE_CPU, "CPU"}, {PERF_SAMPLE_PERIOD, "PERIOD"}, {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
      {PERF_SAMPLE_RAW, "RAW"}, {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"}, {PERF_SAMPLE_REGS_USER, "REGS_USER"},
      {PERF_SAMPLE_STACK_USER, "STACK_USER"}, {PERF_SAMPLE_WEIGHT, "WEIGHT"}, {PERF_SAMPLE_DATA_SRC, "DATA_SRC"},
      {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"}, {PERF_SAMPLE_TRANSACTION, "TRANSACTION"},
      {PERF_SAMPLE_REGS_INTR, "REGS_INTR"}, {PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"}, {PERF_SAMPLE_AUX, "AUX"},
      {PERF_SAMPLE_CGROUP, "CGROUP"}, {PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"},
      {PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"}, {PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"}};
  return bits(sample_type, kNames);
}

std::string read_format_names(uint64_t read_format) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"}, {PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"},
      {PERF_FORMAT_ID, "ID"}, {PERF_FORMAT_GROUP, "GROUP"}, {1U << 4, "LOST"}};
  return bits(read_format, kNames);
}

void for_each_attr_field(const perf_event_attr& a, const std::function<void(const char* name, const std::string& text)>& field) {
  auto u = [&](const char* name, uint64_t value) {
    if (value) field(name, std::to_string(value));
  };
  auto x = [&](const char* name, uint64_t value) {
    if (value) field(name, hex(value));
  };
  u("type", a.type);
  u("size", a.size);
  x("config", a.config);
  u("{ sample_period, sample_freq }", a.sample_period);
  if (a.sample_type) field("sample_type", sample_type_names(a.sample_type));
  if (a.read_format) field("read_format", read_format_names(a.read_format));
  u("disabled", a.disabled);
  u("inherit", a.inherit);
  u("pinned", a.pinned);
  u("exclusive", a.exclusive);
  u("exclude_user", a.exclude_user);
  u("exclude_kernel", a.exclude_kernel);
  u("exclude_hv", a.exclude_hv);
  u("exclude_idle", a.exclude_idle);
  u("mmap", a.mmap);
  u("comm", a.comm);
  u("freq", a.freq);
  u("inherit_stat", a.inherit_stat);
  u("enable_on_exec", a.enable_on_exec);
  u("task", a.task);
  u("watermark", a.watermark);
  u("precise_ip", a.precise_ip);
  u("mmap_data", a.mmap_data);
  u("sample_id_all", a.sample_id_all);
  u("exclude_host", a.exclude_host);
  u("exclude_guest", a.exclude_guest);
  u("exclude_callchain_kernel", a.exclude_callchain_kernel);
  u("exclude_callchain_user", a.exclude_callchain_user);
  u("mmap2", a.mmap2);
  u("comm_exec", a.comm_exec);
  u("use_clockid", a.use_clockid);
  u("context_switch", a.context_switch);
  u("write_backward", a.write_backward);
  u("namespaces", a.namespaces);
  u("ksymbol", a.ksymbol);
  u("bpf_event", a.bpf_event);
  u("aux_output", a.aux_output);
  u("cgroup", a.cgroup);
  u("text_poke", a.text_poke);
  u("build_id", a.build_id);
  u("inherit_thread", a.inherit_thread);
  u("remove_on_exec", a.remove_on_exec);
  u("sigtrap", a.sigtrap);
  u("{ wakeup_events, wakeup_watermark }", a.wakeup_events);
  u("bp_type", a.bp_type);
  x("{ bp_addr, config1 }", a.bp_addr);
  x("{ bp_len, config2 }", a.bp_len);
  x("branch_sample_type", a.branch_sample_type);
  x("sample_regs_user", a.sample_regs_user);
  u("sample_stack_user", a.sample_stack_user);
  if (a.clockid) field("clockid", std::to_string(a.clockid));
  x("sample_regs_intr", a.sample_regs_intr);
  u("aux_watermark", a.aux_watermark);
  u("sample_max_stack", a.sample_max_stack);
  u("aux_sample_size", a.aux_sample_size);
  u("sig_data", a.sig_data);
}

std::string event_line(const data::EventAttrEntry& event) {
  std::string line = "# event : name = " + event.name + ", ";
  if (!event.ids.empty()) {
    line += ", id = {";
    for (size_t i = 0; i < event.ids.size(); ++i) line += (i ? ", " : " ") + std::to_string(event.ids[i]);
    line += " }";
  }
  for_each_attr_field(event.attr, [&](const char* name, const std::string& text) { line += std::string(", ") + name + " = " + text; });
  return line + "\n";
}

std::string render_header(const data::PerfDataReader& reader, const HeaderInfo& info) {
  const data::HeaderFeatures& f = reader.features();
  std::vector<int> present = reader.features_present();
  auto has = [&](int feature) { return std::find(present.begin(), present.end(), feature) != present.end(); };

  std::string out = "# ========\n";
  if (info.captured_on) {
    time_t t = static_cast<time_t>(*info.captured_on);
    char buf[64];
    out += "# captured on    : ";
    out += ctime_r(&t, buf);  // ends in '\n', as perf prints it
  }
  bool pipe = reader.is_pipe();
  uint64_t data_offset = pipe ? 0 : reader.data_offset(), data_size = pipe ? 0 : reader.data_size();
  out += "# header version : 1\n";
  out += "# data offset    : " + std::to_string(data_offset) + "\n";
  out += "# data size      : " + std::to_string(data_size) + "\n";
  out += "# feat offset    : " + std::to_string(data_offset + data_size) + "\n";
  if (pipe) out += "# ========\n#\n";
  for (int feature = 1; feature < data::kFeatLast; ++feature) {
    if (!has(feature)) continue;
    switch (feature) {
      case data::kFeatHostname: out += "# hostname : " + f.hostname + "\n"; break;
      case data::kFeatOsRelease: out += "# os release : " + f.osrelease + "\n"; break;
      case data::kFeatVersion: out += "# perf version : " + f.version + "\n"; break;
      case data::kFeatArch: out += "# arch : " + f.arch + "\n"; break;
      case data::kFeatNrCpus:
        out += "# nrcpus online : " + std::to_string(f.nr_cpus_online) + "\n";
        out += "# nrcpus avail : " + std::to_string(f.nr_cpus_available) + "\n";
        break;
      case data::kFeatCpuDesc: out += "# cpudesc : " + f.cpudesc + "\n"; break;
      case data::kFeatCpuId: out += "# cpuid : " + f.cpuid + "\n"; break;
      case data::kFeatTotalMem: out += "# total memory : " + std::to_string(f.total_mem_kb) + " kB\n"; break;
      case data::kFeatCmdline:
        out += "# cmdline : ";
        for (const std::string& word : f.cmdline) out += word + " ";
        out += "\n";
        break;
      case data::kFeatEventDesc:
        for (const data::EventAttrEntry& event : reader.attrs()) out += event_line(event);
        break;
      case data::kFeatCpuTopology:
      case data::kFeatNumaTopology:
      case data::kFeatCache:
      case data::kFeatMemTopology:
        out += "# " + data::feature_name(feature) + " info available, use -I to display\n";
        break;
      case data::kFeatGroupDesc:
        // perf names an unnamed group by its members alone.
        for (const data::EventGroupDesc& group : f.groups) {
          if (!group.spans_events(reader.attrs().size())) continue;
          out += "# group: " + (group.name == "{anon_group}" ? std::string() : group.name) + "{";
          for (uint32_t m = group.leader; m < group.leader + group.members; ++m) out += (m == group.leader ? "" : ",") + reader.attrs()[m].name;
          out += "}\n";
        }
        break;
      case data::kFeatPmuMappings:
        if (const data::RawFeature* raw = raw_feature(f, feature))
          if (std::optional<std::string> text = pmu_mappings(raw->bytes)) out += *text;
        break;
      case data::kFeatSampleTime:
        if (f.first_sample_time && f.last_sample_time) {
          out += "# time of first sample : " + usec_time(*f.first_sample_time) + "\n";
          out += "# time of last sample : " + usec_time(*f.last_sample_time) + "\n";
          char buf[64];
          std::snprintf(buf, sizeof buf, "# sample duration : %10.3f ms\n",
                        static_cast<double>(*f.last_sample_time - *f.first_sample_time) / 1e6);
          out += buf;
        }
        break;
      case data::kFeatCompressed:
        // u32 version, type (1: zstd), level, ratio, mmap_len.
        if (const data::RawFeature* raw = raw_feature(f, feature); raw && raw->bytes.size() >= 16) {
          uint32_t words[4];
          std::memcpy(words, raw->bytes.data(), sizeof words);
          out += std::string("# compressed : ") + (words[1] == 1 ? "Zstd" : "Unknown") + ", level = " +
                 std::to_string(static_cast<int32_t>(words[2])) + ", ratio = " + std::to_string(static_cast<int32_t>(words[3])) + "\n";
        }
        break;
      case data::kFeatClockId:
        if (f.clockid_res_ns) out += "# clockid frequency: " + std::to_string(*f.clockid_res_ns * 1000) + " MHz\n";
        break;
      default:
        break;
    }
  }
  if (pipe) return out;
  std::string missing;
  for (int feature = 1; feature < data::kFeatLast; ++feature)
    if (!has(feature)) missing += data::feature_name(feature) + " ";
  if (!missing.empty()) out += "# missing features: " + missing + "\n";
  out += "# ========\n#\n";
  return out;
}

}  // namespace vperf::report
