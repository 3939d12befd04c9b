#pragma once
// Reading `perf stat` / `vperf stat` output in tests: the -x SEP (CSV) lines, the --json lines
// and the rows of the text table, so both programs' output can be compared field by field.
#include <boost/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::test {

// `text` split on every occurrence of `sep` (empty fields kept: "a,,b" -> {"a", "", "b"}).
std::vector<std::string> split_fields(std::string_view text, std::string_view sep);

// The lines of `text` that carry counts: not empty, not comments ("# started on", "#  time").
std::vector<std::string> count_lines(const std::string& text);

// One -x line and its fields. The event name is field 2 in plain output, one further for each
// leading column (-I time, -A CPU).
struct CsvLine {
  std::string line;
  std::vector<std::string> fields;
};
std::vector<CsvLine> parse_csv(const std::string& text, std::string_view sep = ",");

// The first CSV line whose field `event_field` is `event`, or nullopt.
std::optional<CsvLine> find_csv_event(const std::vector<CsvLine>& lines, const std::string& event,
                                      std::size_t event_field = 2);

// A count field as a number ("12345", "0.33"); nullopt for "<not supported>", "<not counted>",
// or anything that is not wholly a decimal number.
std::optional<double> parse_number(std::string_view field);

// A row of the text table: "  12345      syscalls:sys_enter_getppid   # ...". `prefix` is the
// aggregation column ("CPU0") when there is one. nullopt for the header, footer and blank lines.
struct TextRow {
  std::string line;
  std::string prefix;
  std::string value;  // "12345", "0.36", "<not supported>" (thousands separators removed)
  std::string unit;   // "msec" or ""
  std::string event;
  bool has_noise = false;  // "( +- x.xx% )"
};
std::optional<TextRow> parse_text_row(const std::string& line);
std::vector<TextRow> parse_text_rows(const std::string& text);

// Each --json line parsed (comment and blank lines skipped); a line that does not parse gives
// a null value, so the caller can report it. Inline: only the integration tests link Boost.JSON.
inline std::vector<boost::json::value> parse_json_lines(const std::string& text) {
  std::vector<boost::json::value> out;
  for (const std::string& line : count_lines(text)) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(line, ec);
    out.push_back(ec ? boost::json::value(nullptr) : std::move(v));
  }
  return out;
}

}  // namespace vperf::test
