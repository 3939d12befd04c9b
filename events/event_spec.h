#pragma once
// The one parser for every event string vperf accepts, with perf's syntax:
//
//   list      := item (',' item)*
//   item      := event | '{' event (',' event)* '}' [':' modifiers]     (no nested groups)
//   event     := raw | breakpoint | pmu-terms | name
//   breakpoint := 'mem:' ADDR ['/' LEN] [':' ACCESS]                  mem:0x404020/8:rw
//                (ADDR and LEN decimal or 0x hex, ACCESS one to three of r w x, each once)
//   raw       := 'r' HEX+ [':' modifiers]                               r13c, r1a2:u
//   pmu-terms := PMU '/' [term (',' term)*] '/' [modifiers]             cpu/event=0x3c,inv/u
//   term      := KEY ['=' VALUE]                                        umask=0x1, inv, name=foo
//   name      := a builtin ("cycles", "L1-dcache-load-misses") [':' modifiers],
//                or any other NAME (':' NAME)* for the resolver to interpret:
//                tracepoints "sched:sched_switch", globs "sched:*", libpfm4 names
//                "INST_RETIRED:ANY_P", "ivb::L2_STORE_LOCK_RQSTS:HIT_M:u:c=1",
//                perfmon names "L2_STORE_LOCK_RQSTS.HIT_M[:modifiers]", sysfs aliases "tsc".
//   modifiers := one or more of u k h G H p S D, at most three p      ukpp
//
// Commas inside a PMU's '/.../' do not separate events. Whitespace is allowed around ',',
// '{' and '}'. Group modifiers apply to every member, after the member's own.
//
// "name:word" is ambiguous (tracepoint, libpfm event with umask, or builtin with modifiers).
// For builtins the parser knows the names (as perf's lexer does) and parses the modifiers;
// for every other name it records the text, its syntactic shape and, when the last ':' part
// reads as perf modifiers, that reading too. The catalog decides which one is meant.
//
// Syntax errors throw vperf::usage_error naming the offending token and its 1-based position.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/resolved_event.h"

namespace vperf::events {

enum class SpecKind {
  Raw,       // r13c
  PmuTerms,  // cpu/event=0x3c/
  Builtin,   // cycles, cs:u, LLC-load-misses
  Breakpoint,  // mem:0x404020:w
  Name,      // anything else; see NameShape
};

// The syntactic shape of a Name, a hint for the resolver.
enum class NameShape {
  Word,       // no ':' and no '.': "tsc", "INST_RETIRED", "UNHALTED_CORE_CYCLES"
  Colon,      // "a:b[:c...]": tracepoint, libpfm event:umask, or either with perf modifiers
  Qualified,  // libpfm PMU-qualified "ivb::L2_STORE_LOCK_RQSTS:HIT_M"
  Dotted,     // perfmon "L2_STORE_LOCK_RQSTS.HIT_M"
  Glob,       // contains '*' or '?': tracepoint pattern "sched:*"
};

struct PmuTermSpec {
  std::string key;                   // "event", "umask", "inv", "config1", "name", or an alias
  std::optional<std::string> value;  // nullopt for a flag ("inv") or an alias ("tsc")
  size_t position = 0;               // 1-based column of the key in the parsed string
};

// "base:modifiers" reading of a Name whose last ':' part is valid perf modifiers.
struct ModifierSuffix {
  std::string base;  // "sched:sched_switch" of "sched:sched_switch:u"
  Modifiers modifiers;
};

struct EventSpec {
  SpecKind kind = SpecKind::Name;
  std::string text;     // the event as written, modifiers included: "cs:u", "cpu/event=1/k"
  size_t position = 0;  // 1-based column of text in the parsed string

  // Builtin: the name without modifiers ("cs"). Name: the full text.
  std::string name;
  // Raw: the hex value after 'r'.
  uint64_t raw_config = 0;
  // PmuTerms: "cpu" and its terms in order (later terms override earlier ones).
  std::string pmu;
  std::vector<PmuTermSpec> terms;
  // Breakpoint: the address, the length (0: perf's default for the access) and HW_BREAKPOINT_*
  // access bits (0: perf's default, read and write).
  uint64_t bp_addr = 0;
  uint64_t bp_len = 0;
  uint32_t bp_type = 0;
  // Raw, PmuTerms, Builtin: the modifiers written after the event.
  Modifiers modifiers;
  // Name only.
  NameShape shape = NameShape::Word;
  std::optional<ModifierSuffix> modifier_suffix;
};

struct GroupSpec {
  std::vector<EventSpec> members;
  bool braced = false;  // written as {a,b}
  Modifiers modifiers;  // the group's ":mods", applied to every member
  std::string text;     // the item as written
};

// Parses a whole -e argument: "cycles,{cs,faults}:u,sched:*".
std::vector<GroupSpec> parse_event_list(std::string_view input);

// Parses perf modifier letters ("ukpp"); nullopt when any letter is not one, or more
// than three 'p' are given. Used for the ambiguous "name:word" case.
std::optional<Modifiers> parse_modifiers(std::string_view letters);

// "ukpp" for Modifiers{user, kernel, precise=2}; the letters in perf's order u k h G H p S D.
std::string modifiers_text(const Modifiers& modifiers);

}  // namespace vperf::events
