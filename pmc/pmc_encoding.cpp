#include "pmc/pmc_encoding.h"

#include <array>
#include <utility>

#include "core/strings.h"

namespace vperf::events {

namespace {

// Where each single-bit or small field of the "cpu" PMU lives in config (see the header).
constexpr int kUmaskShift = 8;
constexpr int kEdgeBit = 18;
constexpr int kPinControlBit = 19;
constexpr int kAnyThreadBit = 21;
constexpr int kInvertBit = 23;
constexpr int kCmaskShift = 24;
constexpr int kInTxBit = 32;
constexpr int kInTxCheckpointedBit = 33;
constexpr int kAmdEventHighShift = 32;  // AMD event select bits 8-11 live in config:32-35

bool bit(uint64_t v, int n) { return ((v >> n) & 1) != 0; }
uint64_t bit_value(bool on, int n) { return on ? (uint64_t{1} << n) : 0; }

struct MsrTerm {
  uint32_t msr;
  std::string_view term;
};
// The extra MSRs a core event may program, and the cpu/format term that carries their value.
constexpr std::array kMsrTerms{
    MsrTerm{0x1a6, "offcore_rsp"},  // MSR_OFFCORE_RSP_0
    MsrTerm{0x1a7, "offcore_rsp"},  // MSR_OFFCORE_RSP_1
    MsrTerm{0x3f6, "ldlat"},        // MSR_PEBS_LD_LAT_THRESHOLD
    MsrTerm{0x3f7, "frontend"},     // MSR_PEBS_FRONTEND
};

struct EventCodeTerm {
  uint32_t event_code;
  std::string_view term;
};
// Event selects that take a config1 value on Intel cores. 0xb7/0xbb are OFFCORE_RESPONSE_0/1
// up to Skylake; Ice Lake and later moved them to 0x2a/0x2b (OCR.*). 0xcd is
// MEM_TRANS_RETIRED.LOAD_LATENCY and 0xc6 FRONTEND_RETIRED on every generation that has them.
constexpr std::array kEventCodeTerms{
    EventCodeTerm{0xb7, "offcore_rsp"}, EventCodeTerm{0xbb, "offcore_rsp"},
    EventCodeTerm{0x2a, "offcore_rsp"}, EventCodeTerm{0x2b, "offcore_rsp"},
    EventCodeTerm{0xcd, "ldlat"},       EventCodeTerm{0xc6, "frontend"},
};

struct FlagTerm {
  std::string_view name;
  int bit;
};
constexpr std::array kFlagTerms{
    FlagTerm{"edge", kEdgeBit},   FlagTerm{"pc", kPinControlBit},  FlagTerm{"any", kAnyThreadBit},
    FlagTerm{"inv", kInvertBit},  FlagTerm{"in_tx", kInTxBit},     FlagTerm{"in_tx_cp", kInTxCheckpointedBit},
};

uint32_t event_field_max(CoreLayout layout) {
  switch (layout) {
    case CoreLayout::Amd: return 0xfff;
    case CoreLayout::Arm: return 0xffff;
    case CoreLayout::Intel: break;
  }
  return 0xff;
}

// arm64 core PMU names: armv8_pmuv3, armv8_pmuv3_0, armv8_cortex_a72, armv9_neoverse_n2 ...
bool is_arm_core_pmu_name(std::string_view pmu) { return pmu.starts_with("armv8_") || pmu.starts_with("armv9_"); }

}  // namespace

std::string_view core_pmu_name(CoreLayout layout) { return layout == CoreLayout::Arm ? "armv8_pmuv3_0" : "cpu"; }

CoreEventFields split_core_config(uint64_t config, CoreLayout layout) {
  CoreEventFields f;
  if (layout == CoreLayout::Arm) {
    f.event = static_cast<uint32_t>(config & 0xffff);
    return f;
  }
  f.event = static_cast<uint32_t>(config & 0xff);
  if (layout == CoreLayout::Amd) f.event |= static_cast<uint32_t>((config >> kAmdEventHighShift) & 0xf) << 8;
  f.umask = static_cast<uint32_t>((config >> kUmaskShift) & 0xff);
  f.edge = bit(config, kEdgeBit);
  f.pin_control = bit(config, kPinControlBit);
  f.any_thread = bit(config, kAnyThreadBit);
  f.invert = bit(config, kInvertBit);
  f.cmask = static_cast<uint32_t>((config >> kCmaskShift) & 0xff);
  if (layout == CoreLayout::Intel) {
    f.in_tx = bit(config, kInTxBit);
    f.in_tx_checkpointed = bit(config, kInTxCheckpointedBit);
  }
  return f;
}

uint64_t join_core_config(const CoreEventFields& f, CoreLayout layout) {
  if (layout == CoreLayout::Arm) return f.event & 0xffff;
  uint64_t config = f.event & 0xff;
  if (layout == CoreLayout::Amd) config |= uint64_t{(f.event >> 8) & 0xf} << kAmdEventHighShift;
  config |= uint64_t{f.umask & 0xff} << kUmaskShift;
  config |= bit_value(f.edge, kEdgeBit) | bit_value(f.pin_control, kPinControlBit) |
            bit_value(f.any_thread, kAnyThreadBit) | bit_value(f.invert, kInvertBit);
  config |= uint64_t{f.cmask & 0xff} << kCmaskShift;
  config |= bit_value(f.in_tx, kInTxBit) | bit_value(f.in_tx_checkpointed, kInTxCheckpointedBit);
  return config;
}

std::string_view config1_term_for_msr(uint32_t msr_index) {
  for (const MsrTerm& t : kMsrTerms)
    if (t.msr == msr_index) return t.term;
  return {};
}

std::string_view config1_term_for_event_code(uint32_t event_code, CoreLayout layout) {
  if (layout == CoreLayout::Arm) return {};
  for (const EventCodeTerm& t : kEventCodeTerms)
    if (t.event_code == event_code) return t.term;
  return {};
}

std::string perf_raw_syntax(uint64_t config) { return "r" + hex(config).substr(2); }

std::string perf_cpu_pmu_syntax(uint64_t config, uint64_t config1, std::string_view config1_term,
                                CoreLayout layout, std::string_view pmu) {
  if (pmu.empty()) pmu = core_pmu_name(layout);
  CoreEventFields f = split_core_config(config, layout);
  if (layout == CoreLayout::Arm) {
    std::string out = std::string(pmu) + "/event=" + hex(f.event);
    if (config1 != 0) out += ",config1=" + hex(config1);
    if ((config & ~uint64_t{0xffff}) != 0) out += ",config=" + hex(config);
    return out + "/";
  }
  // perf list prints umask even when zero ("cpu/event=0xc0,umask=0x00/"), so does vperf.
  std::string out = std::string(pmu) + "/event=" + hex_padded(f.event, f.event > 0xff ? 3 : 2) +
                    ",umask=" + hex_padded(f.umask, 2);
  if (f.cmask != 0) out += ",cmask=" + hex_padded(f.cmask, 2);
  for (const FlagTerm& t : kFlagTerms)
    if (bit(config, t.bit) && !(layout == CoreLayout::Amd && t.bit >= 32)) out += "," + std::string(t.name);
  if (config1 != 0) out += "," + std::string(config1_term.empty() ? "config1" : config1_term) + "=" + hex(config1);
  // Bits of config that no term names (a malformed or foreign encoding) must not vanish.
  uint64_t leftover = config & ~join_core_config(f, layout);
  if (leftover != 0) out += ",config=" + hex(config);
  return out + "/";
}

namespace {

Result<uint64_t> term_value(std::string_view term, std::string_view value, uint64_t max) {
  std::optional<uint64_t> v = parse_u64(value);
  if (!v) return Error{"'" + std::string(term) + "': '" + std::string(value) + "' is not a number"};
  if (*v > max) return Error{"'" + std::string(term) + "': " + std::string(value) + " does not fit (max " + hex(max) + ")"};
  return *v;
}

Result<RawEncoding> parse_pmu_terms(std::string_view text, std::string_view body, CoreLayout layout) {
  RawEncoding raw;
  raw.text = std::string(text);
  CoreEventFields fields;
  std::optional<uint64_t> whole_config;
  for (std::string_view term : split(body, ',')) {
    term = trim(term);
    if (term.empty()) return Error{"empty term in '" + std::string(text) + "'"};
    size_t eq = term.find('=');
    std::string_view key = term.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view{} : term.substr(eq + 1);
    bool is_flag = false;
    for (const FlagTerm& t : kFlagTerms) {
      if (key != t.name || layout == CoreLayout::Arm || (layout == CoreLayout::Amd && t.bit >= kInTxBit)) continue;
      is_flag = true;
      uint64_t on = 1;
      if (eq != std::string_view::npos) {
        Result<uint64_t> v = term_value(key, value, 1);
        if (!v) return v.error();
        on = *v;
      }
      CoreEventFields with = split_core_config(join_core_config(fields, layout) | bit_value(on != 0, t.bit), layout);
      fields = with;
    }
    if (is_flag) continue;
    if (eq == std::string_view::npos) return Error{"unknown term '" + std::string(term) + "'"};
    if (key == "event") {
      Result<uint64_t> v = term_value(key, value, event_field_max(layout));
      if (!v) return v.error();
      fields.event = static_cast<uint32_t>(*v);
    } else if (layout == CoreLayout::Arm && key != "config" && key != "config1") {
      return Error{"unknown term '" + std::string(key) + "' (an arm64 event has event=, config= and config1= only)"};
    } else if (key == "umask") {
      Result<uint64_t> v = term_value(key, value, 0xff);
      if (!v) return v.error();
      fields.umask = static_cast<uint32_t>(*v);
    } else if (key == "cmask") {
      Result<uint64_t> v = term_value(key, value, 0xff);
      if (!v) return v.error();
      fields.cmask = static_cast<uint32_t>(*v);
    } else if (key == "config") {
      Result<uint64_t> v = term_value(key, value, UINT64_MAX);
      if (!v) return v.error();
      whole_config = *v;
    } else if (key == "config1" || key == "offcore_rsp" || key == "ldlat" || key == "frontend") {
      uint64_t max = key == "ldlat" ? 0xffff : key == "frontend" ? 0xffffff : UINT64_MAX;
      Result<uint64_t> v = term_value(key, value, max);
      if (!v) return v.error();
      raw.config1 = *v;
      raw.has_config1 = true;
    } else {
      return Error{"unknown term '" + std::string(key) + "'"};
    }
  }
  raw.config = join_core_config(fields, layout) | whole_config.value_or(0);
  return raw;
}

}  // namespace

Result<RawEncoding> parse_raw_encoding(std::string_view text, CoreLayout layout) {
  std::string_view t = trim(text);
  auto fail = [&](const std::string& why) -> Result<RawEncoding> {
    return Error{"cannot parse raw encoding '" + std::string(text) + "': " + why};
  };
  if (t.empty()) return fail("it is empty");
  if (t.size() > 1 && (t[0] == 'r' || t[0] == 'R') && t.find('/') == std::string_view::npos) {
    std::string_view digits = t.substr(1);
    if (digits.size() > 16) return fail("more than 16 hex digits");
    std::optional<uint64_t> v = parse_u64_base(digits, 16);
    if (!v) return fail("'" + std::string(digits) + "' is not hexadecimal");
    return RawEncoding{*v, 0, false, std::string(text)};
  }
  if (starts_with_nocase(t, "0x")) {
    std::optional<uint64_t> v = parse_u64(t);
    if (!v) return fail("'" + std::string(t) + "' is not a hexadecimal number");
    return RawEncoding{*v, 0, false, std::string(text)};
  }
  size_t open = t.find('/');
  if (open != std::string_view::npos) {
    std::string_view pmu = t.substr(0, open);
    if (layout == CoreLayout::Arm && !is_arm_core_pmu_name(pmu))
      return fail("PMU '" + std::string(pmu) + "' is not an arm64 core PMU (armv8_pmuv3, armv8_pmuv3_0, ...)");
    if (layout != CoreLayout::Arm && pmu != "cpu" && pmu != "cpu_core" && pmu != "cpu_atom")
      return fail("PMU '" + std::string(pmu) + "' is not a core PMU (cpu, cpu_core or cpu_atom)");
    if (t.back() != '/' || t.size() < open + 2) return fail("missing closing '/'");
    std::string_view body = t.substr(open + 1, t.size() - open - 2);
    if (body.empty()) return fail("no terms between the slashes");
    Result<RawEncoding> parsed = parse_pmu_terms(text, body, layout);
    if (!parsed) return fail(parsed.error().message);
    return parsed;
  }
  return fail(layout == CoreLayout::Arm ? "expected rNNN (hex), 0xNNN or armv8_pmuv3/event=0x../"
                                        : "expected rNNN (hex), 0xNNN or cpu/event=0x..,umask=0x../");
}

SysfsPmu core_pmu_for_layout(CoreLayout layout) {
  // name, sysfs format spec: the kernel's arch/x86/events format attributes.
  static constexpr std::pair<const char*, const char*> kIntel[] = {
      {"event", "config:0-7"},      {"umask", "config:8-15"},      {"edge", "config:18"},
      {"pc", "config:19"},          {"any", "config:21"},          {"inv", "config:23"},
      {"cmask", "config:24-31"},    {"in_tx", "config:32"},        {"in_tx_cp", "config:33"},
      {"offcore_rsp", "config1:0-63"}, {"ldlat", "config1:0-15"}, {"frontend", "config1:0-23"}};
  static constexpr std::pair<const char*, const char*> kArm[] = {
      {"event", "config:0-15"}, {"long", "config1:0"}, {"rdpmc", "config1:1"}};
  static constexpr std::pair<const char*, const char*> kAmd[] = {
      {"event", "config:0-7,32-35"}, {"umask", "config:8-15"}, {"edge", "config:18"},
      {"inv", "config:23"},          {"cmask", "config:24-31"}};
  SysfsPmu pmu;
  pmu.name = std::string(core_pmu_name(layout));
  pmu.type = kPerfTypeRaw;
  auto add = [&pmu](const auto& table) {
    for (const auto& [name, spec] : table) pmu.format.push_back(parse_format_term(name, spec).value());
  };
  if (layout == CoreLayout::Intel)
    add(kIntel);
  else if (layout == CoreLayout::Amd)
    add(kAmd);
  else
    add(kArm);
  return pmu;
}

}  // namespace vperf::events
