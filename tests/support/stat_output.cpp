#include "support/stat_output.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace vperf::test {

std::vector<std::string> split_fields(std::string_view text, std::string_view sep) {
  std::vector<std::string> fields;
  if (sep.empty()) return {std::string(text)};
  size_t start = 0;
  for (;;) {
    size_t at = text.find(sep, start);
    if (at == std::string_view::npos) {
      fields.emplace_back(text.substr(start));
      return fields;
    }
    fields.emplace_back(text.substr(start, at - start));
    start = at + sep.size();
  }
}

std::vector<std::string> count_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    lines.push_back(line);
  }
  return lines;
}

std::vector<CsvLine> parse_csv(const std::string& text, std::string_view sep) {
  std::vector<CsvLine> out;
  for (const std::string& line : count_lines(text)) out.push_back({line, split_fields(line, sep)});
  return out;
}

std::optional<CsvLine> find_csv_event(const std::vector<CsvLine>& lines, const std::string& event,
                                      std::size_t event_field) {
  for (const CsvLine& l : lines)
    if (l.fields.size() > event_field && l.fields[event_field] == event) return l;
  return std::nullopt;
}

std::optional<double> parse_number(std::string_view field) {
  if (field.empty()) return std::nullopt;
  for (char c : field)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return std::nullopt;
  return std::strtod(std::string(field).c_str(), nullptr);
}

std::optional<TextRow> parse_text_row(const std::string& line) {
  for (const char* footer : {" seconds time elapsed", " seconds user", " seconds sys"})
    if (line.find(footer) != std::string::npos) return std::nullopt;
  std::istringstream words(line);
  std::vector<std::string> w;
  std::string word;
  while (words >> word) {
    if (word == "#") break;  // the metric column
    w.push_back(word);
  }
  if (w.empty()) return std::nullopt;
  TextRow row;
  row.line = line;
  size_t i = 0;
  // An aggregation prefix: "CPU0", "S0-D0-C0 1", "S0-D0 2", "S0 2".
  if (w[0].starts_with("CPU") || (w[0].size() > 1 && w[0][0] == 'S' && std::isdigit(static_cast<unsigned char>(w[0][1])))) {
    row.prefix = w[0];
    i = 1;
    if (!w[0].starts_with("CPU") && w.size() > 1 && parse_number(w[1])) {
      row.prefix += " " + w[1];
      i = 2;
    }
  }
  if (i >= w.size()) return std::nullopt;
  if (w[i] == "<not" && i + 1 < w.size()) {  // "<not supported>" / "<not counted>"
    row.value = w[i] + " " + w[i + 1];
    i += 2;
  } else {
    std::string digits = w[i];
    std::erase(digits, ',');  // thousands grouping
    if (!parse_number(digits)) return std::nullopt;
    row.value = digits;
    ++i;
  }
  if (i < w.size() && (w[i] == "msec" || w[i] == "ns" || w[i] == "Joules")) row.unit = w[i++];
  if (i >= w.size()) return std::nullopt;
  row.event = w[i];
  row.has_noise = line.find("( +-") != std::string::npos;
  return row;
}

std::vector<TextRow> parse_text_rows(const std::string& text) {
  std::vector<TextRow> rows;
  for (const std::string& line : count_lines(text))
    if (auto row = parse_text_row(line)) rows.push_back(*row);
  return rows;
}

}  // namespace vperf::test
