#include "pmc/perfmon_mapfile.h"

#include <array>
#include <bitset>
#include <cctype>
#include <optional>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::events {

namespace {

constexpr std::array kEventFileTypes{std::string_view{"core"}, std::string_view{"hybridcore"},
                                     std::string_view{"uncore"}, std::string_view{"uncore experimental"}};

// Experimental uncore files are often left out of partial checkouts; their absence is a note.
bool is_optional_file_type(std::string_view event_type) { return event_type == "uncore experimental"; }

}  // namespace

Result<std::vector<MapfileEntry>> parse_mapfile(std::string_view text, const std::string& source) {
  std::vector<MapfileEntry> out;
  int line_no = 0;
  bool header_seen = false;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    std::vector<std::string_view> cols = split(line, ',');
    if (!header_seen) {
      header_seen = true;
      if (!cols.empty() && trim(cols[0]) == "Family-model") continue;  // the header row
    }
    if (cols.size() < 4)
      return Error{source + ":" + std::to_string(line_no) + ": expected at least 4 columns, found " +
                   std::to_string(cols.size())};
    MapfileEntry e;
    e.family_model = std::string(trim(cols[0]));
    e.version = std::string(trim(cols[1]));
    e.filename = std::string(trim(cols[2]));
    e.event_type = std::string(trim(cols[3]));
    if (cols.size() > 4) e.core_type = std::string(trim(cols[4]));
    e.line = line_no;
    if (e.family_model.empty() || e.filename.empty())
      return Error{source + ":" + std::to_string(line_no) + ": empty Family-model or Filename"};
    out.push_back(std::move(e));
  }
  if (out.empty()) return Error{source + ": no entries"};
  return out;
}

namespace {

// Intel's mapfile keys use a small part of regular-expression syntax: literal characters, '.',
// character classes with ranges ("[56789A-F]") and groups of alternatives ("(3C|45|46)", whose
// alternatives use the same atoms, no nesting). They are matched here by carrying the set of
// reachable text positions through the key, so the work is length(key) x length(text) whatever
// the key says; a key that uses anything else (quantifiers, nesting, escapes) matches nothing.
// (A backtracking std::regex ran for minutes on a hostile key such as "(.*)*(.*)*X".)
constexpr size_t kMaxText = 63;  // a CPU signature key is ~25 characters
using Positions = std::bitset<kMaxText + 1>;

class KeyMatcher {
 public:
  KeyMatcher(std::string_view key, std::string_view text) : key_(key), text_(text) {}

  // True when the whole key matches the whole text (case-insensitively, as Intel's tools do).
  bool matches() {
    if (text_.size() > kMaxText) return false;
    Positions start;
    start.set(0);
    std::optional<Positions> end = sequence(start, /*in_group=*/false);
    return end && at_ == key_.size() && end->test(text_.size());
  }

 private:
  // Atoms until the end of the key, or until '|' or ')' inside a group.
  std::optional<Positions> sequence(Positions from, bool in_group) {
    while (at_ < key_.size()) {
      char c = key_[at_];
      if (c == '|' || c == ')') {
        if (!in_group) return std::nullopt;
        return from;
      }
      std::optional<Positions> next = c == '(' ? group(from, in_group) : atom(from);
      if (!next) return std::nullopt;
      from = *next;
    }
    if (in_group) return std::nullopt;  // "(" never closed
    return from;
  }

  std::optional<Positions> group(Positions from, bool nested) {
    if (nested) return std::nullopt;
    ++at_;  // '('
    Positions reached;
    for (;;) {
      std::optional<Positions> alternative = sequence(from, /*in_group=*/true);
      if (!alternative) return std::nullopt;
      reached |= *alternative;
      if (key_[at_++] == ')') return reached;
    }
  }

  // One literal, '.' or class: every position that can consume it moves one character on.
  std::optional<Positions> atom(Positions from) {
    char c = key_[at_];
    if (c == '*' || c == '+' || c == '?' || c == '{' || c == '\\' || c == ']') return std::nullopt;
    std::string_view cls;
    if (c == '[') {
      size_t close = key_.find(']', at_ + 1);
      if (close == std::string_view::npos || close == at_ + 1) return std::nullopt;
      cls = key_.substr(at_ + 1, close - at_ - 1);
      at_ = close + 1;
    } else {
      ++at_;
    }
    Positions to;
    for (size_t p = 0; p < text_.size(); ++p) {
      if (!from.test(p)) continue;
      char t = upper(text_[p]);
      bool ok = c == '[' ? in_class(cls, t) : (c == '.' || upper(c) == t);
      if (ok) to.set(p + 1);
    }
    return to;
  }

  static bool in_class(std::string_view cls, char t) {
    for (size_t i = 0; i < cls.size(); ++i) {
      if (i + 2 < cls.size() && cls[i + 1] == '-') {
        if (upper(cls[i]) <= t && t <= upper(cls[i + 2])) return true;
        i += 2;
      } else if (upper(cls[i]) == t) {
        return true;
      }
    }
    return false;
  }

  static char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

