#include "report/folded_stacks.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace vperf::report {

namespace {

// Characters that would break a folded line.
void make_foldable(std::string& name) {
  for (char& c : name) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
}

// perl's m/\.\(.*\)\./: a Go method such as "net/http.(*Client).Do".
bool looks_like_go_method(std::string_view name) {
  size_t open = name.find(".(");
  return open != std::string_view::npos && name.find(").", open + 2) != std::string_view::npos;
}

bool is_java_process(const StackView& stack) {
  return !stack.empty() && stack.front().kind == FrameKind::Process && stack.front().name.starts_with("java");
}

// One frame as its folded line spells it.
std::string folded_label(const Frame& frame, bool java, const FoldedOptions& options) {
  Frame shown{frame.kind == FrameKind::Process || !options.tidy ? frame.name : tidy_frame_name(frame.name, java), frame.kind};
  make_foldable(shown.name);
  return frame_label(shown, options.annotations);
}

std::string folded_stack(const StackView& stack, const FoldedOptions& options) {
  const bool java = options.tidy && is_java_process(stack);
  std::string line;
  for (size_t i = 0; i < stack.size(); ++i) {
    if (i) line += ';';
    line += folded_label(stack[i], java, options);
  }
  return line;
}

// The stack text of every line, merged where two stacks print the same, sorted bytewise.
std::map<std::string, std::pair<uint64_t, uint64_t>> fold(const StackProfile& before, const StackProfile& after,
                                                          const FoldedOptions& options) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> lines;
  before.for_each_stack([&](const StackView& stack, uint64_t count) { lines[folded_stack(stack, options)].first += count; });
  after.for_each_stack([&](const StackView& stack, uint64_t count) { lines[folded_stack(stack, options)].second += count; });
  return lines;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || c == '\n'; }

// perl's /^(.*)\s+?(\d+(?:\.\d*)?)$/ on one line: the stack text and the count text, or
// nothing if the line has no count.
struct Split {
  std::string_view stack;
  std::string_view count;
};
std::optional<Split> split_count(std::string_view line) {
  size_t end = line.size();
  size_t digits = end;
  while (digits > 0 && ((line[digits - 1] >= '0' && line[digits - 1] <= '9') || line[digits - 1] == '.')) --digits;
  // \d+(?:\.\d*)? : digits, then at most one '.', not first.
  std::string_view number = line.substr(digits);
  while (!number.empty() && !(number[0] >= '0' && number[0] <= '9')) {
    number.remove_prefix(1);
    ++digits;
  }
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;
  if (digits == 0 || !is_space(line[digits - 1])) return std::nullopt;
  return Split{line.substr(0, digits - 1), number};
}

std::optional<uint64_t> parse_count(std::string_view text) {
  size_t dot = text.find('.');
  if (dot != std::string_view::npos) {
    // "12." and "12.000" are whole numbers; "12.5" is not.
    if (text.find_first_not_of('0', dot + 1) != std::string_view::npos) return std::nullopt;
    text = text.substr(0, dot);
  }
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

Stack parse_stack(std::string_view text) {
  Stack stack;
  size_t start = 0;
  while (true) {
    size_t semi = text.find(';', start);
    std::string_view part = text.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    stack.push_back(frame_from_label(part));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  // perl's split drops trailing empty fields.
  while (!stack.empty() && stack.back().name.empty() && stack.back().kind == FrameKind::User) stack.pop_back();
  return stack;
}

Error line_error(size_t number, std::string_view what) {
  return Error{"folded stacks line " + std::to_string(number) + ": " + std::string(what)};
}

template <typename OnLine>
Result<void> for_each_line(std::string_view text, OnLine on_line) {
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (auto error = on_line(number, line)) return *error;
  }
  return {};
}

}  // namespace

