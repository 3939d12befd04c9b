#include "pmc/perfmon_json.h"

#include <boost/json.hpp>

#include "core/files.h"
#include "core/strings.h"
#include "pmc/xz_text.h"

namespace vperf::events {

namespace {

namespace json = boost::json;

// One event's fields, read with error messages that say where the problem is.
class EventFields {
 public:
  EventFields(const json::object& obj, const std::string& where) : obj_(obj), where_(where) {}

  // The field as text: JSON strings as they are, JSON numbers printed; nullopt when absent.
  Result<std::optional<std::string>> text(std::string_view key) const {
    const json::value* v = obj_.if_contains(key);
    if (v == nullptr || v->is_null()) return std::optional<std::string>{};
    if (v->is_string()) return std::optional<std::string>{std::string(v->as_string())};
    if (v->is_int64()) return std::optional<std::string>{std::to_string(v->as_int64())};
    if (v->is_uint64()) return std::optional<std::string>{std::to_string(v->as_uint64())};
    return fail(key, "is neither a string nor a number");
  }

  // An unsigned number ("0x1A", "12"); absent, empty, "na" and "null" give `fallback`.
  Result<uint64_t> number(std::string_view key, uint64_t fallback, uint64_t max) const {
    Result<std::optional<std::string>> t = text(key);
    if (!t) return t.error();
    if (!t->has_value()) return fallback;
    std::string_view s = trim(**t);
    if (s.empty() || equals_nocase(s, "na") || equals_nocase(s, "null")) return fallback;
    std::optional<uint64_t> v = starts_with_nocase(s, "0x") ? parse_u64_base(s.substr(2), 16) : parse_u64(s);
    if (!v) return fail(key, "'" + std::string(s) + "' is not a number");
    if (*v > max) return fail(key, std::string(s) + " is out of range (max " + hex(max) + ")");
    return *v;
  }

  // A comma-separated list of numbers ("0xB7, 0xBB", "0x1a6,0x1a7"); "0" alone is an empty list
  // only when `zero_is_none` (MSRIndex "0" means no MSR).
  Result<std::vector<uint32_t>> number_list(std::string_view key, bool zero_is_none) const {
    Result<std::optional<std::string>> t = text(key);
    if (!t) return t.error();
    std::vector<uint32_t> out;
    if (!t->has_value()) return out;
    std::string_view s = trim(**t);
    if (s.empty() || equals_nocase(s, "na") || equals_nocase(s, "null")) return out;
    for (std::string_view part : split(s, ',')) {
      part = trim(part);
      std::optional<uint64_t> v = starts_with_nocase(part, "0x") ? parse_u64_base(part.substr(2), 16) : parse_u64(part);
      if (!v || *v > UINT32_MAX) return fail(key, "'" + std::string(part) + "' is not a number");
      if (!(zero_is_none && *v == 0)) out.push_back(static_cast<uint32_t>(*v));
    }
    return out;
  }

  Result<bool> flag(std::string_view key) const {
    Result<uint64_t> v = number(key, 0, 1);
    if (!v) return v.error();
    return *v == 1;
  }

  template <typename T>
  Error fail(std::string_view key, const T& why) const {
    return Error{where_ + ": field '" + std::string(key) + "' " + std::string(why)};
  }

