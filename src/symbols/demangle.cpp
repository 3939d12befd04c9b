#include "symbols/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace vperf::symbols {
namespace {

// Position just after the "operator" token that starts at `i`, skipping its symbol
// ("operator<<", "operator()", "operator<=>"), so the brackets in it are not nesting.
size_t skip_operator(std::string_view s, size_t i) {
  size_t j = i + 8;  // strlen("operator")
  if (s.substr(j, 2) == "()" || s.substr(j, 2) == "[]") return j + 2;
  if (j < s.size() && s[j] == ' ') {  // "operator new[]", "operator delete", "operator bool"
    while (j < s.size() && s[j] != '(') ++j;
    return j;
  }
  while (j < s.size() && std::string_view("<>=!+-*/%^&|~,").find(s[j]) != std::string_view::npos) ++j;
  return j;
}

bool is_operator_at(std::string_view s, size_t i) {
  if (s.substr(i, 8) != "operator") return false;
  return i == 0 || s[i - 1] == ':' || s[i - 1] == ' ';
}

}  // namespace

std::string demangle_with_parameters(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  std::string owned(name);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(owned.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
  if (status != 0 || !out) return owned;
  return std::string(out.get());
}

std::string strip_parameters(std::string_view s) {
  // A clone suffix " [clone .cold]" (possibly several) is kept and put back at the end.
  std::string_view suffix;
  if (size_t clone = s.find(" [clone "); clone != std::string_view::npos) {
    suffix = s.substr(clone);
    s = s.substr(0, clone);
  }
  // Walk once at bracket depth 0, remembering where the last top-level '(' opens (the
  // parameter list) and the last top-level space before it (the end of a return type).
  int angle = 0, paren = 0, brace = 0;
  size_t params = std::string_view::npos, last_space = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (is_operator_at(s, i)) {
      i = skip_operator(s, i) - 1;
      continue;
    }
    char c = s[i];
    if (c == '{') ++brace;
    else if (c == '}' && brace > 0) --brace;
    else if (brace > 0) continue;  // "{lambda(int)#1}" is one name
    else if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == '(') {
      if (angle == 0 && paren == 0) {
        // "(anonymous namespace)" is part of a name, not a parameter list.
        if (s.substr(i).starts_with("(anonymous namespace)")) {
          i += std::string_view("(anonymous namespace)").size() - 1;
          continue;
        }
        params = i;
      }
      ++paren;
    } else if (c == ')' && paren > 0) --paren;
    else if (c == ' ' && angle == 0 && paren == 0 && params == std::string_view::npos) last_space = i;
  }
  std::string_view name = params == std::string_view::npos ? s : s.substr(0, params);
  if (last_space != std::string_view::npos && last_space < name.size()) name = name.substr(last_space + 1);
  std::string out(name);
  out += suffix;
  return out;
}

std::string demangle(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  if (name.ends_with("@plt")) return demangle(name.substr(0, name.size() - 4)) + "@plt";
  std::string full = demangle_with_parameters(name);
  if (full == name) return full;
  return strip_parameters(full);
}

}  // namespace vperf::symbols
