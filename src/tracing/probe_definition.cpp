#include "tracing/probe_definition.h"

#include <cctype>
#include <cstdint>

#include "core/strings.h"

namespace vperf::tracing {

namespace {

constexpr std::string_view kPointSeparators = ";:+@%";

bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A number as perf's strtoul(..., 0) takes one here: decimal or 0x hex. One past 2^64 - 1 is
// no number (strtoul would saturate it).
std::optional<uint64_t> point_number(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) return parse_u64_base(text.substr(2), 16);
  return parse_u64(text);
}

// The largest line number: perf and DWARF count lines in an int.
constexpr uint64_t kLastLine = INT32_MAX;

// A line number as point_number reads it, refused past kLastLine.
std::optional<uint64_t> line_number(std::string_view text) {
  std::optional<uint64_t> line = point_number(text);
  if (line && *line > kLastLine) return std::nullopt;
  return line;
}

// `text` as one line: control characters written as C escapes ("\n", "\x01").
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (std::iscntrl(byte)) out += "\\x" + hex_padded(byte, 2).substr(2);
    else out += c;
  }
  return out;
}

Error definition_error(std::string what, std::string_view text) {
  return Error{"probe definition '" + printable(text) + "': " + std::move(what), 0,
               "write it as [[GROUP:]EVENT=]FUNC[@SRC][+OFF|%return|:RLN|;PATTERN] [ARG ...] or SRC:LINE, as perf probe takes it"};
}

bool known_type(std::string_view type) {
  if (type == "string" || type == "ustring") return true;
  if (type.size() >= 2 && (type[0] == 'u' || type[0] == 's' || type[0] == 'x')) {
    std::string_view bits = type.substr(1);
    return bits == "8" || bits == "16" || bits == "32" || bits == "64";
  }
  // b<width>@<offset>/<container bits>, as the kernel takes one: a container of 8, 16, 32 or 64
  // bits holding the width from the offset (parse_probe_arg_type's rule).
  if (type.starts_with('b')) {
    const size_t at = type.find('@'), slash = type.find('/');
    if (at == std::string_view::npos || slash == std::string_view::npos || at > slash) return false;
    const std::optional<uint64_t> width = parse_u64(type.substr(1, at - 1)), offset = parse_u64(type.substr(at + 1, slash - at - 1)),
                                  container = parse_u64(type.substr(slash + 1));
    if (!width || !offset || !container) return false;
    return (*container == 8 || *container == 16 || *container == 32 || *container == 64) && *width > 0 && *width <= *container &&
           *offset <= *container - *width;
  }
  return false;
}

// "sk->__sk_common.skc_state" -> "sk", {"->__sk_common", ".skc_state"}; false if malformed.
bool split_fields(std::string_view expression, std::string& variable, std::vector<std::string>& fields) {
  size_t at = 0;
  while (at < expression.size() && identifier_char(expression[at])) ++at;
  variable = std::string(expression.substr(0, at));
  while (at < expression.size()) {
    size_t start = at;
    if (expression.substr(at).starts_with("->")) at += 2;
    else if (expression[at] == '.') at += 1;
    else if (expression[at] == '[') {
      const size_t close = expression.find(']', at);
      if (close == std::string_view::npos || close == at + 1 || !parse_u64(expression.substr(at + 1, close - at - 1))) return false;
      fields.emplace_back(expression.substr(at, close + 1 - at));
      at = close + 1;
      continue;
    } else {
      return false;
    }
    const size_t name_start = at;
    if (at >= expression.size() || !identifier_start(expression[at])) return false;
    while (at < expression.size() && identifier_char(expression[at])) ++at;
    if (at == name_start) return false;
    fields.emplace_back(expression.substr(start, at - start));
  }
  return true;
}

Result<ProbeArgument> parse_argument(std::string_view word, std::string_view text) {
  ProbeArgument arg;
  std::string_view expression = word;
  // NAME= first: perf names the field after the first '='.
  if (const size_t eq = expression.find('='); eq != std::string_view::npos) {
    arg.name = std::string(expression.substr(0, eq));
    if (!is_probe_event_name(arg.name)) return definition_error("argument name '" + arg.name + "' is not a C identifier", text);
    expression.remove_prefix(eq + 1);
  }
  if (const size_t colon = expression.find(':'); colon != std::string_view::npos) {
    arg.type = std::string(expression.substr(colon + 1));
    expression = expression.substr(0, colon);
    if (!known_type(arg.type))
      return definition_error("argument type '" + arg.type + "' is not one of u8..u64, s8..s64, x8..x64, string, ustring, b<bits>@<bit>/<size> (bits + bit <= size, a size of 8, 16, 32 or 64)", text);
  }
  if (expression.size() > 5 && expression.ends_with("@user")) {
    arg.user_access = true;
    expression.remove_suffix(5);
  }
  if (expression.empty()) return definition_error("an argument without an expression", text);
  arg.expression = std::string(expression);
  if (identifier_start(expression.front()) && !split_fields(expression, arg.variable, arg.fields))
    return definition_error("'" + arg.expression + "' is not VAR, VAR->FIELD, VAR.FIELD or VAR[N]", text);
  return arg;
}

}  // namespace

