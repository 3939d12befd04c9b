#pragma once
// perf's name filters (--filter of perf probe -F, "strfilter"): globs joined by '&' (and), '|'
// (or), negated by '!', grouped with parentheses; '&' binds tighter than '|'.
//   "!_* & !*@plt"   every name that starts with no '_' and is no PLT entry (perf probe's default)
//   "malloc|free|*alloc*"
// Spaces around operators are ignored; a glob is the text between operators.
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"

namespace vperf {

class NameFilter {
 public:
  // An Error names the position and what was expected there.
  static Result<NameFilter> parse(std::string_view text);
  bool matches(std::string_view name) const;

  struct Node;

 private:
  explicit NameFilter(std::shared_ptr<const Node> root) : root_(std::move(root)) {}
  std::shared_ptr<const Node> root_;
};

}  // namespace vperf
