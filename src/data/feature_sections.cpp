#include "data/feature_sections.h"

#include <algorithm>
#include <cstring>

#include "core/byte_reader.h"
#include "core/byte_writer.h"
#include "data/perf_data_format.h"
#include "data/perf_record.h"

namespace vperf::data {
namespace {

Result<std::string> get_string(ByteReader& r, std::string_view what) {
  VPERF_TRY(uint32_t len, r.u32(what));
  VPERF_TRY(auto field, r.bytes(len, what));
  auto nul = std::find(field.begin(), field.end(), uint8_t{0});
  return std::string(field.begin(), nul);
}

std::vector<uint8_t> string_section(std::string_view s) {
  ByteWriter w;
  put_perf_string(w, s);
  return w.take();
}

}  // namespace

void put_perf_string(ByteWriter& w, std::string_view s) {
  uint32_t len = static_cast<uint32_t>((s.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign);
  w.u32(len);
  w.padded_string(s, len);
}

std::vector<uint8_t> encode_build_id(const BuildIdEntry& entry, uint32_t type) {
  Record rec;
  rec.type = type;
  rec.misc = static_cast<uint16_t>(entry.misc | kMiscBuildIdSize);
  BuildIdRecord b;
  b.pid = entry.pid;
  b.build_id = entry.build_id;
  b.filename = entry.filename;
  rec.body = std::move(b);
  if (type == kRecordHeaderBuildId) return build_record(rec, nullptr);
  rec.type = kRecordHeaderBuildId;  // build it as one, then put the section's type back
  auto bytes = build_record(rec, nullptr);
  std::memcpy(bytes.data(), &type, sizeof(type));
  return bytes;
}

std::vector<RawFeature> encode_features(const HeaderFeatures& f, const std::vector<EventAttrEntry>& attrs) {
  std::vector<RawFeature> out;
  auto add = [&](int feature, std::vector<uint8_t> bytes) { out.push_back({feature, std::move(bytes)}); };
  if (!f.build_ids.empty()) {
    std::vector<uint8_t> all;
    for (const auto& b : f.build_ids) {
      auto one = encode_build_id(b, 0);
      all.insert(all.end(), one.begin(), one.end());
    }
    add(kFeatBuildId, std::move(all));
  }
  if (!f.hostname.empty()) add(kFeatHostname, string_section(f.hostname));
  if (!f.osrelease.empty()) add(kFeatOsRelease, string_section(f.osrelease));
  if (!f.version.empty()) add(kFeatVersion, string_section(f.version));
  if (!f.arch.empty()) add(kFeatArch, string_section(f.arch));
  if (f.nr_cpus_online || f.nr_cpus_available) {
    ByteWriter w;
    w.u32(f.nr_cpus_available);
    w.u32(f.nr_cpus_online);
    add(kFeatNrCpus, w.take());
  }
  if (!f.cpudesc.empty()) add(kFeatCpuDesc, string_section(f.cpudesc));
  if (!f.cpuid.empty()) add(kFeatCpuId, string_section(f.cpuid));
  if (f.total_mem_kb) {
    ByteWriter w;
    w.u64(f.total_mem_kb);
    add(kFeatTotalMem, w.take());
  }
  if (!f.cmdline.empty()) {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(f.cmdline.size()));
    for (const auto& arg : f.cmdline) put_perf_string(w, arg);
    add(kFeatCmdline, w.take());
  }
  if (!attrs.empty()) {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(attrs.size()));
    w.u32(sizeof(perf_event_attr));
    for (const auto& a : attrs) {
      perf_event_attr attr = a.attr;
      attr.size = sizeof(perf_event_attr);
      w.put(attr);
      w.u32(static_cast<uint32_t>(a.ids.size()));
      put_perf_string(w, a.name);
      for (uint64_t id : a.ids) w.u64(id);
    }
    add(kFeatEventDesc, w.take());
  }
  if (f.first_sample_time || f.last_sample_time) {
    ByteWriter w;
    w.u64(f.first_sample_time.value_or(0));
    w.u64(f.last_sample_time.value_or(0));
    add(kFeatSampleTime, w.take());
  }
  if (!f.groups.empty()) {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(f.groups.size()));
    for (const EventGroupDesc& group : f.groups) {
      put_perf_string(w, group.name);
      w.u32(group.leader);
      w.u32(group.members);
    }
    add(kFeatGroupDesc, w.take());
  }
  if (f.clockid_res_ns) {
    ByteWriter w;
    w.u64(*f.clockid_res_ns);
    add(kFeatClockId, w.take());
  }
  for (const auto& raw : f.other) {
    if (raw.feature <= 0 || raw.feature >= static_cast<int>(kFeatureBits)) continue;
    bool taken = std::any_of(out.begin(), out.end(), [&](const RawFeature& r) { return r.feature == raw.feature; });
    if (!taken) out.push_back(raw);
  }
  std::stable_sort(out.begin(), out.end(), [](const RawFeature& a, const RawFeature& b) { return a.feature < b.feature; });
  return out;
}