bool is_probe_event_name(std::string_view name) {
  if (name.empty() || !identifier_start(name.front())) return false;
  for (char c : name)
    if (!identifier_char(c)) return false;
  return true;
}

Result<LineRange> parse_line_range(std::string_view text) {
  auto range_error = [&](const std::string& what) {
    return Error{"line range '" + printable(text) + "': " + what, 0,
                 "write FUNC[:RLN[+NUM|-RLN2]] or SRC:ALN[+NUM|-ALN2], e.g. vperf probe -x FILE -L main:3-8"};
  };
  LineRange range;
  for (char c : text)
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return range_error("a white space or control character (" + printable(std::string_view(&c, 1)) + ") is in no function or file name");
  std::string_view name = text.substr(0, text.find(':'));
  std::string_view lines = name.size() < text.size() ? text.substr(name.size() + 1) : std::string_view();
  if (name.empty()) return range_error("no function or file");
  if (const size_t at = name.find('@'); at != std::string_view::npos) {
    range.function = std::string(name.substr(0, at));
    range.file = std::string(name.substr(at + 1));
    if (range.function.empty() || range.file.empty()) return range_error("FUNC@SRC needs both");
  } else if (name.find('.') != std::string_view::npos) {
    range.file = std::string(name);
  } else {
    range.function = std::string(name);
  }
  if (!range.function.empty() && range.function.find_first_of(" ;%+") != std::string::npos) return range_error("'" + range.function + "' is not a function name");
  if (name.size() == text.size()) {
    if (range.function.empty()) return range_error("a file range needs its first line (SRC:ALN)");
    return range;
  }
  const size_t cut = lines.find_first_of("+-");
  const std::string last_line = " (lines are numbered up to " + std::to_string(kLastLine) + ")";
  std::optional<uint64_t> start = line_number(lines.substr(0, cut));
  if (!start) return range_error("'" + std::string(lines.substr(0, cut)) + "' is not a line number" + last_line);
  range.start = *start;
  if (range.function.empty() && range.start == 0) return range_error("a file's lines count from 1");
  if (cut != std::string_view::npos) {
    std::optional<uint64_t> second = line_number(lines.substr(cut + 1));
    if (!second) return range_error("'" + std::string(lines.substr(cut + 1)) + "' is not a number of lines or a line number" + last_line);
    if (lines[cut] == '+') {
      if (*second == 0) return range_error("+0 lines");
      range.end = range.start + *second - 1;  // both at most kLastLine: no wrap
      if (*range.end > kLastLine) return range_error("it ends past line " + std::to_string(kLastLine));
    } else {
      range.end = *second;
    }
    if (*range.end < range.start) return range_error("it ends before it starts");
    // perf's open range is one that ends at INT_MAX: written out, it is the same range (to the
    // function's last line and two more), not every line to the end of the file.
    if (*range.end == kLastLine) range.end.reset();
  }
  return range;
}

