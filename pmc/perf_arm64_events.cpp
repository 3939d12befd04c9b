#include "pmc/perf_arm64_events.h"

#include <boost/json.hpp>

#include <algorithm>

#include "core/files.h"
#include "core/strings.h"
#include "pmc/xz_text.h"

namespace vperf::events {

namespace {

namespace json = boost::json;

constexpr uint32_t kVariantAndRevision = 0x00f0000f;
constexpr uint32_t kEventCodeMax = 0xffff;  // PMUv3's event field, config:0-15
// The largest table file is ~60 KB; a bound well above it keeps a damaged bundle from
// exhausting memory.
constexpr size_t kMaxTableBytes = 8 << 20;

// "r3p1" as one number that orders as versions do: variant first, then revision.
uint32_t stepping(uint32_t midr) { return ((midr >> 20) & 0xf) << 4 | (midr & 0xf); }

// jevents' fixdesc: a trailing ". " or "." goes.
std::string fix_description(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return std::string(s);
}

std::string string_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

Result<uint32_t> event_code(const std::string& text, const std::string& where) {
  std::string_view s = trim(text);
  std::optional<uint64_t> v = starts_with_nocase(s, "0x") ? parse_u64_base(s.substr(2), 16) : parse_u64(s);
  if (!v) return Error{where + ": EventCode '" + text + "' is not a number"};
  if (*v > kEventCodeMax) return Error{where + ": EventCode " + text + " does not fit PMUv3's 16-bit event field"};
  return static_cast<uint32_t>(*v);
}

Result<PerfmonEvent> resolve_entry(const json::object& o, const std::string& where, const Arm64StandardEvents* standard) {
  PerfmonEvent e;
  e.brief_description = fix_description(string_field(o, "BriefDescription"));
  e.public_description = fix_description(string_field(o, "PublicDescription"));
  const std::string arch_std = string_field(o, "ArchStdEvent");
  if (!arch_std.empty() && standard != nullptr) {
    auto it = standard->find(to_upper(arch_std));
    if (it == standard->end()) return Error{where + ": ArchStdEvent " + arch_std + " is not a standard event"};
    const PerfmonEvent& s = it->second;
    e.name = s.name;
    e.event_codes = s.event_codes;  // the standard event's code always wins, as in jevents
    if (e.brief_description.empty()) e.brief_description = s.brief_description;
    if (e.public_description.empty()) e.public_description = s.public_description;
  } else {
    e.name = string_field(o, "EventName");
    const std::string code = string_field(o, "EventCode");
    if (e.name.empty() || code.empty()) return Error{where + ": an event needs EventName and EventCode (or ArchStdEvent)"};
    Result<uint32_t> c = event_code(code, where + " " + e.name);
    if (!c) return c.error();
    e.event_codes = {*c};
  }
  if (const std::string errata = string_field(o, "Errata"); !errata.empty()) {
    e.brief_description += "  Spec update: " + errata;
    e.public_description += "  Spec update: " + errata;
  }
  return e;
}

Result<std::string> read_table(const std::filesystem::path& path) {
  Result<std::string> bytes = read_file(path, kMaxTableBytes);
  if (!bytes) return Error{bytes.error().describe()};
  if (path.extension() != ".xz") return bytes;
  return decompress_xz(*bytes, kMaxTableBytes, path.string());
}

// The JSON files of a directory (plain or .xz), sorted, as perf's jevents walks them.
std::vector<std::filesystem::path> json_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  Result<std::vector<std::string>> names = list_directory(dir);
  if (!names) return out;
  for (const std::string& name : *names)
    if (name.ends_with(".json") || name.ends_with(".json.xz")) out.push_back(dir / name);
  return out;
}

}  // namespace

Result<std::vector<Arm64MapfileRow>> parse_arm64_mapfile(std::string_view text, const std::string& source) {
  std::vector<Arm64MapfileRow> rows;
  int line_number = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_number;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> cells = split(line, ',');
    const std::string where = source + " line " + std::to_string(line_number);
    if (cells.size() < 4) return Error{where + ": expected MIDR,Version,Filename,EventType"};
    std::string_view key = trim(cells[0]);
    std::optional<uint64_t> midr = starts_with_nocase(key, "0x") ? parse_u64_base(key.substr(2), 16) : std::nullopt;
    if (!midr || *midr > UINT32_MAX) return Error{where + ": '" + std::string(key) + "' is not a 32-bit MIDR"};
    std::string dir(trim(cells[2]));
    // A directory below the bundle, never out of it.
    if (dir.empty() || dir.front() == '/' || dir.find("..") != std::string::npos)
      return Error{where + ": '" + dir + "' is not a directory of the tables"};
    if (trim(cells[3]) != "core") continue;
    rows.push_back({static_cast<uint32_t>(*midr), std::move(dir), line_number});
  }
  return rows;
}

