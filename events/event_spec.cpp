#include "events/event_spec.h"

#include <linux/hw_breakpoint.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/strings.h"
#include "events/builtin_events.h"

namespace vperf::events {

namespace {

constexpr std::string_view kModifierHint =
    "modifiers are u (user), k (kernel), h (hypervisor), G (guest), H (host), p/pp/ppp (precise), "
    "S (sample read), D (pinned), e.g. 'cycles:uk'";
constexpr int kMaxPrecise = 3;
constexpr std::string_view kBreakpointPrefix = "mem:";

bool is_name_char(char c) {
  // Letters, digits and the punctuation that names of builtins, tracepoints, sysfs aliases,
  // libpfm4 events ("c=1") and perfmon events use; ':' separates parts.
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':' ||
         c == '=' || c == '*' || c == '?';
}

bool is_pmu_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

bool is_term_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

bool is_raw_token(std::string_view s) {
  if (s.size() < 2 || s[0] != 'r') return false;
  for (char c : s.substr(1))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string quoted_char(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
  return "byte " + hex(static_cast<unsigned char>(c));
}

class Parser {
 public:
  explicit Parser(std::string_view input) : in_(input) {}

  std::vector<GroupSpec> parse_list() {
    std::vector<GroupSpec> groups;
    skip_space();
    if (pos_ == in_.size())
      throw usage_error("empty event list", "name at least one event, e.g. 'cycles' or 'cs,faults'");
    for (;;) {
      groups.push_back(parse_item());
      skip_space();
      if (pos_ == in_.size()) return groups;
      if (in_[pos_] != ',') fail_unexpected();
      ++pos_;
      skip_space();
      if (pos_ == in_.size()) throw error_at(pos_, "trailing ',' at the end of '" + std::string(in_) + "'",
                                             "remove the ',' or name another event after it");
    }
  }

 private:
  UserError error_at(size_t offset, std::string what, std::string hint) const {
    return usage_error(std::move(what) + " (position " + std::to_string(offset + 1) + ")", std::move(hint));
  }

  [[noreturn]] void fail_unexpected() const {
    throw error_at(pos_, "unexpected " + quoted_char(in_[pos_]) + " in '" + std::string(in_) + "'",
                   "separate events with ',' and group them with '{...}', e.g. '{cycles,instructions}:u'");
  }

  void skip_space() {
    while (pos_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[pos_]))) ++pos_;
  }

  GroupSpec parse_item() {
    size_t start = pos_;
    GroupSpec group;
    if (in_[pos_] != '{') {
      group.members.push_back(parse_event());
      group.text = group.members.back().text;
      return group;
    }
    group.braced = true;
    ++pos_;
    for (;;) {
      skip_space();
      if (pos_ == in_.size())
        throw error_at(start, "missing '}' for the group opened in '" + std::string(in_.substr(start)) + "'",
                       "close the group, e.g. '{cycles,instructions}'");
      if (in_[pos_] == '{')
        throw error_at(pos_, "nested group in '" + std::string(in_.substr(start)) + "'",
                       "groups cannot contain groups; list the events in one '{...}'");
      if (in_[pos_] == '}') {
        if (group.members.empty())
          throw error_at(pos_, "empty group '{}'", "put at least one event in the group, e.g. '{cycles}'");
        ++pos_;
        break;
      }
      group.members.push_back(parse_event());
      skip_space();
      if (pos_ < in_.size() && in_[pos_] == ',') {
        ++pos_;
        skip_space();
        if (pos_ < in_.size() && in_[pos_] == '}')
          throw error_at(pos_, "',' before '}' in '" + std::string(in_.substr(start, pos_ + 1 - start)) + "'",
                         "remove the ',' or name another event");
      } else if (pos_ < in_.size() && in_[pos_] != '}') {
        fail_unexpected();
      }
    }
    if (pos_ < in_.size() && in_[pos_] == ':') {
      ++pos_;
      size_t mods_start = pos_;
      while (pos_ < in_.size() && in_[pos_] != ',' && !std::isspace(static_cast<unsigned char>(in_[pos_]))) ++pos_;
      group.text = std::string(in_.substr(start, pos_ - start));
      group.modifiers = modifiers_or_throw(in_.substr(mods_start, pos_ - mods_start), mods_start, group.text);
    } else {
      group.text = std::string(in_.substr(start, pos_ - start));
    }
    return group;
  }