 private:
  const json::object& obj_;
  const std::string& where_;
};

std::optional<int> fixed_counter_number(std::string_view counter) {
  // "Fixed counter 2"; also "FIXED_CTR2"-style spellings are not used by Intel's files.
  constexpr std::string_view prefix = "fixed counter";
  if (!starts_with_nocase(counter, prefix)) return std::nullopt;
  std::optional<uint64_t> n = parse_u64(trim(counter.substr(prefix.size())));
  if (!n || *n > 15) return std::nullopt;
  return static_cast<int>(*n);
}

Result<PerfmonEvent> parse_event(const json::object& obj, const std::string& where) {
  EventFields f(obj, where);
  PerfmonEvent e;
  Result<std::optional<std::string>> name = f.text("EventName");
  if (!name) return name.error();
  if (!name->has_value() || trim(**name).empty()) return Error{where + ": has no EventName"};
  e.name = std::string(trim(**name));
  // Messages from here on name the event too.
  std::string named = where + " (" + e.name + ")";
  EventFields g(obj, named);

  Result<std::vector<uint32_t>> codes = g.number_list("EventCode", false);
  if (!codes) return codes.error();
  if (codes->empty()) return g.fail("EventCode", "is missing");
  for (uint32_t c : *codes)
    if (c > 0xfff) return g.fail("EventCode", hex(c) + " is out of range (max 0xfff)");
  e.event_codes = *codes;

  struct NumberField {
    std::string_view key;
    uint64_t max;
    uint64_t* target;
  };
  Result<std::vector<uint32_t>> umasks = g.number_list("UMask", false);
  if (!umasks) return umasks.error();
  for (uint32_t u : *umasks)
    if (u > 0xff) return g.fail("UMask", hex(u) + " is out of range (max 0xff)");
  if (!umasks->empty()) {
    e.umask = umasks->front();
    e.umask_alternatives.assign(umasks->begin() + 1, umasks->end());
  }

  uint64_t cmask = 0, pebs = 0, precise = 0;
  for (const NumberField& nf : {NumberField{"UMaskExt", UINT64_MAX, &e.umask_ext},
                                NumberField{"CounterMask", 0xff, &cmask}, NumberField{"MSRValue", UINT64_MAX, &e.msr_value},
                                NumberField{"PEBS", 3, &pebs}, NumberField{"Precise", 3, &precise},
                                NumberField{"SampleAfterValue", UINT64_MAX, &e.sample_after_value}}) {
    Result<uint64_t> v = g.number(nf.key, 0, nf.max);
    if (!v) return v.error();
    *nf.target = *v;
  }
  e.counter_mask = static_cast<uint32_t>(cmask);
  e.pebs = static_cast<int>(pebs != 0 ? pebs : precise);

  struct FlagField {
    std::string_view key;
    bool* target;
  };
  for (const FlagField& ff : {FlagField{"Invert", &e.invert}, FlagField{"EdgeDetect", &e.edge_detect},
                              FlagField{"AnyThread", &e.any_thread}, FlagField{"Deprecated", &e.deprecated}}) {
    Result<bool> v = g.flag(ff.key);
    if (!v) return v.error();
    *ff.target = *v;
  }

  Result<std::vector<uint32_t>> msrs = g.number_list("MSRIndex", true);
  if (!msrs) return msrs.error();
  e.msr_indexes = *msrs;

  struct TextField {
    std::string_view key;
    std::string* target;
  };
  for (const TextField& tf : {TextField{"Counter", &e.counter}, TextField{"BriefDescription", &e.brief_description},
                              TextField{"PublicDescription", &e.public_description}, TextField{"Unit", &e.unit}}) {
    Result<std::optional<std::string>> v = g.text(tf.key);
    if (!v) return v.error();
    if (v->has_value()) *tf.target = **v;
  }
  e.fixed_counter = fixed_counter_number(e.counter);

  Result<std::optional<std::string>> pdist = g.text("PDISTCounter");
  if (!pdist) return pdist.error();
  if (pdist->has_value()) {
    std::string_view p = trim(**pdist);
    e.precise_distribution = !p.empty() && !equals_nocase(p, "na") && !equals_nocase(p, "null") && p != "0";
  }
  return e;
}

}  // namespace

Result<PerfmonFile> parse_perfmon_json(std::string_view text, const std::string& source) {
  boost::system::error_code ec;
  json::value root = json::parse(text, ec);
  if (ec) return Error{source + ": not valid JSON: " + ec.message()};

  PerfmonFile file;
  file.source = source;
  const json::array* events = nullptr;
  if (root.is_array()) {
    events = &root.as_array();
  } else if (root.is_object()) {
    const json::object& top = root.as_object();
    if (const json::value* header = top.if_contains("Header"); header && header->is_object()) {
      const json::object& h = header->as_object();
      if (const json::value* info = h.if_contains("Info"); info && info->is_string()) file.info = std::string(info->as_string());
      if (const json::value* ver = h.if_contains("Version"); ver && ver->is_string()) file.version = std::string(ver->as_string());
    }
    const json::value* ev = top.if_contains("Events");
    if (ev == nullptr) return Error{source + ": no \"Events\" array"};
    if (!ev->is_array()) return Error{source + ": \"Events\" is not an array"};
    events = &ev->as_array();
  } else {
    return Error{source + ": expected an object with \"Events\" or an array of events"};
  }

  file.events.reserve(events->size());
  for (size_t i = 0; i < events->size(); ++i) {
    std::string where = source + ": event #" + std::to_string(i + 1);
    const json::value& item = (*events)[i];
    if (!item.is_object()) return Error{where + ": is not an object"};
    Result<PerfmonEvent> e = parse_event(item.as_object(), where);
    if (!e) return e.error();
    file.events.push_back(std::move(e).value());
  }
  return file;
}

Result<PerfmonFile> load_perfmon_file(const std::filesystem::path& path) {
  Result<std::string> text = read_file(path);
  if (!text) return Error{text.error().describe()};
  if (path.extension() == ".xz") {
    // The same bound as an uncompressed file: Intel's largest table is ~2.6 MB.
    text = decompress_xz(*text, kMaxWholeFileBytes, path.string());
    if (!text) return text.error();
  }
  return parse_perfmon_json(*text, path.string());
}

}  // namespace vperf::events