const Arm64MapfileRow* arm64_row_for_midr(const std::vector<Arm64MapfileRow>& rows, uint32_t midr) {
  for (const Arm64MapfileRow& row : rows)
    if ((row.midr & ~kVariantAndRevision) == (midr & ~kVariantAndRevision) && stepping(midr) >= stepping(row.midr))
      return &row;
  return nullptr;
}

Result<PerfmonFile> parse_perf_arm64_json(std::string_view text, const std::string& source,
                                          const Arm64StandardEvents* standard, size_t& skipped_other_pmus) {
  boost::system::error_code ec;
  json::value root = json::parse(text, ec);
  if (ec) return Error{source + ": not JSON (" + ec.message() + ")"};
  if (!root.is_array()) return Error{source + ": expected a JSON array of events"};
  PerfmonFile file;
  file.source = source;
  size_t index = 0;
  for (const json::value& v : root.as_array()) {
    ++index;
    const std::string where = source + " entry " + std::to_string(index);
    if (!v.is_object()) return Error{where + ": not an object"};
    const json::object& o = v.as_object();
    // Metrics (sbsa.json) describe no event; other PMUs' entries are not the core's.
    if (o.contains("MetricName")) continue;
    if (o.contains("Unit") || o.contains("ConfigCode")) {
      ++skipped_other_pmus;
      continue;
    }
    Result<PerfmonEvent> e = resolve_entry(o, where, standard);
    if (!e) return e.error();
    file.events.push_back(std::move(e).value());
  }
  return file;
}

PerfmonImport import_bundled_perf_arm64(const std::filesystem::path& bundle, uint32_t midr) {
  const std::string hint = "vperf's installation is damaged: reinstall it (share/vperf/perf-arm64)";
  Result<std::string> map_text = read_file(bundle / "mapfile.csv");
  if (!map_text) throw UserError("bundled perf arm64 tables: " + map_text.error().describe(), hint);
  Result<std::vector<Arm64MapfileRow>> rows = parse_arm64_mapfile(*map_text, (bundle / "mapfile.csv").string());
  if (!rows) throw UserError("bundled perf arm64 tables: " + rows.error().message, hint);
  PerfmonImport result;
  const Arm64MapfileRow* row = arm64_row_for_midr(*rows, midr);
  if (row == nullptr) {
    result.notes.push_back("perf's arm64 tables (bundled) have no entry for MIDR " + hex_padded(midr, 8) +
                           ": the kernel's sysfs events only");
    return result;
  }
  std::string linux_version;
  if (Result<std::string> provenance = read_file(bundle / "PROVENANCE.md", 1 << 16)) {
    // "- Source: Linux 6.12.117, tools/perf/..."
    if (size_t at = provenance->find("Source: Linux "); at != std::string::npos)
      linux_version = provenance->substr(at + 8, provenance->find(',', at) - at - 8);
  }
  Arm64StandardEvents standard;
  size_t skipped = 0;
  for (const std::filesystem::path& path : json_files(bundle)) {
    Result<std::string> text = read_table(path);
    if (!text) throw UserError("bundled perf arm64 tables: " + text.error().message, hint);
    Result<PerfmonFile> file = parse_perf_arm64_json(*text, path.string(), nullptr, skipped);
    if (!file) throw UserError("bundled perf arm64 tables: " + file.error().message, hint);
    for (PerfmonEvent& e : file->events) standard.emplace(to_upper(e.name), std::move(e));
  }
  const std::vector<std::filesystem::path> files = json_files(bundle / row->dir);
  if (files.empty())
    throw UserError("bundled perf arm64 tables: mapfile.csv line " + std::to_string(row->line) + " names " + row->dir +
                        ", which has no tables",
                    hint);
  for (const std::filesystem::path& path : files) {
    Result<std::string> text = read_table(path);
    if (!text) throw UserError("bundled perf arm64 tables: " + text.error().message, hint);
    // Named as perf's tree names it: arm/neoverse-n1/l1d_cache.json.
    std::string name = (std::filesystem::path(row->dir) / path.filename()).string();
    if (name.ends_with(".xz")) name.resize(name.size() - 3);
    Result<PerfmonFile> file = parse_perf_arm64_json(*text, name, &standard, skipped);
    if (!file) throw UserError("bundled perf arm64 tables: " + file.error().message, hint);
    file->info = "Linux perf's arm64 events" + (linux_version.empty() ? std::string() : " (" + linux_version + ")");
    result.files.push_back(std::move(file).value());
  }
  if (skipped > 0)
    result.notes.push_back(std::to_string(skipped) + " entries of " + row->dir +
                           " belong to other PMUs (uncore units) and are not listed");
  return result;
}

}  // namespace vperf::events
