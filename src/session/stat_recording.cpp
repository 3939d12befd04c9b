#include "session/stat_recording.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "core/byte_writer.h"
#include "data/perf_data_format.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"
#include "events/attr_builder.h"
#include "stat/stat_metrics.h"

namespace vperf::session {

namespace {

// perf's enum aggr_mode (util/stat.h) and PERF_STAT_CONFIG_TERM__*, PERF_EVENT_UPDATE__*,
// PERF_STAT_ROUND_TYPE__*.
constexpr std::pair<stat::AggrMode, uint64_t> kAggrModes[] = {
    {stat::AggrMode::PerCpu, 0}, {stat::AggrMode::Global, 1}, {stat::AggrMode::PerSocket, 2}, {stat::AggrMode::PerDie, 3},
    {stat::AggrMode::PerCore, 4}, {stat::AggrMode::PerThread, 5}, {stat::AggrMode::PerNode, 7}};
constexpr uint64_t kConfigAggrMode = 0, kConfigInterval = 1, kConfigScale = 2;
constexpr uint64_t kUpdateUnit = 0, kUpdateScale = 1, kUpdateName = 2;
constexpr uint64_t kRoundInterval = 0, kRoundFinal = 1;
constexpr uint16_t kCpuMapCpus = 0;

std::vector<uint8_t> padded(const std::string& text) {
  std::vector<uint8_t> out(text.begin(), text.end());
  out.resize((text.size() / 8 + 1) * 8, 0);  // NUL-terminated, to 8 bytes
  return out;
}

std::vector<uint8_t> record_bytes(uint32_t type, data::RecordBody body) {
  data::Record record;
  record.type = type;
  record.body = std::move(body);
  return data::build_record(record, nullptr);
}

// CPU_MAP as perf writes a list: u16 type (cpus), u16 nr, u16 cpu[nr], padded to 8.
std::vector<uint8_t> cpu_map_bytes(const std::vector<int>& cpus) {
  ByteWriter body;
  body.u16(kCpuMapCpus);
  body.u16(static_cast<uint16_t>(cpus.size()));
  for (int cpu : cpus) body.u16(static_cast<uint16_t>(cpu));
  std::vector<uint8_t> bytes = body.data();
  bytes.resize((bytes.size() + 7) / 8 * 8, 0);
  data::UnparsedRecord unparsed{bytes};
  return record_bytes(data::kRecordCpuMap, unparsed);
}

}  // namespace

Result<void> write_stat_recording(const std::string& path, const StatRecording& r) {
  // The attrs, each with an id per counter; the maps' indices of each counter.
  const std::vector<int>& cpus = r.cpus;
  const std::vector<std::pair<int, std::string>>& threads = r.threads;
  auto thread_index = [&threads](pid_t thread) {
    auto it = std::find_if(threads.begin(), threads.end(), [thread](const auto& t) { return t.first == thread; });
    return static_cast<uint32_t>(it - threads.begin());
  };
  std::vector<data::EventAttrEntry> attrs;
  // A snapshot's STAT records: one per counter, its id (event + 1) << 20 | its index.
  auto stat_records = [&](const stat::StatSnapshot& snapshot) {
    std::vector<std::vector<uint8_t>> out;
    for (size_t e = 0; e < r.events.size() && e < snapshot.counts.size(); ++e) {
      const std::vector<stat::CounterSample>& samples = snapshot.counts[e].samples;
      for (size_t k = 0; k < samples.size(); ++k) {
        const uint64_t id = (uint64_t{e} + 1) << 20 | k;
        const auto cpu = static_cast<uint32_t>(samples[k].cpu);  // the CPU itself (-1: any), not its index
        const uint32_t thread = thread_index(samples[k].thread);
        const perf::CounterReading& reading = samples[k].reading;
        out.push_back(record_bytes(data::kRecordStat, data::StatRecord{id, cpu, thread, reading.value, reading.time_enabled, reading.time_running}));
      }
    }
    return out;
  };
  for (size_t e = 0; e < r.events.size(); ++e) {
    data::EventAttrEntry entry;
    entry.attr = events::build_attr(r.events[e].event, events::perf_stat_settings());
    events::apply_all_user_or_kernel(entry.attr, r.all_user, r.all_kernel);
    entry.attr.sample_type = PERF_SAMPLE_IDENTIFIER;
    entry.attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    entry.name = r.events[e].name;
    if (e < r.totals.counts.size())
      for (size_t k = 0; k < r.totals.counts[e].samples.size(); ++k) entry.ids.push_back((uint64_t{e} + 1) << 20 | k);
    if (entry.ids.empty()) entry.ids.push_back((uint64_t{e} + 1) << 20);  // not counted: named all the same
    attrs.push_back(std::move(entry));
  }

  const bool pipe = path == "-";
  Result<data::PerfDataWriter> writer = pipe ? data::PerfDataWriter::create_pipe(1, attrs) : data::PerfDataWriter::create_file(path, attrs);
  if (!writer) return writer.error();
  for (size_t e = 0; e < r.events.size(); ++e) {
    const uint64_t id = attrs[e].ids.front();
    const stat::EventUnit unit = stat::event_unit(r.events[e].event);
    if (!unit.unit.empty()) VPERF_TRY(writer->write(record_bytes(data::kRecordEventUpdate, data::EventUpdateRecord{kUpdateUnit, id, padded(unit.unit)})));
    if (unit.scale != 1.0) {
      std::vector<uint8_t> scale(8);
      std::memcpy(scale.data(), &unit.scale, 8);
      VPERF_TRY(writer->write(record_bytes(data::kRecordEventUpdate, data::EventUpdateRecord{kUpdateScale, id, scale})));
    }
    // A pipe has no EVENT_DESC before its counts: perf names the events from these.
    if (pipe) VPERF_TRY(writer->write(record_bytes(data::kRecordEventUpdate, data::EventUpdateRecord{kUpdateName, id, padded(r.events[e].name)})));
  }
  data::ThreadMapRecord thread_map;
  for (const auto& [pid, comm] : threads) thread_map.entries.push_back({static_cast<uint64_t>(static_cast<int64_t>(pid)), comm});
  VPERF_TRY(writer->write(record_bytes(data::kRecordThreadMap, thread_map)));
  VPERF_TRY(writer->write(cpu_map_bytes(cpus)));
  uint64_t aggr = 1;
  for (const auto& [mode, value] : kAggrModes)
    if (mode == r.aggregation) aggr = value;
  VPERF_TRY(writer->write(record_bytes(data::kRecordStatConfig, data::StatConfigRecord{{{kConfigAggrMode, aggr}, {kConfigScale, 1}, {kConfigInterval, r.interval_ms}}})));
  if (r.intervals.empty()) {
    for (const std::vector<uint8_t>& stat : stat_records(r.totals)) VPERF_TRY(writer->write(stat));
    VPERF_TRY(writer->write(record_bytes(data::kRecordStatRound, data::StatRoundRecord{kRoundFinal, r.totals.elapsed_ns})));
  }
  for (const stat::StatSnapshot& interval : r.intervals) {
    for (const std::vector<uint8_t>& stat : stat_records(interval)) VPERF_TRY(writer->write(stat));
    VPERF_TRY(writer->write(record_bytes(data::kRecordStatRound, data::StatRoundRecord{kRoundInterval, interval.elapsed_ns})));
  }
  data::HeaderFeatures features = data::this_machine_features(r.cmdline);
  features.other.push_back({data::kFeatStat, {}});
  return writer->finish(features);
}

Result<StatRecording> read_stat_recording(data::PerfDataReader& reader) {
  StatRecording out;
  out.from_pipe = reader.is_pipe();
  std::map<uint64_t, std::string> names, units;  // by id (EVENT_UPDATE)
  std::vector<std::vector<stat::CounterSample>> samples(reader.attrs().size());
  std::optional<std::vector<std::vector<stat::CounterSample>>> final_round, last_interval;
  bool any_stat = false;
  Result<data::ReadStats> read = reader.read(
      [&](const data::RecordView& v) {
        const data::RecordBody& body = v.record.body;
        if (const auto* update = std::get_if<data::EventUpdateRecord>(&body)) {
          const std::string text(update->data.begin(), std::find(update->data.begin(), update->data.end(), '\0'));
          if (update->type == kUpdateName) names[update->id] = text;
          if (update->type == kUpdateUnit) units[update->id] = text;
        } else if (const auto* map = std::get_if<data::ThreadMapRecord>(&body)) {
          out.threads.clear();
          for (const data::ThreadMapEntry& t : map->entries) out.threads.emplace_back(static_cast<int>(static_cast<int64_t>(t.pid)), t.comm);
        } else if (const auto* config = std::get_if<data::StatConfigRecord>(&body)) {
          for (const auto& [tag, value] : config->entries) {
            if (tag == kConfigInterval) out.interval_ms = value;
            if (tag == kConfigAggrMode)
              for (const auto& [mode, code] : kAggrModes)
                if (code == value) out.aggregation = mode;
          }
        } else if (const auto* stat_record = std::get_if<data::StatRecord>(&body)) {
          any_stat = true;
          const data::EventAttrEntry* attr = reader.attr_for_id(stat_record->id);
          if (attr == nullptr) return true;
          const size_t index = static_cast<size_t>(attr - reader.attrs().data());
          stat::CounterSample sample;
          sample.cpu = static_cast<int32_t>(stat_record->cpu);
          sample.thread = stat_record->thread < out.threads.size() ? out.threads[stat_record->thread].first : -1;
          sample.reading.value = stat_record->val;
          sample.reading.time_enabled = stat_record->ena;
          sample.reading.time_running = stat_record->run;
          if (index < samples.size()) samples[index].push_back(sample);
        } else if (const auto* round = std::get_if<data::StatRoundRecord>(&body)) {
          (round->type == kRoundFinal ? final_round : last_interval) = samples;
          out.totals.elapsed_ns = round->time;
          if (round->type != kRoundFinal) {
            stat::StatSnapshot interval;
            interval.elapsed_ns = round->time;
            for (std::vector<stat::CounterSample>& s : samples) interval.counts.push_back(stat::EventCounts{stat::OpenStatus::Opened, s});
            out.intervals.push_back(std::move(interval));
          }
          for (auto& s : samples) s.clear();
        }
        return true;
      },
      data::ReadOptions{.ordered = false});
  if (!read) return read.error();
  if (!any_stat) return Error{"no stat data: it was not written by `stat record`", 0, "record counts with: vperf stat record -o FILE -- COMMAND"};
  const std::vector<std::vector<stat::CounterSample>>& counted = final_round ? *final_round : last_interval ? *last_interval : samples;
  for (size_t i = 0; i < reader.attrs().size(); ++i) {
    const data::EventAttrEntry& attr = reader.attrs()[i];
    stat::StatEvent event;
    const uint64_t id = attr.ids.empty() ? 0 : attr.ids.front();
    event.name = names.contains(id) ? names[id] : attr.name;
    event.event.name = event.name;
    event.event.type = attr.attr.type;
    event.event.config = attr.attr.config;
    event.event.pmu = attr.attr.type == PERF_TYPE_SOFTWARE ? "software" : "cpu";
    out.events.push_back(event);
    stat::EventCounts counts;
    counts.samples = i < counted.size() ? counted[i] : std::vector<stat::CounterSample>{};
    out.totals.counts.push_back(std::move(counts));
  }
  out.cmdline = reader.features().cmdline;
  return out;
}

}  // namespace vperf::session
