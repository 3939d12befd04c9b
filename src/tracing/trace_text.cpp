#include "tracing/trace_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "core/strings.h"

namespace vperf::tracing {

void TraceLineSplitter::feed(std::string_view text) {
  pending_ += text;
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    out_(std::string_view(pending_).substr(start, nl - start));
  pending_.erase(0, start);
}

void TraceLineSplitter::finish() {
  if (!pending_.empty()) out_(pending_);
  pending_.clear();
}

uint64_t events_lost_in_cpu_stats(std::string_view stats) {
  uint64_t total = 0;
  for (std::string_view line : split(stats, '\n'))
    for (std::string_view key : {"overrun: ", "dropped events: "})
      if (line.starts_with(key))
        if (std::optional<uint64_t> n = parse_u64(trim(line.substr(key.size())))) total += *n;
  return total;
}

namespace {

// error_log's entries, each its lines: an entry starts with "[ TIMESTAMP]"; continuation lines
// ("  Command: ...", "    ^") do not. Lines before the first entry belong to none.
std::vector<std::vector<std::string_view>> error_log_entries(std::string_view error_log) {
  std::vector<std::vector<std::string_view>> entries;
  for (std::string_view line : split(error_log, '\n')) {
    if (trim(line).empty()) continue;
    if (line.starts_with("[")) entries.emplace_back();
    if (!entries.empty()) entries.back().push_back(line);
  }
  return entries;
}

// An entry as one line: its lines joined with " | ", the timestamp left out.
std::string shown_entry(const std::vector<std::string_view>& lines) {
  std::string joined;
  for (std::string_view line : lines) {
    if (!joined.empty()) joined += " | ";
    std::string_view shown = trim(line);
    if (shown.starts_with("[")) {
      const size_t close = shown.find(']');
      shown = close == std::string_view::npos ? std::string_view() : trim(shown.substr(close + 1));
    }
    joined += shown;
  }
  return joined;
}

}  // namespace

std::string last_error_log_entry(std::string_view error_log) {
  const std::vector<std::vector<std::string_view>> entries = error_log_entries(error_log);
  return entries.empty() ? std::string() : shown_entry(entries.back());
}

std::string error_log_entry_of_write(std::string_view before, std::string_view after, std::string_view command) {
  const std::vector<std::vector<std::string_view>> old_entries = error_log_entries(before);
  const std::vector<std::vector<std::string_view>> new_entries = error_log_entries(after);
  std::vector<const std::vector<std::string_view>*> added;
  for (const std::vector<std::string_view>& entry : new_entries)
    if (std::find(old_entries.begin(), old_entries.end(), entry) == old_entries.end()) added.push_back(&entry);
  if (added.empty()) return {};
  // Another writer's refusal could land meanwhile: the entry that quotes this command is the
  // write's (the kernel may quote it in part: a hist trigger's, a probe's words re-joined).
  const std::string_view wanted = trim(command);
  for (auto it = added.rbegin(); it != added.rend(); ++it)
    for (std::string_view line : **it) {
      const std::string_view text = trim(line);
      if (!text.starts_with("Command:")) continue;
      const std::string_view quoted = trim(text.substr(8));
      if (!quoted.empty() && !wanted.empty() && (wanted.find(quoted) != std::string_view::npos || quoted.find(wanted) != std::string_view::npos))
        return shown_entry(**it);
    }
  return shown_entry(*added.back());
}

void LatencyHistogram::add_line(std::string_view line) {
  if (line.empty() || line.front() == '#') return;
  // The CPU column ends at ')'; the duration is the first number after it, before the '|'.
  size_t at = line.find(')');
  at = at == std::string_view::npos ? 0 : at + 1;
  while (at < line.size() && !std::isdigit(static_cast<unsigned char>(line[at])) && line[at] != '|') ++at;
  if (at >= line.size() || line[at] == '|') return;
  const std::string number(line.substr(at, std::min<size_t>(32, line.size() - at)));
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end == number.c_str() || !std::string_view(end).starts_with(" us")) return;
  if (nanoseconds_) value *= 1000;
  if (std::isnan(value)) return;
  // Clamped before the conversion: a line's "1e999 us" is infinite, which no int holds.
  const double log = value >= 1 ? std::log2(value) : 0;
  const int bucket = log >= kBuckets - 1 ? kBuckets - 1 : static_cast<int>(log);
  ++buckets_[bucket];
}

uint64_t LatencyHistogram::total() const {
  uint64_t sum = 0;
  for (uint64_t n : buckets_) sum += n;
  return sum;
}

std::string LatencyHistogram::table() const {
  const uint64_t sum = total();
  if (sum == 0) return "No data found\n";
  constexpr int kBar = 46;  // perf's: the table fits 80 columns
  const std::string hashes(kBar, '#');
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "# %14s | %10s | %-*s |\n", "  DURATION    ", "COUNT", kBar, "GRAPH");
  out += line;
  auto row = [&](const std::string& range, uint64_t count) {
    const int bar = static_cast<int>(count * kBar / sum);
    std::snprintf(line, sizeof line, "  %s | %10llu | %.*s%*s |\n", range.c_str(), static_cast<unsigned long long>(count), bar,
                  hashes.c_str(), kBar - bar, "");
    out += line;
  };
  const char* small = nanoseconds_ ? "ns" : "us";
  char range[48];
  std::snprintf(range, sizeof range, "%4d - %-4d %s", 0, 1, small);
  row(range, buckets_[0]);
  for (int i = 1; i < kBuckets - 1; ++i) {
    int start = 1 << (i - 1), stop = 1 << i;
    const char* unit = small;
    if (start >= 1024) {
      start >>= 10;
      stop >>= 10;
      unit = nanoseconds_ ? "us" : "ms";
    }
    std::snprintf(range, sizeof range, "%4d - %-4d %s", start, stop, unit);
    row(range, buckets_[i]);
  }
  std::snprintf(range, sizeof range, "%4d - %-4s %s", 1, "...", nanoseconds_ ? "ms" : " s");
  row(range, buckets_[kBuckets - 1]);
  return out;
}

std::string with_task_name(std::string_view line, const std::function<std::optional<std::string>(int pid)>& comm_of) {
  // "           <...>-1234    [000] ...": the comm right-aligned in 16 columns, '-', the pid.
  constexpr std::string_view kUnknown = "<...>-";
  const size_t at = line.find(kUnknown);
  if (at == std::string_view::npos || at + kUnknown.size() - 1 != 16 || line.find_first_not_of(' ') != at) return std::string(line);
  size_t end = at + kUnknown.size();
  int pid = 0;
  while (end < line.size() && end - (at + kUnknown.size()) < 9 && line[end] >= '0' && line[end] <= '9') pid = pid * 10 + (line[end++] - '0');
  if (end == at + kUnknown.size()) return std::string(line);
  std::optional<std::string> comm = comm_of(pid);
  if (!comm || comm->empty() || comm->size() > 16) return std::string(line);
  return std::string(16 - comm->size(), ' ') + *comm + std::string(line.substr(at + kUnknown.size() - 1));
}

}  // namespace vperf::tracing