  std::string_view key_;
  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

bool mapfile_key_matches(std::string_view key, const CpuSignature& cpu) {
  CpuSignature without_stepping = cpu;
  without_stepping.stepping.reset();
  if (KeyMatcher(key, without_stepping.mapfile_key()).matches()) return true;
  return cpu.stepping.has_value() && KeyMatcher(key, cpu.mapfile_key()).matches();
}

bool is_event_file_type(std::string_view event_type) {
  for (std::string_view t : kEventFileTypes)
    if (equals_nocase(t, event_type)) return true;
  return false;
}

std::vector<MapfileEntry> select_event_files(const std::vector<MapfileEntry>& entries, const CpuSignature& cpu) {
  std::vector<MapfileEntry> out;
  for (const MapfileEntry& e : entries)
    if (is_event_file_type(e.event_type) && mapfile_key_matches(e.family_model, cpu)) out.push_back(e);
  return out;
}

namespace {

// Where a mapfile row's file is in a checkout: as named, or compressed beside that name (the
// bundled tables, pmc/perfmon_bundle.h, keep every file as FILE.xz).
std::optional<std::filesystem::path> checkout_file(const std::filesystem::path& root, const MapfileEntry& entry) {
  std::filesystem::path plain = root / std::filesystem::path(entry.filename).relative_path();
  std::error_code ec;
  if (std::filesystem::exists(plain, ec)) return plain;
  std::filesystem::path compressed = plain;
  compressed += ".xz";
  if (std::filesystem::exists(compressed, ec)) return compressed;
  return std::nullopt;
}

Result<std::vector<MapfileEntry>> read_mapfile(const std::filesystem::path& root) {
  std::filesystem::path mapfile = root / "mapfile.csv";
  Result<std::string> text = read_file(mapfile);
  if (!text) return Error{text.error().describe()};
  return parse_mapfile(*text, mapfile.string());
}

}  // namespace

PerfmonImport import_perfmon(const std::filesystem::path& path, const std::optional<CpuSignature>& cpu) {
  PerfmonImport result;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    if (!std::filesystem::exists(path, ec))
      throw UserError("--perfmon " + path.string() + ": no such file or directory",
                      "give a perfmon JSON file or a perfmon checkout root that holds mapfile.csv");
    Result<PerfmonFile> file = load_perfmon_file(path);
    if (!file) throw UserError(file.error().message, "fix or replace the file; it must be Intel perfmon JSON");
    result.files.push_back(std::move(file).value());
    return result;
  }

  if (!std::filesystem::exists(path / "mapfile.csv", ec))
    throw UserError("--perfmon " + path.string() + ": " + (path / "mapfile.csv").string() + " does not exist",
                    "a perfmon directory must be a checkout root with mapfile.csv (github.com/intel/perfmon)");
  Result<std::vector<MapfileEntry>> entries = read_mapfile(path);
  if (!entries) throw UserError(entries.error().message, "mapfile.csv must be Intel perfmon's CSV");
  if (!cpu)
    throw usage_error("--perfmon " + path.string() + ": no CPU signature to choose files with",
                      "pass a --model that vperf knows (e.g. ivb, skx, spr) or a single JSON file");
  std::vector<MapfileEntry> chosen = select_event_files(*entries, *cpu);
  if (chosen.empty())
    throw UserError("mapfile.csv has no event files for " + cpu->mapfile_key(),
                    "this perfmon checkout does not describe the CPU; pass --perfmon FILE.json instead");
  for (const MapfileEntry& e : chosen) {
    std::optional<std::filesystem::path> file_path = checkout_file(path, e);
    if (!file_path) {
      if (is_optional_file_type(e.event_type)) {
        result.notes.push_back("skipped " + e.filename + " (" + e.event_type +
                               "): listed in mapfile.csv but not in this checkout");
        continue;
      }
      throw UserError("mapfile.csv line " + std::to_string(e.line) + " names " + e.filename + ", which is missing",
                      "use a complete perfmon checkout or pass the JSON file itself");
    }
    Result<PerfmonFile> file = load_perfmon_file(*file_path);
    if (!file) throw UserError(file.error().message, "fix or replace the file; it must be Intel perfmon JSON");
    result.files.push_back(std::move(file).value());
  }
  return result;
}

PerfmonImport import_bundled_perfmon(const std::filesystem::path& bundle, const CpuSignature& cpu) {
  const std::string hint =
      "vperf's installation is damaged: reinstall it, or pass --perfmon DIR with a checkout of github.com/intel/perfmon";
  Result<std::vector<MapfileEntry>> entries = read_mapfile(bundle);
  if (!entries) throw UserError("bundled perfmon tables: " + entries.error().message, hint);
  PerfmonImport result;
  std::vector<MapfileEntry> chosen = select_event_files(*entries, cpu);
  if (chosen.empty()) {
    result.notes.push_back("Intel's perfmon tables (bundled) have no entry for " + cpu.mapfile_key() +
                           ": libpfm4's names only");
    return result;
  }
  for (const MapfileEntry& e : chosen) {
    std::optional<std::filesystem::path> file_path = checkout_file(bundle, e);
    if (!file_path)
      throw UserError("bundled perfmon tables: " + (bundle / "mapfile.csv").string() + " line " + std::to_string(e.line) +
                          " names " + e.filename + ", which is missing",
                      hint);
    Result<PerfmonFile> file = load_perfmon_file(*file_path);
    if (!file) throw UserError("bundled perfmon tables: " + file.error().message, hint);
    result.files.push_back(std::move(file).value());
  }
  return result;
}

}  // namespace vperf::events
