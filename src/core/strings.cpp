#include "core/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace vperf {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

static char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equals_nocase(s.substr(0, prefix.size()), prefix);
}

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return lower(x) == lower(y);
         });
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<uint64_t> parse_u64_base(std::string_view s, int base) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return parse_u64_base(s.substr(2), 16);
  return parse_u64_base(s, 10);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hex_padded(uint64_t v, int width) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

bool has_glob(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with single-star backtracking: linear in practice, no recursion.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    // A '*' in the pattern is a wildcard even where the text has a '*' too.
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                       size_t limit) {
  struct Scored {
    size_t score;
    const std::string* name;
  };
  // Only suggest names that are plausibly a typo: distance at most ~40% of the wanted length.
  // Names of one or two characters have no plausible typo; names longer than any event name
  // are not typos either, and would cost an edit distance of their length against every name.
  constexpr size_t kLongestPlausibleName = 256;
  if (wanted.size() < 3 || wanted.size() > kLongestPlausibleName) return {};
  size_t max_distance = std::max<size_t>(2, wanted.size() * 2 / 5);
  std::string wanted_lower = to_lower(wanted);
  std::vector<Scored> scored;
  scored.reserve(candidates.size());
  for (const auto& c : candidates) {
    bool contains = to_lower(c).find(wanted_lower) != std::string::npos;
    size_t length_gap = c.size() > wanted.size() ? c.size() - wanted.size() : wanted.size() - c.size();
    if (!contains && length_gap > max_distance) continue;  // the distance is at least the gap
    size_t d = edit_distance(wanted, c);
    // A candidate containing the wanted text is a strong hint even when it is much longer.
    if (contains) d = std::min<size_t>(d, 1);
    scored.push_back({d, &c});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) {
    return x.score != y.score ? x.score < y.score : *x.name < *y.name;
  });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() == limit || s.score > max_distance) break;
    if (std::find(out.begin(), out.end(), *s.name) == out.end()) out.push_back(*s.name);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string join_alternatives(const std::vector<std::string>& names) {
  if (names.size() <= 1) return names.empty() ? std::string() : names[0];
  std::vector<std::string> head(names.begin(), names.end() - 1);
  return join(head, ", ") + " or " + names.back();
}

}  // namespace vperf
