#include "report/report_sort_keys.h"

#include <array>
#include <cctype>
#include <utility>

namespace vperf::report {

namespace {

// perf's sort dimension names in the order perf's prefix match tries them.
constexpr std::array<std::pair<std::string_view, SortKey>, 5> kPerfNames{{
    {"pid", SortKey::Pid}, {"comm", SortKey::Comm}, {"dso", SortKey::Dso}, {"symbol", SortKey::Sym}, {"cpu", SortKey::Cpu}}};

bool is_prefix_nocase(std::string_view prefix, std::string_view word) {
  if (prefix.size() > word.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(prefix[i])) != word[i]) return false;
  return true;
}

}  // namespace

Result<std::vector<SortKey>> parse_sort_keys(std::string_view text) {
  std::vector<SortKey> keys;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(", ", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    bool found = false;
    if (word == "tid" || word == "trace") {
      keys.push_back(word == "tid" ? SortKey::Tid : SortKey::Trace);
      found = true;
    }
    for (const auto& [name, key] : kPerfNames) {
      if (found) break;
      if (is_prefix_nocase(word, name)) {
        keys.push_back(key);
        found = true;
      }
    }
    if (!found) return Error{"unknown sort key '" + std::string(word) + "'"};
  }
  if (keys.empty()) return Error{"no sort key given"};
  return keys;
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