  // The extent of one event: up to a ',' or '}' that is not inside a PMU's '/.../'.
  size_t event_end() const {
    bool in_terms = false;
    // A breakpoint's '/' comes before its length, not a PMU's terms.
    const bool breakpoint = in_.substr(pos_).starts_with(kBreakpointPrefix);
    size_t i = pos_;
    for (; i < in_.size(); ++i) {
      char c = in_[i];
      if (c == '/' && !breakpoint) in_terms = !in_terms;
      if (in_terms) continue;
      if (c == ',' || c == '}' || c == '{' || std::isspace(static_cast<unsigned char>(c))) break;
    }
    return i;
  }

  EventSpec parse_event() {
    size_t start = pos_;
    size_t end = event_end();
    if (end == start) {
      if (pos_ < in_.size() && in_[pos_] == ',')
        throw error_at(pos_, "empty event before ',' in '" + std::string(in_) + "'", "remove the extra ','");
      fail_unexpected();
    }
    pos_ = end;
    std::string_view text = in_.substr(start, end - start);
    EventSpec spec;
    spec.text = std::string(text);
    spec.position = start + 1;
    if (text.starts_with(kBreakpointPrefix)) {
      parse_breakpoint(text, start, spec);
      return spec;
    }
    if (size_t slash = text.find('/'); slash != std::string_view::npos) {
      // "sched:sched_switch/max-stack=3/", "cpu-clock/period=100000/": a named event with
      // perf's per-event settings; any other word before '/' is a PMU.
      const std::string_view base = text.substr(0, slash);
      if (base.find(':') != std::string_view::npos || find_builtin_event(base))
        parse_named_terms(text, start, spec);
      else
        parse_pmu_terms(text, start, spec);
      return spec;
    }
    for (size_t i = 0; i < text.size(); ++i) {
      if (!is_name_char(text[i]))
        throw error_at(start + i, "unexpected " + quoted_char(text[i]) + " in event '" + spec.text + "'",
                       "event names use letters, digits and _ - . : = * ?; run 'vperf list' for the names");
    }
    size_t colon = text.find(':');
    std::string_view base = text.substr(0, colon);
    std::string_view after = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
    bool qualified = after.starts_with(":");  // "pmu::EVENT"
    if (base.empty())
      throw error_at(start, "missing event name before ':' in '" + spec.text + "'", "write NAME:MODIFIERS, e.g. 'cycles:u'");
    if (!qualified && (is_raw_token(base) || find_builtin_event(base))) {
      spec.kind = is_raw_token(base) && !find_builtin_event(base) ? SpecKind::Raw : SpecKind::Builtin;
      spec.name = std::string(base);
      if (spec.kind == SpecKind::Raw) {
        auto value = parse_u64_base(base.substr(1), 16);
        if (!value)
          throw error_at(start, "raw event '" + std::string(base) + "' does not fit in 64 bits",
                         "a raw event is 'r' and at most 16 hex digits, e.g. 'r13c'");
        spec.raw_config = *value;
      }
      if (colon != std::string_view::npos) spec.modifiers = modifiers_or_throw(after, start + colon + 1, spec.text);
      return spec;
    }
    spec.kind = SpecKind::Name;
    spec.name = spec.text;
    if (has_glob(text)) {
      spec.shape = NameShape::Glob;
    } else if (qualified) {
      spec.shape = NameShape::Qualified;
    } else if (base.find('.') != std::string_view::npos) {
      spec.shape = NameShape::Dotted;
    } else if (colon != std::string_view::npos) {
      spec.shape = NameShape::Colon;
    } else {
      spec.shape = NameShape::Word;
    }
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      if (text[i] == ':' && text[i + 1] == ':' && i + 2 < text.size() && text[i + 2] == ':')
        throw error_at(start + i, "':::' in event '" + spec.text + "'", "a libpfm4 name is PMU::EVENT:UMASK, e.g. 'ivb::INST_RETIRED:ANY_P'");
    }
    if (text.back() == ':') {
      // "sched:", "ivb::", "INST_RETIRED:": a name that stops at its separator.
      if (text.find(':') == text.size() - 1 || text.ends_with("::"))
        throw error_at(start + text.size() - 1, "'" + spec.text + "' ends where a name should follow",
                       "write SUBSYSTEM:EVENT ('sched:sched_switch'), PMU::EVENT ('ivb::INST_RETIRED:ANY_P') or "
                       "EVENT:MODIFIERS ('cycles:u')");
      throw error_at(start + text.size() - 1, "empty event modifier after ':' in '" + spec.text + "'",
                     std::string(kModifierHint));
    }
    size_t last_colon = text.rfind(':');
    if (last_colon != std::string_view::npos && last_colon > 0 && text[last_colon - 1] != ':') {
      if (auto mods = parse_modifiers(text.substr(last_colon + 1)))
        spec.modifier_suffix = ModifierSuffix{std::string(text.substr(0, last_colon)), *mods};
    }
    return spec;
  }

