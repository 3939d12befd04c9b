#include "report/report_sort_keys.h"

#include <algorithm>
#include <array>
#include <optional>
#include <cctype>
#include <utility>

namespace vperf::report {

namespace {

// perf's sort dimension names in the order perf's prefix match tries them.
constexpr std::array<std::pair<std::string_view, SortKey>, 6> kPerfNames{{{"pid", SortKey::Pid},
                                                                         {"comm", SortKey::Comm},
                                                                         {"dso", SortKey::Dso},
                                                                         {"symbol", SortKey::Sym},
                                                                         {"cpu", SortKey::Cpu},
                                                                         {"srcline", SortKey::Srcline}}};

// perf's hpp format names, in the order its prefix match tries them after the sort keys.
constexpr std::array<std::pair<std::string_view, FieldKind>, 8> kPerfFieldNames{{{"overhead", FieldKind::Overhead},
                                                                               {"overhead_sys", FieldKind::OverheadSys},
                                                                               {"overhead_us", FieldKind::OverheadUs},
                                                                               {"overhead_guest_sys", FieldKind::OverheadGuestSys},
                                                                               {"overhead_guest_us", FieldKind::OverheadGuestUs},
                                                                               {"overhead_children", FieldKind::Children},
                                                                               {"sample", FieldKind::Samples},
                                                                               {"period", FieldKind::Period}}};

bool is_prefix_nocase(std::string_view prefix, std::string_view word) {
  if (prefix.size() > word.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(prefix[i])) != word[i]) return false;
  return true;
}

// The words of a perf list: separated by commas or spaces, empty ones skipped.
std::vector<std::string_view> list_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(", ", pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) words.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

std::optional<SortKey> sort_key_named(std::string_view word) {
  if (word == "tid") return SortKey::Tid;
  if (word == "trace") return SortKey::Trace;
  for (const auto& [name, key] : kPerfNames)
    if (is_prefix_nocase(word, name)) return key;
  return std::nullopt;
}

}  // namespace

Result<std::vector<SortKey>> parse_sort_keys(std::string_view text) {
  std::vector<SortKey> keys;
  for (std::string_view word : list_words(text)) {
    std::optional<SortKey> key = sort_key_named(word);
    if (!key) return Error{"unknown sort key '" + std::string(word) + "'"};
    keys.push_back(*key);
  }
  if (keys.empty()) return Error{"no sort key given"};
  return keys;
}

Result<std::vector<OutputField>> parse_output_fields(std::string_view text) {
  std::vector<OutputField> fields;
  for (std::string_view word : list_words(text)) {
    std::optional<OutputField> field;
    if (std::optional<SortKey> key = sort_key_named(word)) field = OutputField{FieldKind::Key, *key};
    for (const auto& [name, kind] : kPerfFieldNames)
      if (!field && is_prefix_nocase(word, name)) field = OutputField{kind};
    if (!field) return Error{"unknown output field '" + std::string(word) + "'"};
    if (std::find(fields.begin(), fields.end(), *field) == fields.end()) fields.push_back(*field);
  }
  if (fields.empty()) return Error{"no output field given"};
  return fields;
}

std::string_view field_header(OutputField field) {
  switch (field.kind) {
    case FieldKind::Overhead: return "Overhead";
    case FieldKind::OverheadSys: return "sys";
    case FieldKind::OverheadUs: return "usr";
    case FieldKind::OverheadGuestSys: return "guest sys";
    case FieldKind::OverheadGuestUs: return "guest usr";
    case FieldKind::Children: return "Children";
    case FieldKind::Samples: return "Samples";
    case FieldKind::Period: return "Period";
    case FieldKind::Key: return sort_key_header(field.key);
  }
  return "?";
}

std::string_view sort_key_name(SortKey key) {
  switch (key) {
    case SortKey::Comm: return "comm";
    case SortKey::Pid: return "pid";
    case SortKey::Tid: return "tid";
    case SortKey::Dso: return "dso";
    case SortKey::Sym: return "sym";
    case SortKey::Cpu: return "cpu";
    case SortKey::Trace: return "trace";
    case SortKey::Srcline: return "srcline";
  }
  return "?";
}

std::string_view sort_key_header(SortKey key) {
  switch (key) {
    case SortKey::Comm: return "Command";
    case SortKey::Pid: return "    Pid:Command";
    case SortKey::Tid: return "    Tid:Command";
    case SortKey::Dso: return "Shared Object";
    case SortKey::Sym: return "Symbol";
    case SortKey::Cpu: return "CPU";
    case SortKey::Trace: return "Trace output";
    case SortKey::Srcline: return "Source:Line";
  }
  return "?";
}

std::string sort_keys_text(const std::vector<SortKey>& keys) {
  std::string text;
  for (SortKey key : keys) {
    if (!text.empty()) text += ',';
    text += sort_key_name(key);
  }
  return text;
}

}  // namespace vperf::report
