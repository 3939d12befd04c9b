#pragma once
// A perf probe PROBEDEF, parsed with perf 6.1's grammar and rules (`perf probe --help`), before
// anything is looked up: which function, file, line, offset or pattern, under which event name,
// with which arguments. Resolving it (DWARF, symbols, SDT notes) and writing uprobe_events or
// kprobe_events come after, from this value.
//
//   [[GROUP:]EVENT=]FUNC[@SRC][+OFF|%return|:RLN|;PATTERN] [ARG ...]
//   [[GROUP:]EVENT=]SRC:ALN [ARG ...]        [[GROUP:]EVENT=]SRC;PATTERN [ARG ...]
//   [[GROUP:]EVENT=]0xADDRESS [ARG ...]      (an address in the -x file)
//
// The point is a source file, not a function, only when the text before the first ':' or ';'
// holds a '.' and the whole point has none of "+@%" (so "main.c:10" is a file and line, and
// "foo.isra.0+4" a function). A lazy pattern (after ';') runs to the end of the point, ';'s
// included. Each argument is
//   [NAME=]EXPR[@user][:TYPE]
// where EXPR is a variable with its fields (sk->__sk_common.skc_state, arr[2]), $retval,
// $params, $vars, $comm, a register (%ax), a symbol (@jiffies), an immediate or a fetch
// (+0($retval), -8(%sp)); TYPE is u8..u64, s8..s64, x8..x64, string, ustring or b<bits>@<bit>/<size>.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::tracing {

struct ProbeArgument {
  std::string name;        // NAME= if given, else empty (the event field is named after EXPR)
  std::string expression;  // EXPR as written: "sk->__sk_common.skc_state", "$retval", "%ax"
  std::string type;        // TYPE after ':' ("u64", "string"), empty for the default
  bool user_access = false;  // "@user": the address is in user memory (kprobes)
  // The variable EXPR starts with and the fields after it, when EXPR is one (perf's
  // perf_probe_arg_field list): "sk" then {"->__sk_common", ".skc_state"}; "arr" then {"[2]"}.
  // Empty for registers, special values, symbols and fetches.
  std::string variable;
  std::vector<std::string> fields;
};

struct ProbeDefinition {
  std::string group;      // empty: the default (probe, probe_<exe>)
  std::string event;      // empty: named after the function (and __return)
  std::string function;   // empty for a SRC:ALN or SRC;PATTERN point
  std::optional<uint64_t> address;  // FUNC given as 0xADDRESS
  std::string file;       // SRC (after '@', or the point itself)
  std::optional<uint64_t> line;    // :RLN (relative to FUNC) or :ALN (in SRC)
  std::optional<uint64_t> offset;  // +OFF bytes from FUNC's entry
  std::string lazy_pattern;        // ;PATTERN
  bool return_probe = false;       // %return
  std::vector<ProbeArgument> arguments;
};

// Parses one PROBEDEF (the point and its arguments, separated by spaces, as one string or as
// perf joins its words). An Error says what perf would say and how to write it instead.
Result<ProbeDefinition> parse_probe_definition(std::string_view text);

// perf probe -L's LINERANGE: FUNC[@SRC][:RLN[+NUM|-RLN2]] (lines relative to FUNC's
// declaration) or SRC[:ALN[+NUM|-ALN2]] (a file's lines). As perf: a point is a file when its
// name holds a '.' (and no '@'); a range without an end runs to the function's last line (plus
// perf's two lines of context); +NUM is NUM lines from the start.
struct LineRange {
  std::string function;  // empty for a file range
  std::string file;      // SRC, or FUNC's @SRC
  uint64_t start = 0;
  std::optional<uint64_t> end;  // inclusive
};
Result<LineRange> parse_line_range(std::string_view text);

// perf's rule for event and group names: a C identifier ([A-Za-z_][A-Za-z0-9_]*).
bool is_probe_event_name(std::string_view name);

// A uprobe argument's "@SYMBOL[+N|-N]" fetches (kprobes take symbols, as in "@jiffies"; uprobes
// refuse them) rewritten as uprobes' "@+OFFSET", each offset from `offset_of(SYMBOL, N)`; an
// Error from it, or for an addend that is not a number, is the result. Only '@' followed by a
// letter or '_' starts a symbol: "@+OFFSET" is left as written.
Result<std::string> rewrite_symbol_fetches(std::string_view expression,
                                           const std::function<Result<uint64_t>(const std::string& symbol, int64_t addend)>& offset_of);

}  // namespace vperf::tracing