  // perf's mem:ADDR[/LEN][:ACCESS], a hardware breakpoint (watchpoint). ADDR and LEN are
  // decimal or 0x hex, as perf's lexer reads numbers; ACCESS is r, w and x, each at most once.
  void parse_breakpoint(std::string_view text, size_t start, EventSpec& spec) {
    static constexpr std::string_view kHint = "write mem:ADDRESS[/LENGTH][:ACCESS], e.g. 'mem:0x404020/8:w' (ACCESS: r, w, x)";
    spec.kind = SpecKind::Breakpoint;
    size_t at = kBreakpointPrefix.size();
    const size_t number_end = std::min(text.find_first_of("/:", at), text.size());
    auto number = [&](std::string_view digits, size_t offset, std::string_view what) {
      std::optional<uint64_t> value = digits.starts_with("0x") || digits.starts_with("0X") ? parse_u64_base(digits.substr(2), 16)
                                                                                         : parse_u64_base(digits, 10);
      if (!value || digits.empty())
        throw error_at(start + offset, "bad breakpoint " + std::string(what) + " '" + std::string(digits) + "' in '" + spec.text + "'",
                       std::string(kHint));
      return *value;
    };
    spec.bp_addr = number(text.substr(at, number_end - at), at, "address");
    at = number_end;
    if (at < text.size() && text[at] == '/') {
      const size_t len_end = std::min(text.find(':', at + 1), text.size());
      spec.bp_len = number(text.substr(at + 1, len_end - at - 1), at + 1, "length");
      if (spec.bp_len == 0) throw error_at(start + at + 1, "a breakpoint's length is at least 1 in '" + spec.text + "'", std::string(kHint));
      at = len_end;
    }
    if (at < text.size()) {  // text[at] == ':'
      const std::string_view access = text.substr(at + 1);
      if (access.empty() || access.size() > 3)
        throw error_at(start + at + 1, "bad breakpoint access '" + std::string(access) + "' in '" + spec.text + "'", std::string(kHint));
      for (size_t i = 0; i < access.size(); ++i) {
        const uint32_t bit = access[i] == 'r' ? HW_BREAKPOINT_R : access[i] == 'w' ? HW_BREAKPOINT_W : access[i] == 'x' ? HW_BREAKPOINT_X : 0;
        if (bit == 0 || (spec.bp_type & bit))
          throw error_at(start + at + 1 + i, "bad breakpoint access '" + std::string(access) + "' in '" + spec.text + "'", std::string(kHint));
        spec.bp_type |= bit;
      }
    }
    // perf names the event by its text before the '/' (its lexer's event token).
    spec.name = std::string(text.substr(0, text.find('/')));
  }

