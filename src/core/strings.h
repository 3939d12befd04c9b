#pragma once
// String helpers used by every parser of user input.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vperf {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
bool starts_with_nocase(std::string_view s, std::string_view prefix);
bool equals_nocase(std::string_view a, std::string_view b);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);

// Unsigned integer in C notation: "0x1c", "28", "0b101" is not accepted. No sign, no junk.
std::optional<uint64_t> parse_u64(std::string_view s);
// Unsigned integer in the given base only (e.g. the hex digits after "r" in "r13c").
std::optional<uint64_t> parse_u64_base(std::string_view s, int base);

// "0x13c"
std::string hex(uint64_t v);
// "0x0000013c" (width hex digits)
std::string hex_padded(uint64_t v, int width);

// Shell-style glob with '*' and '?', as perf uses for "sched:*" and "syscalls:sys_enter_*".
bool glob_match(std::string_view pattern, std::string_view text);
bool has_glob(std::string_view s);

// Levenshtein distance, case-insensitive.
size_t edit_distance(std::string_view a, std::string_view b);
// Up to `limit` candidates closest to `wanted`, best first, for "did you mean" hints.
// Candidates that contain `wanted` as a substring rank before distant ones.
std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                       size_t limit = 3);
// "a, b or c"
std::string join_alternatives(const std::vector<std::string>& names);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace vperf