Result<bool> decode_feature(int feature, std::span<const uint8_t> bytes, HeaderFeatures& out) {
  ByteReader r(bytes);
  switch (feature) {
    case kFeatHostname: { VPERF_TRY(out.hostname, get_string(r, "HOSTNAME")); return true; }
    case kFeatOsRelease: { VPERF_TRY(out.osrelease, get_string(r, "OSRELEASE")); return true; }
    case kFeatVersion: { VPERF_TRY(out.version, get_string(r, "VERSION")); return true; }
    case kFeatArch: { VPERF_TRY(out.arch, get_string(r, "ARCH")); return true; }
    case kFeatCpuDesc: { VPERF_TRY(out.cpudesc, get_string(r, "CPUDESC")); return true; }
    case kFeatCpuId: { VPERF_TRY(out.cpuid, get_string(r, "CPUID")); return true; }
    case kFeatNrCpus: {
      VPERF_TRY(out.nr_cpus_available, r.u32("NRCPUS"));
      VPERF_TRY(out.nr_cpus_online, r.u32("NRCPUS"));
      return true;
    }
    case kFeatTotalMem: { VPERF_TRY(out.total_mem_kb, r.u64("TOTAL_MEM")); return true; }
    case kFeatGroupDesc: {
      VPERF_TRY(uint32_t nr, r.u32("GROUP_DESC nr"));
      if (nr > r.remaining() / 12) return r.truncated("GROUP_DESC groups", r.remaining() + 1);  // 3 u32 at least each
      std::vector<EventGroupDesc> groups;
      for (uint32_t i = 0; i < nr; ++i) {
        EventGroupDesc group;
        VPERF_TRY(group.name, get_string(r, "GROUP_DESC name"));
        VPERF_TRY(group.leader, r.u32("GROUP_DESC leader"));
        VPERF_TRY(group.members, r.u32("GROUP_DESC members"));
        groups.push_back(std::move(group));
      }
      out.groups = std::move(groups);
      return true;
    }
    case kFeatCmdline: {
      VPERF_TRY(uint32_t nr, r.u32("CMDLINE nr"));
      if (nr > r.remaining() / 4) return r.truncated("CMDLINE strings", r.remaining() + 1);
      std::vector<std::string> args;
      for (uint32_t i = 0; i < nr; ++i) {
        VPERF_TRY(std::string arg, get_string(r, "CMDLINE string"));
        args.push_back(std::move(arg));
      }
      out.cmdline = std::move(args);
      return true;
    }
    case kFeatEventDesc: {
      VPERF_TRY(uint32_t nr, r.u32("EVENT_DESC nr"));
      VPERF_TRY(uint32_t attr_size, r.u32("EVENT_DESC attr_size"));
      if (attr_size < PERF_ATTR_SIZE_VER0) return Error{"EVENT_DESC attr_size " + std::to_string(attr_size) + " < 64"};
      if (nr > r.remaining() / attr_size) return r.truncated("EVENT_DESC events", r.remaining() + 1);
      std::vector<EventAttrEntry> events;
      for (uint32_t i = 0; i < nr; ++i) {
        EventAttrEntry e;
        VPERF_TRY(auto attr_bytes, r.bytes(attr_size, "EVENT_DESC attr"));
        VPERF_TRY(e.attr, attr_from_bytes(attr_bytes));
        VPERF_TRY(uint32_t nr_ids, r.u32("EVENT_DESC nr_ids"));
        VPERF_TRY(e.name, get_string(r, "EVENT_DESC name"));
        if (nr_ids > r.remaining() / 8) return r.truncated("EVENT_DESC ids", r.remaining() + 1);
        e.ids.resize(nr_ids);
        for (auto& id : e.ids) { VPERF_TRY(id, r.u64("EVENT_DESC id")); }
        events.push_back(std::move(e));
      }
      out.event_desc = std::move(events);
      return true;
    }
    case kFeatBuildId: {
      std::vector<BuildIdEntry> ids;
      while (!r.at_end()) {
        auto start = r.rest();
        VPERF_TRY(r.u32("BUILD_ID header"));  // the type: see below
        VPERF_TRY(uint16_t misc, r.u16("BUILD_ID header"));
        VPERF_TRY(uint16_t size, r.u16("BUILD_ID header"));
        if (size < 8 || size > start.size()) return Error{"BUILD_ID entry of size " + std::to_string(size) + " at offset " + std::to_string(r.offset() - 8)};
        // perf leaves the type 0 in the section; parse it as the HEADER_BUILD_ID record it is.
        std::vector<uint8_t> copy(start.begin(), start.begin() + size);
        uint32_t build_id_type = kRecordHeaderBuildId;
        std::memcpy(copy.data(), &build_id_type, sizeof(build_id_type));
        VPERF_TRY(Record rec, parse_record(copy, nullptr));
        VPERF_TRY(r.skip(size - 8u));
        const auto* b = std::get_if<BuildIdRecord>(&rec.body);
        if (!b) continue;
        BuildIdEntry e;
        e.pid = b->pid;
        e.misc = static_cast<uint16_t>(misc & ~kMiscBuildIdSize);
        e.build_id = b->build_id;
        if (!(misc & kMiscBuildIdSize)) {  // 20 bytes, trailing zeros are padding (perf's rule)
          while (!e.build_id.empty() && e.build_id.back() == 0) e.build_id.pop_back();
        }
        e.filename = b->filename;
        ids.push_back(std::move(e));
      }
      out.build_ids = std::move(ids);
      return true;
    }
    case kFeatSampleTime: {
      VPERF_TRY(uint64_t first, r.u64("SAMPLE_TIME"));
      VPERF_TRY(uint64_t last, r.u64("SAMPLE_TIME"));
      out.first_sample_time = first;
      out.last_sample_time = last;
      return true;
    }
    case kFeatClockId: {
      VPERF_TRY(uint64_t res, r.u64("CLOCKID"));
      out.clockid_res_ns = res;
      return true;
    }
    default:
      out.other.push_back({feature, std::vector<uint8_t>(bytes.begin(), bytes.end())});
      return false;
  }
}

}  // namespace vperf::data