  void parse_pmu_terms(std::string_view text, size_t start, EventSpec& spec) {
    spec.kind = SpecKind::PmuTerms;
    size_t open = text.find('/');
    std::string_view pmu = text.substr(0, open);
    if (pmu.empty())
      throw error_at(start, "missing PMU name before '/' in '" + spec.text + "'", "write PMU/TERMS/, e.g. 'cpu/event=0x3c/'");
    for (size_t i = 0; i < pmu.size(); ++i)
      if (!is_pmu_name_char(pmu[i]))
        throw error_at(start + i, "unexpected " + quoted_char(pmu[i]) + " in PMU name '" + std::string(pmu) + "'",
                       "PMU names are the directories of /sys/bus/event_source/devices");
    spec.pmu = std::string(pmu);
    parse_terms_and_modifiers(text, start, open, false, spec);
  }

  // A builtin or a SUBSYSTEM:EVENT name, then its terms (the catalog allows perf's per-event
  // settings only) and modifiers, which perf takes after the '/' with or without a ':' for a
  // SUBSYSTEM:EVENT, without one for a builtin.
  void parse_named_terms(std::string_view text, size_t start, EventSpec& spec) {
    const size_t open = text.find('/');
    const std::string_view base = text.substr(0, open);
    for (size_t i = 0; i < base.size(); ++i)
      if (!is_name_char(base[i]))
        throw error_at(start + i, "unexpected " + quoted_char(base[i]) + " in event '" + spec.text + "'",
                       "event names use letters, digits and _ - . : = * ?; run 'vperf list' for the names");
    if (base.front() == ':' || base.back() == ':')
      throw error_at(start, "'" + std::string(base) + "' is not an event name", "write SUBSYSTEM:EVENT/TERMS/, e.g. 'sched:sched_switch/max-stack=3/'");
    spec.name = std::string(base);
    if (find_builtin_event(base)) {
      spec.kind = SpecKind::Builtin;
    } else {
      spec.kind = SpecKind::Name;
      spec.shape = has_glob(base) ? NameShape::Glob : NameShape::Colon;
    }
    parse_terms_and_modifiers(text, start, open, spec.kind == SpecKind::Name, spec);
  }

  // From the '/' at `open`: the terms up to the closing '/', then the modifiers.
  void parse_terms_and_modifiers(std::string_view text, size_t start, size_t open, bool colon_allowed, EventSpec& spec) {
    size_t close = text.find('/', open + 1);
    if (close == std::string_view::npos)
      throw error_at(start + text.size(), "missing closing '/' in '" + spec.text + "'",
                     "write PMU/TERMS/, e.g. 'cpu/event=0x3c/'");
    std::string_view body = text.substr(open + 1, close - open - 1);
    size_t offset = start + open + 1;
    if (!body.empty()) {
      for (std::string_view term : split(body, ',')) {
        parse_term(term, offset, spec);
        offset += term.size() + 1;
      }
    }
    std::string_view mods = text.substr(close + 1);
    if (colon_allowed && mods.starts_with(":")) {
      mods.remove_prefix(1);
      ++close;
    }
    if (mods.starts_with(":"))
      throw error_at(start + close + 1, "unexpected ':' after '/' in '" + spec.text + "'",
                     "PMU event modifiers follow the closing '/' directly, e.g. 'msr/tsc/u'");
    if (!mods.empty()) spec.modifiers = modifiers_or_throw(mods, start + close + 1, spec.text);
  }

  void parse_term(std::string_view term, size_t offset, EventSpec& spec) {
    if (term.empty())
      throw error_at(offset, "empty term in '" + spec.text + "'", "separate terms with one ',', e.g. 'cpu/event=0x3c,umask=0x1/'");
    size_t eq = term.find('=');
    std::string_view key = term.substr(0, eq);
    if (key.empty())
      throw error_at(offset, "missing term name before '=' in '" + spec.text + "'", "write TERM=VALUE, e.g. 'event=0x3c'");
    for (size_t i = 0; i < key.size(); ++i)
      if (!is_term_key_char(key[i]))
        throw error_at(offset + i, "unexpected " + quoted_char(key[i]) + " in term '" + std::string(term) + "' of '" + spec.text + "'",
                       "write TERM=VALUE or a flag TERM, e.g. 'event=0x3c,inv'");
    for (const PmuTermSpec& earlier : spec.terms)
      if (earlier.key == key)
        throw error_at(offset, "term '" + std::string(key) + "' given twice in '" + spec.text + "'",
                       "give each term once");
    PmuTermSpec parsed{std::string(key), std::nullopt, offset + 1};
    if (eq != std::string_view::npos) {
      std::string_view value = term.substr(eq + 1);
      if (value.empty())
        throw error_at(offset + eq + 1, "missing value after '" + std::string(key) + "=' in '" + spec.text + "'",
                       "write TERM=VALUE, e.g. 'umask=0x1'");
      for (size_t i = 0; i < value.size(); ++i)
        if (!std::isgraph(static_cast<unsigned char>(value[i])) || value[i] == '=')
          throw error_at(offset + eq + 1 + i, "unexpected " + quoted_char(value[i]) + " in the value of term '" + std::string(key) + "' of '" + spec.text + "'",
                         "values are numbers like 0x3c or 60, or a name for 'name='");
      parsed.value = std::string(value);
    }
    spec.terms.push_back(std::move(parsed));
  }

