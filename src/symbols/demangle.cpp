#include "symbols/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace vperf::symbols {
namespace {

// Position just after the "operator" token that starts at `i`, skipping its symbol
// ("operator<<", "operator()", "operator<=>"), so the brackets in it are not nesting. The
// longest symbol wins; the demangler writes a space between an operator ending in '<' or '>'
// and its template arguments ("operator< <char>"), which is skipped too.
size_t skip_operator(std::string_view s, size_t i) {
  size_t j = i + 8;  // strlen("operator")
  if (j < s.size() && s[j] == ' ') {  // "operator new[]", "operator delete", "operator bool"
    while (j < s.size() && s[j] != '(') ++j;
    return j;
  }
  static constexpr std::string_view kSymbols[] = {
      "<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=",
      "*=", "/=", "%=", "&=", "|=", "^=", "->", "<", ">", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", ","};
  for (std::string_view symbol : kSymbols) {
    if (s.substr(j).starts_with(symbol)) {
      j += symbol.size();
      if (s.substr(j).starts_with(" <")) ++j;
      return j;
    }
  }
  return j;
}

bool is_operator_at(std::string_view s, size_t i) {
  if (s.substr(i, 8) != "operator") return false;
  return i == 0 || s[i - 1] == ':' || s[i - 1] == ' ';
}

// The demangled text before its clone suffixes (" [clone .isra.0] [clone .cold]").
std::string_view without_clone_suffixes(std::string_view s) {
  size_t clone = s.find(" [clone .");
  return clone == std::string_view::npos ? s : s.substr(0, clone);
}

// A special name (_ZT: vtables, typeinfo, thunks; _ZG: guard variables, transaction clones,
// reference temporaries) names an entity through an inner encoding, which the demangler prints
// whole, parameters included, even without DMGL_PARAMS.
bool is_special_name(std::string_view mangled) { return mangled.starts_with("_ZT") || mangled.starts_with("_ZG"); }

// `rest` without the cv- and ref-qualifiers (and spaces) at its start, which may follow a
// function's parameter list.
std::string_view after_qualifiers(std::string_view rest) {
  for (bool matched = true; matched && !rest.empty();) {
    matched = false;
    for (std::string_view word : {" ", "const", "volatile", "restrict", "noexcept", "&&", "&"}) {
      if (rest.starts_with(word)) {
        rest.remove_prefix(word.size());
        matched = true;
        break;
      }
    }
  }
  return rest;
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
  s = without_clone_suffixes(s);
  // A function's text is "[RETURN ]NAME(PARAMETERS)[ QUALIFIERS]". Walk once, tracking the
  // brackets, and remember the last parenthesised group at depth 0 and the spaces at depth 0:
  // the group is the parameter list if only qualifiers follow it (the name of a local entity,
  // "f(int)::x", keeps its function's parameters), and the last space before it ends the return
  // type (which may hold parentheses itself: "decltype(auto)", "f()::T*").
  int angle = 0, paren = 0, brace = 0;
  size_t group_open = std::string_view::npos, group_close = std::string_view::npos, open = 0;
  // The last space at depth 0 so far, the one before the group now open, and the one before
  // the last group: where the return type ends. (One walk, no list: a DSO's every C++ symbol
  // comes through here when its table is loaded.)
  size_t last_space = std::string_view::npos, space_at_open = std::string_view::npos, space_before_group = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == 'o' && brace == 0 && is_operator_at(s, i)) {
      i = skip_operator(s, i) - 1;
      continue;
    }
    if (c == '{') ++brace;
    else if (c == '}' && brace > 0) --brace;
    else if (brace > 0) continue;  // "{lambda(int)#1}" is one name
    else if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (angle > 0) continue;
    else if (c == '(') {
      // "(anonymous namespace)" is part of a name, not a parameter list.
      if (paren == 0 && s.substr(i).starts_with("(anonymous namespace)")) {
        i += std::string_view("(anonymous namespace)").size() - 1;
        continue;
      }
      if (paren++ == 0) {
        open = i;
        space_at_open = last_space;
      }
    } else if (c == ')' && paren > 0) {
      if (--paren == 0) {
        group_open = open;
        group_close = i;
        space_before_group = space_at_open;
      }
    } else if (c == ' ' && paren == 0 && !(i > 0 && s[i - 1] == ')' && after_qualifiers(s.substr(i)).starts_with("::"))) {
      // (A local entity's function keeps its qualifiers: "C::f() const::{lambda()#1}".)
      last_space = i;
    }
  }
  if (group_open == std::string_view::npos || !after_qualifiers(s.substr(group_close + 1)).empty()) return std::string(s);
  std::string_view name = s.substr(0, group_open);
  if (space_before_group != std::string_view::npos) name = name.substr(space_before_group + 1);
  return std::string(name);
}

std::string demangle(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  if (name.ends_with("@plt")) return demangle(name.substr(0, name.size() - 4)) + "@plt";
  std::string full = demangle_with_parameters(name);
  if (full == name) return full;
  if (is_special_name(name)) return std::string(without_clone_suffixes(full));
  return strip_parameters(full);
}

}  // namespace vperf::symbols
