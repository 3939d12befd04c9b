#include "events/sysfs_pmu.h"

#include <algorithm>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::events {

namespace {

constexpr int kConfigBits = 64;

// Companion files of an event alias, not aliases themselves ("energy-psys.scale").
constexpr std::string_view kAliasCompanionSuffixes[] = {".scale", ".unit", ".per-pkg", ".snapshot"};

bool is_alias_companion(std::string_view file) {
  return std::any_of(std::begin(kAliasCompanionSuffixes), std::end(kAliasCompanionSuffixes),
                     [&](std::string_view suffix) { return file.ends_with(suffix); });
}

uint64_t* field_of(const std::string& field, PmuConfig& config) {
  if (field == "config") return &config.config;
  if (field == "config1") return &config.config1;
  if (field == "config2") return &config.config2;
  return nullptr;
}

std::string read_trimmed_or_empty(const std::filesystem::path& path) {
  auto text = read_file(path);
  return text ? std::string(trim(*text)) : std::string();
}

}  // namespace

const PmuFormatTerm* SysfsPmu::find_term(std::string_view term) const {
  auto it = std::find_if(format.begin(), format.end(), [&](const PmuFormatTerm& t) { return t.name == term; });
  return it == format.end() ? nullptr : &*it;
}

const PmuEventAlias* SysfsPmu::find_event(std::string_view alias) const {
  auto it = std::find_if(events.begin(), events.end(), [&](const PmuEventAlias& e) { return e.name == alias; });
  return it == events.end() ? nullptr : &*it;
}

int term_width(const PmuFormatTerm& term) {
  int width = 0;
  for (const BitRange& range : term.bits) width += range.high - range.low + 1;
  return width;
}

Result<PmuConfig> place_term_value(const PmuFormatTerm& term, uint64_t value, PmuConfig config) {
  uint64_t* word = field_of(term.field, config);
  if (word == nullptr) return Error{"term '" + term.name + "' targets unknown field '" + term.field + "'"};
  int width = term_width(term);
  if (width < kConfigBits && (value >> width) != 0)
    return Error{"value " + hex(value) + " too big for term '" + term.name + "' (" + std::to_string(width) + " bits)"};
  uint64_t remaining = value;
  for (const BitRange& range : term.bits) {
    int bits = range.high - range.low + 1;
    uint64_t mask = bits >= kConfigBits ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
    *word = (*word & ~(mask << range.low)) | ((remaining & mask) << range.low);
    remaining = bits >= kConfigBits ? 0 : remaining >> bits;
  }
  return config;
}

uint64_t extract_term_value(const PmuFormatTerm& term, const PmuConfig& config) {
  PmuConfig copy = config;
  const uint64_t* word = field_of(term.field, copy);
  if (word == nullptr) return 0;
  uint64_t value = 0;
  int shift = 0;
  for (const BitRange& range : term.bits) {
    int bits = range.high - range.low + 1;
    uint64_t mask = bits >= kConfigBits ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
    value |= ((*word >> range.low) & mask) << shift;
    shift += bits;
  }
  return value;
}

Result<PmuFormatTerm> parse_format_term(const std::string& name, const std::string& spec) {
  std::string_view text = trim(spec);
  size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return Error{"format of term '" + name + "' has no ':' in '" + std::string(text) + "'"};
  PmuFormatTerm term;
  term.name = name;
  term.field = std::string(text.substr(0, colon));
  if (term.field != "config" && term.field != "config1" && term.field != "config2")
    return Error{"format of term '" + name + "' names unknown field '" + term.field + "'"};
  int used = 0;
  for (std::string_view token : split(text.substr(colon + 1), ',')) {
    size_t dash = token.find('-');
    auto low = parse_u64_base(token.substr(0, dash), 10);
    auto high = dash == std::string_view::npos ? low : parse_u64_base(token.substr(dash + 1), 10);
    if (!low || !high || *high < *low || *high >= kConfigBits)
      return Error{"bad bit range '" + std::string(token) + "' in format of term '" + name + "'"};
    term.bits.push_back(BitRange{static_cast<int>(*low), static_cast<int>(*high)});
    used += static_cast<int>(*high - *low + 1);
  }
  if (used > kConfigBits) return Error{"format of term '" + name + "' spans more than 64 bits"};
  return term;
}

Result<SysfsPmu> load_sysfs_pmu(const std::filesystem::path& root, const std::string& name) {
  const std::filesystem::path dir = root / name;
  auto type_text = read_first_line(dir / "type");
  if (!type_text) return type_text.error();
  auto type = parse_u64(trim(*type_text));
  if (!type || *type > UINT32_MAX)
    return Error{"bad PMU type '" + *type_text + "' in " + (dir / "type").string()};
  SysfsPmu pmu;
  pmu.name = name;
  pmu.type = static_cast<uint32_t>(*type);
  if (auto terms = list_directory(dir / "format")) {
    for (const std::string& term_name : *terms) {
      auto contents = read_file(dir / "format" / term_name);
      if (!contents) return contents.error();
      auto term = parse_format_term(term_name, *contents);
      if (!term) return Error{"PMU '" + name + "': " + term.error().message};
      pmu.format.push_back(std::move(term).value());
    }
  }
  if (auto aliases = list_directory(dir / "events")) {
    for (const std::string& alias : *aliases) {
      if (is_alias_companion(alias)) continue;
      auto contents = read_file(dir / "events" / alias);
      if (!contents) continue;  // some aliases are readable by root only; list the rest
      pmu.events.push_back(PmuEventAlias{alias, std::string(trim(*contents)),
                                         read_trimmed_or_empty(dir / "events" / (alias + ".scale")),
                                         read_trimmed_or_empty(dir / "events" / (alias + ".unit"))});
    }
  }
  if (auto caps = list_directory(dir / "caps")) {
    for (const std::string& cap : *caps) pmu.caps[cap] = read_trimmed_or_empty(dir / "caps" / cap);
  }
  pmu.cpumask = read_trimmed_or_empty(dir / "cpumask");
  return pmu;
}

std::vector<SysfsPmu> load_sysfs_pmus(const std::filesystem::path& root) {
  std::vector<SysfsPmu> pmus;
  auto names = list_directory(root);
  if (!names) return pmus;
  for (const std::string& name : *names) {
    if (auto pmu = load_sysfs_pmu(root, name)) pmus.push_back(std::move(pmu).value());
  }
  return pmus;
}

}  // namespace vperf::events