  // `offset` is the 0-based offset of `letters` in the input; `event` is the item, for the message.
  Modifiers modifiers_or_throw(std::string_view letters, size_t offset, const std::string& event) const {
    if (letters.empty())
      throw error_at(offset, "empty event modifier after ':' in '" + event + "'", std::string(kModifierHint));
    Modifiers mods;
    for (size_t i = 0; i < letters.size(); ++i) {
      char c = letters[i];
      if (!apply_modifier(c, mods))
        throw error_at(offset + i, "bad event modifier " + quoted_char(c) + " in '" + event + "'", std::string(kModifierHint));
      if (repeats_earlier_modifier(letters, i))
        throw error_at(offset + i, "event modifier " + quoted_char(c) + " repeated in '" + event + "'",
                       "give each modifier once; only p repeats (p, pp, ppp)");
      if (mods.precise > kMaxPrecise)
        throw error_at(offset + i, "too many 'p' modifiers in '" + event + "'", "precise levels are p, pp and ppp (0..3)");
    }
    return mods;
  }

 public:
  // perf rejects a repeated modifier letter other than 'p' ("cycles:uu" is a syntax error).
  static bool repeats_earlier_modifier(std::string_view letters, size_t i) {
    return letters[i] != 'p' && letters.substr(0, i).find(letters[i]) != std::string_view::npos;
  }

  static bool apply_modifier(char c, Modifiers& mods) {
    switch (c) {
      case 'u': mods.user = true; return true;
      case 'k': mods.kernel = true; return true;
      case 'h': mods.hypervisor = true; return true;
      case 'G': mods.guest = true; return true;
      case 'H': mods.host = true; return true;
      case 'p': ++mods.precise; return true;
      case 'S': mods.sample_read = true; return true;
      case 'D': mods.pinned = true; return true;
      case 'I': mods.exclude_idle = true; return true;
      case 'W': mods.weak = true; return true;
      case 'e': mods.exclusive = true; return true;
      case 'P': mods.precise_max = true; return true;
      case 'b': mods.bpf_counter = true; return true;
      default: return false;
    }
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<GroupSpec> parse_event_list(std::string_view input) { return Parser(input).parse_list(); }

std::optional<Modifiers> parse_modifiers(std::string_view letters) {
  if (letters.empty()) return std::nullopt;
  Modifiers mods;
  for (size_t i = 0; i < letters.size(); ++i)
    if (!Parser::apply_modifier(letters[i], mods) || mods.precise > kMaxPrecise ||
        Parser::repeats_earlier_modifier(letters, i))
      return std::nullopt;
  return mods;
}

std::string modifiers_text(const Modifiers& m) {
  std::string out;
  if (m.user) out += 'u';
  if (m.kernel) out += 'k';
  if (m.hypervisor) out += 'h';
  if (m.guest) out += 'G';
  if (m.host) out += 'H';
  out.append(static_cast<size_t>(m.precise), 'p');
  if (m.sample_read) out += 'S';
  if (m.pinned) out += 'D';
  if (m.exclude_idle) out += 'I';
  if (m.weak) out += 'W';
  if (m.exclusive) out += 'e';
  if (m.precise_max) out += 'P';
  if (m.bpf_counter) out += 'b';
  return out;
}

}  // namespace vperf::events