std::string tidy_frame_name(std::string_view name, bool java) {
  std::string out(name);
  std::replace(out.begin(), out.end(), ';', ':');
  if (!looks_like_go_method(out)) {
    constexpr std::string_view kAnon = "(anonymous namespace)";
    size_t pos = 0;
    while ((pos = out.find('(', pos)) != std::string::npos) {
      if (std::string_view(out).substr(pos).starts_with(kAnon)) {
        pos += 1;
        continue;
      }
      out.erase(pos);
      break;
    }
  }
  std::erase_if(out, [](char c) { return c == '"' || c == '\''; });
  if (java && out.find('/') != std::string::npos && out.starts_with('L')) out.erase(0, 1);
  return out;
}

void write_folded(std::ostream& out, const StackProfile& profile, const FoldedOptions& options) {
  for (const auto& [stack, counts] : fold(StackProfile{}, profile, options)) {
    out << stack << ' ' << counts.second << '\n';
  }
}

std::string folded_text(const StackProfile& profile, const FoldedOptions& options) {
  std::ostringstream out;
  write_folded(out, profile, options);
  return out.str();
}

std::string diff_folded_text(const StackProfile& before, const StackProfile& after, const FoldedOptions& options) {
  std::ostringstream out;
  for (const auto& [stack, counts] : fold(before, after, options)) {
    out << stack << ' ' << counts.first << ' ' << counts.second << '\n';
  }
  return out.str();
}

Result<StackProfile> parse_folded(std::string_view text) {
  StackProfile profile;
  auto done = for_each_line(text, [&](size_t number, std::string_view line) -> std::optional<Error> {
    auto split = split_count(line);
    if (!split) return line_error(number, "no count at the end of \"" + std::string(line.substr(0, 80)) + "\"");
    auto count = parse_count(split->count);
    if (!count) return line_error(number, "count " + std::string(split->count) + " is not a whole number");
    profile.add(parse_stack(split->stack), *count);
    return std::nullopt;
  });
  if (!done) return done.error();
  return profile;
}

StackProfile folded_and_read_back(const StackProfile& profile, const FoldedOptions& options) {
  // A frame's label as parse_stack reads it back, once per frame and kind of stack: its id in
  // `out` (kNone: not read back yet).
  constexpr uint32_t kNotYet = core::HashedIds::kNone;
  std::vector<uint32_t> read_back[2];
  for (auto& ids : read_back) ids.assign(profile.frame_count(), kNotYet);
  StackProfile out;
  std::vector<uint32_t> stack;
  profile.for_each_stack([&](const StackView& view, uint64_t count) {
    const bool java = options.tidy && is_java_process(view);
    stack.clear();
    for (uint32_t id : view.ids()) {
      uint32_t& read = read_back[java][id];
      if (read == kNotYet) read = out.frame_id(frame_from_label(folded_label(profile.frame(id), java, options)));
      stack.push_back(read);
    }
    // As parse_stack: perl's split drops trailing empty fields.
    while (!stack.empty() && out.frame(stack.back()).name.empty() && out.frame(stack.back()).kind == FrameKind::User) stack.pop_back();
    out.add_ids(stack, count);
  });
  return out;
}

Result<DiffProfiles> parse_diff_folded(std::string_view text) {
  DiffProfiles diff;
  auto done = for_each_line(text, [&](size_t number, std::string_view line) -> std::optional<Error> {
    auto second = split_count(line);
    auto first = second ? split_count(second->stack) : std::nullopt;
    if (!first) {
      return line_error(number, "expected two counts at the end of \"" + std::string(line.substr(0, 80)) + "\"");
    }
    auto before = parse_count(first->count);
    auto after = parse_count(second->count);
    if (!before || !after) return line_error(number, "counts are not whole numbers");
    Stack stack = parse_stack(first->stack);
    diff.before.add(stack, *before);
    diff.after.add(std::move(stack), *after);
    return std::nullopt;
  });
  if (!done) return done.error();
  return diff;
}

}  // namespace vperf::report
