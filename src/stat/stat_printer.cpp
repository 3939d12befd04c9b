#include "stat/stat_printer.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>

namespace vperf::stat {

namespace {

constexpr const char* kNotSupported = "<not supported>";
constexpr const char* kNotCounted = "<not counted>";
constexpr int kMetricLen = 35;  // perf 6.1's METRIC_LEN

__attribute__((format(printf, 1, 2))) std::string strf(const char* format, ...) {
  char small[256];
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(small, sizeof small, format, args);
  va_end(args);
  std::string out;
  if (n < 0) {
    out = "";
  } else if (static_cast<size_t>(n) < sizeof small) {
    out.assign(small, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), format, copy);
    out.resize(static_cast<size_t>(n));
  }
  va_end(copy);
  return out;
}

// A metric's value through its own printf format (always one double).
std::string format_metric(const char* format, double value) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, format, value);
  return n < 0 ? std::string() : std::string(buf, std::min(static_cast<size_t>(n), sizeof buf - 1));
}

// "1234567.25" -> "1,234,567.25" (en_US grouping of the integer digits).
std::string group_thousands(const std::string& number) {
  size_t begin = number.find_first_of("0123456789");
  if (begin == std::string::npos) return number;
  size_t end = begin;
  while (end < number.size() && number[end] >= '0' && number[end] <= '9') ++end;
  std::string digits = number.substr(begin, end - begin);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return number.substr(0, begin) + grouped + number.substr(end);
}

// perf's stats: n, mean, and the standard deviation of the mean (stat.c stddev_stats).
struct Stats {
  int n = 0;
  double mean = 0, m2 = 0;
  void add(double v) {
    ++n;
    const double delta = v - mean;
    mean += delta / n;
    m2 += delta * (v - mean);
  }
  double stddev_of_mean() const {
    if (n < 2) return 0;
    return std::sqrt(m2 / (n - 1) / n);
  }
};

double relative_percent(double stddev, double mean) { return mean != 0 ? 100.0 * stddev / mean : 0.0; }

// perf's percent of running time in CSV and JSON: an integer division (100 * run / ena).
double csv_running_percent(uint64_t run, uint64_t ena) {
  if (run == ena || ena == 0) return 100.0;
  return static_cast<double>(100 * run / ena);
}

// perf's print_metric_csv: the leading number of the formatted value, no spaces, no unit.
std::string csv_metric_number(const char* format, double value) {
  std::string s = format_metric(format, value);
  size_t begin = s.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  size_t end = begin;
  while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.')) ++end;
  return s.substr(begin, end - begin);
}

std::string skip_spaces(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\n");
  return begin == std::string::npos ? std::string() : s.substr(begin);
}