Result<ProbeDefinition> parse_probe_definition(std::string_view text) {
  // Words are split at any white space, as perf's argv_split does: a newline or tab is a
  // separator, never part of a word that goes on into uprobe_events' line (where a newline
  // would start another command). Other control characters belong in no name or fetch.
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    const size_t start = at;
    while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    if (at > start) words.push_back(text.substr(start, at - start));
  }
  if (words.empty()) return definition_error("nothing to probe", text);
  for (std::string_view word : words)
    for (char c : word)
      if (std::iscntrl(static_cast<unsigned char>(c)))
        return definition_error("it holds a control character (" + printable(std::string_view(&c, 1)) + ")", text);
  ProbeDefinition def;
  std::string_view point = words.front();

  // [[GROUP:]EVENT=]: an '=' before any other separator names the event.
  if (const size_t first = point.find_first_of(";=@+%"); first != std::string_view::npos && point[first] == '=') {
    std::string_view name = point.substr(0, first);
    point.remove_prefix(first + 1);
    if (const size_t colon = name.find(':'); colon != std::string_view::npos) {
      def.group = std::string(name.substr(0, colon));
      name.remove_prefix(colon + 1);
      if (!is_probe_event_name(def.group)) return definition_error("group '" + def.group + "' is not a C identifier", text);
    }
    def.event = std::string(name);
    if (!is_probe_event_name(def.event)) return definition_error("event name '" + def.event + "' is not a C identifier", text);
  }

  // A file, not a function: no "+@%", and a '.' before the first ':' or ';'.
  bool file_point = false;
  if (point.find_first_of("+@%") == std::string_view::npos) {
    const size_t sep = point.find_first_of(";:");
    file_point = sep != std::string_view::npos && point.substr(0, sep).find('.') != std::string_view::npos;
  }
  size_t cut = point.find_first_of(kPointSeparators);
  std::string_view head = point.substr(0, cut);
  if (file_point) {
    def.file = std::string(head);
  } else {
    def.function = std::string(head);
    if (head.starts_with("0x")) {
      def.address = parse_u64_base(head.substr(2), 16);
      if (!def.address) return definition_error("'" + def.function + "' is not an address", text);
    }
  }
  while (cut != std::string_view::npos) {
    const char separator = point[cut];
    std::string_view rest = point.substr(cut + 1);
    if (separator == ';') {  // the pattern runs to the end, ';'s and all
      def.lazy_pattern = std::string(rest);
      if (def.lazy_pattern.empty()) return definition_error("an empty lazy pattern after ';'", text);
      break;
    }
    const size_t next = rest.find_first_of(kPointSeparators);
    std::string_view part = rest.substr(0, next);
    cut = next == std::string_view::npos ? next : cut + 1 + next;
    switch (separator) {
      case ':':
        // "FUNC:" is line 0 to perf (strtoul of nothing), FUNC's own line: perf's probe tests
        // write it when a line lookup came back empty, and expect the debuginfo message.
        if (part.empty()) def.line = 0;
        else if (!(def.line = line_number(part)))
          return definition_error("line number '" + std::string(part) + "' is not a number from 0 to " + std::to_string(kLastLine), text);
        break;
      case '+':
        if (!(def.offset = point_number(part))) return definition_error("offset '" + std::string(part) + "' is not a number", text);
        break;
      case '@':
        if (!def.file.empty()) return definition_error("two source files (SRC@SRC)", text);
        if (part.empty()) return definition_error("an empty source file after '@'", text);
        def.file = std::string(part);
        break;
      case '%':
        if (part != "return") return definition_error("%" + std::string(part) + " is not supported (only %return)", text);
        def.return_probe = true;
        break;
    }
  }

  const bool lazy = !def.lazy_pattern.empty();
  if (def.function.empty() && def.file.empty()) return definition_error("no function or source file", text);
  if (lazy && def.line) return definition_error("a lazy pattern cannot go with a line number", text);
  if (lazy && def.offset) return definition_error("a lazy pattern cannot go with an offset", text);
  if (def.line && def.offset) return definition_error("an offset cannot go with a line number", text);
  if (def.function.empty() && !def.line && !lazy) return definition_error("a source file needs :LINE or ;PATTERN", text);
  if (def.offset && def.function.empty()) return definition_error("an offset needs a function", text);
  if (def.return_probe && (def.offset || def.line || lazy))
    return definition_error("%return cannot go with an offset, a line or a lazy pattern", text);

  for (size_t i = 1; i < words.size(); ++i) {
    VPERF_TRY(ProbeArgument arg, parse_argument(words[i], text));
    def.arguments.push_back(std::move(arg));
  }
  return def;
}

Result<std::string> rewrite_symbol_fetches(std::string_view expression,
                                           const std::function<Result<uint64_t>(const std::string& symbol, int64_t addend)>& offset_of) {
  auto symbol_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  std::string out;
  for (size_t i = 0; i < expression.size(); ++i) {
    if (expression[i] != '@' || i + 1 >= expression.size() || !(std::isalpha(static_cast<unsigned char>(expression[i + 1])) || expression[i + 1] == '_')) {
      out += expression[i];
      continue;
    }
    size_t end = i + 1;
    while (end < expression.size() && symbol_char(expression[end])) ++end;
    const std::string name(expression.substr(i + 1, end - i - 1));
    int64_t addend = 0;
    if (end < expression.size() && (expression[end] == '+' || expression[end] == '-')) {
      size_t digits = end + 1;  // decimal or 0x hex, as parse_u64 reads them
      while (digits < expression.size() && std::isalnum(static_cast<unsigned char>(expression[digits]))) ++digits;
      std::optional<uint64_t> value = parse_u64(expression.substr(end + 1, digits - end - 1));
      if (!value || *value > static_cast<uint64_t>(INT64_MAX))
        return Error{"argument '" + std::string(expression) + "': '" + std::string(expression.substr(end, digits - end)) + "' is not a number to add to @" + name};
      addend = expression[end] == '-' ? -static_cast<int64_t>(*value) : static_cast<int64_t>(*value);
      end = digits;
    }
    VPERF_TRY(uint64_t offset, offset_of(name, addend));
    out += "@+" + hex(offset);
    i = end - 1;
  }
  return out;
}

}  // namespace vperf::tracing