std::string interval_time(uint64_t ns) {
  return strf("%6" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

}  // namespace

std::string describe_target(const StatTarget& t) {
  if (t.system_wide) return "'system wide'";
  if (!t.cpu_list.empty()) return "'CPU(s) " + t.cpu_list + "'";
  if (t.pid.empty() && t.tid.empty()) {
    std::string s = "'";
    if (t.command.empty()) s += "pipe";
    for (size_t i = 0; i < t.command.size(); ++i) s += (i ? " " : "") + t.command[i];
    return s + "'";
  }
  if (!t.pid.empty()) return "process id '" + t.pid + "'";
  return "thread id '" + t.tid + "'";
}

struct StatPrinter::Line {
  CountState state = CountState::NotCounted;
  int cpus = 0;
  double value = 0;  // display value: count × the event's scale (msec for clocks)
  uint64_t enabled = 0, running = 0;
  double noise_percent = 0;  // printed when runs > 1
  std::vector<MetricValue> metrics;
};

StatPrinter::StatPrinter(std::vector<StatEvent> events, StatPrintOptions options, CpuTopology topology,
                         std::ostream& out)
    : events_(std::move(events)), options_(std::move(options)), topology_(std::move(topology)), out_(out) {
  for (const StatEvent& e : events_)
    unit_width_ = std::max(unit_width_, static_cast<int>(event_unit(e.event).unit.size()));
  // perf's is_mixed_hw_group looks at the whole event list: two PMU types among the events
  // that are not software events ("cycles" is PERF_TYPE_HARDWARE, "r11" PERF_TYPE_RAW).
  std::optional<uint32_t> type;
  for (const StatEvent& e : events_) {
    if (e.event.type == PERF_TYPE_SOFTWARE) continue;
    if (!type) type = e.event.type;
    else if (*type != e.event.type) pmu_types_mixed_ = true;
  }
}

std::string StatPrinter::unit_prefix(const AggrUnit& u, int cpus) const {
  const std::string& sep = options_.csv_separator;
  switch (options_.format) {
    case StatFormat::Text:
      switch (u.mode) {
        case AggrMode::Global: return "";
        case AggrMode::PerCpu: return strf("CPU%-7d ", u.cpu);
        case AggrMode::PerCore: return strf("S%d-D%d-C%-8d %4d ", u.socket, u.die, u.core, cpus);
        case AggrMode::PerDie: return strf("S%d-D%-8d %4d ", u.socket, u.die, cpus);
        case AggrMode::PerSocket: return strf("S%-5d %4d ", u.socket, cpus);
        case AggrMode::PerNode: return strf("N%-5d %4d ", u.node, cpus);
        case AggrMode::PerThread: return strf("%16s-%-8d ", thread_name(u).c_str(), u.thread);
      }
      return "";
    case StatFormat::Csv:
      if (u.mode == AggrMode::Global) return "";
      if (u.mode == AggrMode::PerCpu) return u.label() + sep;
      if (u.mode == AggrMode::PerThread) return thread_name(u) + "-" + u.label() + sep;
      return u.label() + sep + std::to_string(cpus) + sep;
    case StatFormat::Json: {
      std::string s = in_interval_ ? "" : "{";
      switch (u.mode) {
        case AggrMode::Global: break;
        case AggrMode::PerCpu: s += strf("\"cpu\" : \"%d\", ", u.cpu); break;
        case AggrMode::PerCore: s += strf("\"core\" : \"%s\", \"aggregate-number\" : %d, ", u.label().c_str(), cpus); break;
        case AggrMode::PerDie: s += strf("\"die\" : \"%s\", \"aggregate-number\" : %d, ", u.label().c_str(), cpus); break;
        case AggrMode::PerSocket: s += strf("\"socket\" : \"%s\", \"aggregate-number\" : %d, ", u.label().c_str(), cpus); break;
        case AggrMode::PerNode: s += strf("\"node\" : \"%s\", \"aggregate-number\" : %d, ", u.label().c_str(), cpus); break;
        case AggrMode::PerThread: s += strf("\"thread\" : \"%s-%d\", ", thread_name(u).c_str(), u.thread); break;
      }
      return s;
    }
  }
  return "";
}

std::string StatPrinter::thread_name(const AggrUnit& unit) const {
  auto it = options_.thread_names.find(unit.thread);
  return it == options_.thread_names.end() ? std::string() : it->second;
}

void StatPrinter::print_line(const std::string& prefix, const StatEvent& event, const AggrUnit& unit,
                             const Line& line) {
  const std::string& sep = options_.format == StatFormat::Text ? std::string(" ") : options_.csv_separator;
  const EventUnit eu = event_unit(event.event);
  const bool with_noise = options_.runs > 1;
  const bool csv = options_.format == StatFormat::Csv;
  const bool json = options_.format == StatFormat::Json;
  const bool text = options_.format == StatFormat::Text;
  std::string s = prefix;
  if (csv && options_.interval && !in_interval_ && options_.csv_summary_column) s += strf("%16s%s", "summary", sep.c_str());
  s += unit_prefix(unit, line.cpus);

  auto noise = [&] {
    if (!with_noise) return;
    if (text && line.noise_percent != 0) s += strf("  ( +-%6.2f%% )", line.noise_percent);
    if (csv) s += sep + strf("%.2f%%", line.noise_percent);
    if (json) s += strf("\"variance\" : %.2f, ", line.noise_percent);
  };
  auto running = [&] {
    if (text && line.running != line.enabled)
      s += strf("  (%.2f%%)", 100.0 * static_cast<double>(line.running) / static_cast<double>(line.enabled));
    if (csv) s += sep + std::to_string(line.running) + sep + strf("%.2f", csv_running_percent(line.running, line.enabled));
    if (json)
      s += strf("\"event-runtime\" : %" PRIu64 ", \"pcnt-running\" : %.2f, ", line.running,
                csv_running_percent(line.running, line.enabled));
  };
  // perf's print_metric_{std,csv,json} and new_line_{std,csv,json}.
  auto metric = [&](const MetricValue& m) {
    const bool shown = m.format != nullptr && m.unit.has_value();
    if (text) {
      if (!shown) {
        s += std::string(kMetricLen, ' ');
        return;
      }
      if (m.new_line) {
        s += "\n" + prefix + unit_prefix(unit, line.cpus);
        if (unit.mode == AggrMode::PerCpu) s += std::string(8, ' ');
        s += std::string(49, ' ');
      }
      const std::string value = " # " + format_metric(m.format, m.value);
      s += value + strf(" %-*s", kMetricLen - static_cast<int>(value.size()) - 1, m.unit->c_str());
      return;
    }
    if (m.new_line) {
      if (csv) {
        const int fields = 3 + (unit.mode == AggrMode::Global                                      ? 0
                                : unit.mode == AggrMode::PerCpu || unit.mode == AggrMode::PerThread ? 1
                                                                                                    : 2);
        s += "\n" + prefix + sep + unit_prefix(unit, line.cpus);
        for (int i = 0; i < fields; ++i) s += sep;
      } else {
        s += "\n" + prefix + unit_prefix(unit, line.cpus);
      }
    }
    if (csv) {
      if (!shown) {
        s += sep + sep;
        return;
      }
      s += sep + csv_metric_number(m.format, m.value) + sep + skip_spaces(*m.unit);
      return;
    }
    // JSON prints a value even when perf has none to show, and "(null)" for a missing unit.
    s += strf("\"metric-value\" : %f, \"metric-unit\" : \"%s\"}", m.value, m.unit ? m.unit->c_str() : "(null)");
  };

  if (line.state != CountState::Counted) {
    const char* what = line.state == CountState::NotSupported ? kNotSupported : kNotCounted;
    if (line.state == CountState::NotCounted) note_not_counted(event);
    if (json)
      s += strf("\"counter-value\" : \"%s\", \"unit\" : \"%s\", \"event\" : \"%s\", ", what, eu.unit.c_str(),
                event.name.c_str());
    else if (csv)
      s += what + sep + eu.unit + sep + event.name;
    else
      s += strf("%18s%s%-*s%s%-25s", what, sep.c_str(), unit_width_, eu.unit.c_str(), sep.c_str(), event.name.c_str());
    if (text) metric(MetricValue{nullptr, std::string(), 0, false});
    noise();
    running();
    if (!text) metric(MetricValue{nullptr, std::string(), 0, false});
    out_ << s << '\n';
    return;
  }

  const bool fraction = std::floor(eu.scale) != eu.scale;
  if (json) {
    s += strf("\"counter-value\" : \"%f\", \"unit\" : \"%s\", \"event\" : \"%s\", ", line.value, eu.unit.c_str(),
              event.name.c_str());
  } else if (csv) {
    s += strf(fraction ? "%.2f" : "%.0f", line.value) + sep + eu.unit + sep + event.name;
  } else {
    std::string number = strf(fraction ? "%.2f" : "%.0f", line.value);
    if (options_.thousands_grouping) number = group_thousands(number);
    s += strf("%18s%s%-*s%s%-32s", number.c_str(), sep.c_str(), unit_width_, eu.unit.c_str(), sep.c_str(),
              event.name.c_str());
  }
  if (!text) {
    noise();
    running();
  }
  for (const MetricValue& m : line.metrics) metric(m);
  if (text) {
    noise();
    running();
  }
  out_ << s << '\n';
}

void StatPrinter::print_block(const AggregatedSnapshot& counts, const std::vector<std::vector<double>>& noise,
                              double wall_time_ns, const std::string& prefix) {
  // The reference counts of each unit, for the metrics.
  std::vector<ShadowStats> fresh(counts.units.size());
  auto shadow = [&](size_t u) -> ShadowStats& {
    return options_.replayed && in_interval_ ? replayed_shadows_[counts.units[u]] : fresh[u];
  };
  for (size_t u = 0; u < counts.units.size(); ++u)
    for (size_t e = 0; e < events_.size(); ++e) {
      const AggregatedCount& c = counts.counts[u][e];
      if (c.state == CountState::NotSupported) continue;
      // An event never read (its group's read failed: a member was left out) gives perf no
      // value to record, so no "/sec" beside the others.
      if (c.state == CountState::NotCounted && c.cpus == 0) continue;
      // perf also records a <not counted> event, as 0.
      shadow(u).record(metric_role(events_[e].event), metric_context(events_[e].event),
                       c.state == CountState::Counted ? c.value : 0.0);
    }

  auto emit = [&](size_t u, size_t e) {
    const AggregatedCount& c = counts.counts[u][e];
    if (c.cpus == 0 && counts.units[u].mode != AggrMode::Global) return;  // the event has no fd there
    Line line;
    line.state = c.state;
    line.cpus = c.cpus;
    line.enabled = c.time_enabled;
    line.running = c.time_running;
    line.value = c.value * event_unit(events_[e].event).scale;
    if (u < noise.size() && e < noise[u].size()) line.noise_percent = noise[u][e];
    if (c.state == CountState::Counted)
      line.metrics = derive_metrics(events_[e], line.value, shadow(u), MetricInputs{wall_time_ns});
    for (MetricValue& m : line.metrics) m.unit = named_metric_unit(m, events_[e], options_.named_metrics);
    print_line(prefix, events_[e], counts.units[u], line);
  };

  if (options_.aggregation == AggrMode::PerThread) {
    // Event by event, its threads by count, highest first (ties in TID order).
    for (size_t e = 0; e < events_.size(); ++e) {
      std::vector<size_t> threads;
      for (size_t u = 0; u < counts.units.size(); ++u) {
        const AggregatedCount& c = counts.counts[u][e];
        const bool zero = c.state != CountState::Counted || c.value == 0;
        if (c.cpus > 0 && !(zero && options_.skip_zero_threads)) threads.push_back(u);
      }
      std::stable_sort(threads.begin(), threads.end(), [&](size_t a, size_t b) {
        return counts.counts[a][e].value > counts.counts[b][e].value;
      });
      for (size_t u : threads) emit(u, e);
    }
  } else if (options_.aggregation == AggrMode::PerCpu || options_.aggregation == AggrMode::Global) {
    // perf prints -A event by event, each on every CPU.
    for (size_t e = 0; e < events_.size(); ++e)
      for (size_t u = 0; u < counts.units.size(); ++u) emit(u, e);
  } else {
    // --per-core/-die/-socket: unit by unit, every event in it.
    for (size_t u = 0; u < counts.units.size(); ++u)
      for (size_t e = 0; e < events_.size(); ++e) emit(u, e);
  }
}

void StatPrinter::print_interval_header() {
  if (options_.format != StatFormat::Text) return;
  // perf repeats the column header every 25 intervals.
  if (intervals_printed_++ % 25 != 0) return;
  const std::string counts = strf("             counts %*s events\n", unit_width_, "unit");
  switch (options_.aggregation) {
    case AggrMode::Global: out_ << "#           time" << counts; break;
    case AggrMode::PerCpu:
      out_ << "#           time CPU    " << strf("                counts %*s events\n", unit_width_, "unit");
      break;
    case AggrMode::PerCore: out_ << "#           time core            cpus" << counts; break;
    case AggrMode::PerDie: out_ << "#           time die          cpus" << counts; break;
    case AggrMode::PerSocket: out_ << "#           time socket cpus" << counts; break;
    case AggrMode::PerNode: out_ << "#           time node   cpus" << counts; break;
    case AggrMode::PerThread:
      out_ << "#           time             comm-pid" << strf("                  counts %*s events\n", unit_width_, "unit");
      break;
  }
}

void StatPrinter::print_interval(uint64_t since_start_ns, const StatSnapshot& delta) {
  std::string prefix;
  const uint64_t ns = since_start_ns;
  if (options_.format == StatFormat::Json)
    prefix = strf("{\"interval\" : %" PRIu64 ".%09" PRIu64 ", ", ns / 1000000000, ns % 1000000000);
  else
    prefix = interval_time(ns) + (options_.format == StatFormat::Text ? std::string(" ") : options_.csv_separator);
  print_interval_header();
  in_interval_ = true;
  const AggregatedSnapshot counts = aggregate(events_, delta, options_.aggregation, topology_);
  const double wall =
      options_.replayed ? 0.0 : static_cast<double>(options_.interval_ns != 0 ? options_.interval_ns : delta.elapsed_ns);
  print_block(counts, {}, wall, prefix);
  in_interval_ = false;
  out_.flush();
}

void StatPrinter::add_run(const StatSnapshot& totals, const RunTimes& times) {
  runs_.push_back(aggregate(events_, totals, options_.aggregation, topology_));
  run_times_.push_back(times);
}

void StatPrinter::print_summary(const std::string& target_description) {
  if (options_.interval && !options_.interval_summary) return;
  const bool text = options_.format == StatFormat::Text;
  if (text) {
    out_ << "\n Performance counter stats for " << target_description;
    if (options_.runs > 1) out_ << " (" << options_.runs << " runs)";
    out_ << ":\n\n";
  }

  // The mean of every run, unit by unit (units matched by identity), and its noise.
  AggregatedSnapshot mean;
  for (const AggregatedSnapshot& run : runs_)
    for (const AggrUnit& u : run.units)
      if (std::find(mean.units.begin(), mean.units.end(), u) == mean.units.end()) mean.units.push_back(u);
  std::sort(mean.units.begin(), mean.units.end());
  mean.counts.assign(mean.units.size(), std::vector<AggregatedCount>(events_.size()));
  std::vector<std::vector<double>> noise(mean.units.size(), std::vector<double>(events_.size(), 0.0));
  for (size_t u = 0; u < mean.units.size(); ++u) {
    for (size_t e = 0; e < events_.size(); ++e) {
      Stats value, enabled, running;
      AggregatedCount& m = mean.counts[u][e];
      bool counted = false, supported = true;
      for (const AggregatedSnapshot& run : runs_) {
        auto it = std::find(run.units.begin(), run.units.end(), mean.units[u]);
        if (it == run.units.end()) continue;
        const AggregatedCount& c = run.counts[static_cast<size_t>(it - run.units.begin())][e];
        if (c.state == CountState::NotSupported) supported = false;
        counted = counted || c.state == CountState::Counted;
        value.add(c.state == CountState::Counted ? c.value : 0.0);
        enabled.add(static_cast<double>(c.time_enabled));
        running.add(static_cast<double>(c.time_running));
        m.cpus = c.cpus;
      }
      m.state = !supported ? CountState::NotSupported : counted ? CountState::Counted : CountState::NotCounted;
      m.value = value.mean;
      m.time_enabled = static_cast<uint64_t>(std::llround(enabled.mean));
      m.time_running = static_cast<uint64_t>(std::llround(running.mean));
      noise[u][e] = relative_percent(value.stddev_of_mean(), value.mean);
    }
  }
  Stats wall;
  for (const RunTimes& t : run_times_) wall.add(static_cast<double>(t.elapsed_ns));
  print_block(mean, noise, wall.mean, "");

  if (text) print_footer();
  out_.flush();
}

// perf's is_mixed_hw_group, asked of a not-counted event: only a group's leader (the event
// with members) qualifies, in an event list of mixed PMU types.
void StatPrinter::note_not_counted(const StatEvent& event) {
  some_not_counted_ = true;
  if (!pmu_types_mixed_ || mixed_group_not_counted_) return;
  const auto index = static_cast<int>(&event - events_.data());
  mixed_group_not_counted_ = std::any_of(events_.begin(), events_.end(), [&](const StatEvent& other) {
    return other.group_leader == index && &other != &event;
  });
}

void StatPrinter::print_footer() {
  Stats wall;
  for (const RunTimes& t : run_times_) wall.add(static_cast<double>(t.elapsed_ns));
  const double avg = wall.mean / 1e9;
  if (!options_.null_run) out_ << '\n';
  if (options_.runs == 1) {
    out_ << strf(" %17.9f seconds time elapsed", avg);
    if (options_.show_rusage && !run_times_.empty()) {
      const RunTimes& t = run_times_.back();
      out_ << "\n\n" << strf(" %17.9f seconds user\n", t.user_seconds) << strf(" %17.9f seconds sys\n", t.system_seconds);
    }
  } else {
    const double sd = wall.stddev_of_mean() / 1e9;
    // perf shows two digits more than the first significant digit of the stddev.
    const int precision = (sd > 1 ? 0 : sd > 0 ? static_cast<int>(std::lround(std::ceil(-std::log10(sd)))) : 0) + 2;
    out_ << strf(" %17.*f +- %.*f seconds time elapsed", precision, avg, precision, sd);
    const double pct = relative_percent(sd, avg);
    if (pct != 0) out_ << strf("  ( +-%6.2f%% )", pct);
  }
  out_ << "\n\n";
  if (some_not_counted_ && options_.nmi_watchdog_on != nullptr && options_.nmi_watchdog_on())
    out_ << "Some events weren't counted. Try disabling the NMI watchdog:\n"
            "\techo 0 > /proc/sys/kernel/nmi_watchdog\n"
            "\tperf stat ...\n"
            "\techo 1 > /proc/sys/kernel/nmi_watchdog\n";
  if (mixed_group_not_counted_) out_ << "The events in group usually have to be from the same PMU. Try reorganizing the group.\n";
}

}  // namespace vperf::stat
