#pragma once
// Which fields `vperf script` prints for each kind of event: perf 6.1's `perf script -F` model.
//
// perf keeps one field set per output type (hardware, software, tracepoint, hardware cache,
// raw, breakpoint, synthesized, other PMUs), starting from these defaults:
//   hardware, hw cache, raw, breakpoint, other: comm tid cpu time event ip sym symoff dso period
//   software:                                   the same (perf adds bpf-output, not modelled)
//   tracepoint:                                 comm tid cpu time event trace
// "-F a,b" replaces every type's set; "-F sw:a,b" one type's; "+a"/"-a" (without a type, or
// with one) add to / remove from the defaults; a field a type cannot show (trace for anything
// but tracepoints) is ignored with a warning. Then, once the events of the file are known
// (ScriptFieldSelection::resolve), perf's per-file rules apply:
//   - a field the events were not sampled with (cpu without PERF_SAMPLE_CPU, time, tid/pid,
//     ip) is dropped silently when it was a default, and is an error when the user asked for
//     it by name (in the untyped form only, as perf);
//   - sym or dso need ip or addr sampled, symoff needs sym;
//   - with callchains in the file, tracepoints also get ip sym symoff dso (file mode), or
//     ip sym (pipe mode, where perf adds them as each event's attr arrives).
// The events that print nothing (an empty set) are skipped.
#include <linux/perf_event.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::report {

enum ScriptField : uint32_t {
  kFieldComm = 1u << 0,
  kFieldTid = 1u << 1,
  kFieldPid = 1u << 2,
  kFieldTime = 1u << 3,
  kFieldCpu = 1u << 4,
  kFieldEvent = 1u << 5,
  kFieldTrace = 1u << 6,
  kFieldIp = 1u << 7,
  kFieldSym = 1u << 8,
  kFieldDso = 1u << 9,
  kFieldSymOff = 1u << 11,
  kFieldSrcline = 1u << 12,
  kFieldPeriod = 1u << 13,
};
using ScriptFieldSet = uint32_t;

// perf's output types, in perf's order.
enum class ScriptEventType : uint8_t { Hardware, Software, Tracepoint, HardwareCache, Raw, Breakpoint, Synth, Other };
inline constexpr size_t kScriptEventTypes = 8;

ScriptEventType script_event_type(uint32_t attr_type);
// perf's names in messages: "hardware", "software", "tracepoint", "hardware-cache", else "unknown".
std::string_view script_event_type_name(ScriptEventType type);
// "comm", "tid", ... as -F spells them.
std::string_view script_field_name(ScriptField field);
// Every field vperf script supports, comma-separated, for hints.
std::string script_field_names();

// One event of the file, as the resolution needs it.
struct ScriptEvent {
  const perf_event_attr* attr = nullptr;
  std::string name;
};

// The outcome for a whole file: the field set of each output type, and whether callchains are
// printed at all (perf's symbol_conf.use_callchain).
struct ScriptFieldLayout {
  std::array<ScriptFieldSet, kScriptEventTypes> fields{};
  bool use_callchain = true;

  ScriptFieldSet fields_for(uint32_t attr_type) const { return fields[static_cast<size_t>(script_event_type(attr_type))]; }
};

struct ScriptResolveOptions {
  bool pipe = false;            // pipe mode: perf applies its rules per arriving attr
  bool hide_callchain = false;  // perf script -G
};

class ScriptFieldSelection {
 public:
  ScriptFieldSelection();  // perf's defaults

  // Applies one -F argument. Returns perf's warnings (one line each, e.g. "'trace' not valid for
  // software events. Ignoring."); an Error for an unknown or unsupported field, an unknown type
  // prefix, or +/- mixed with plain fields.
  Result<std::vector<std::string>> apply(std::string_view argument);

  // The fields of each type for a file with these events (in the file's order), or an Error
  // naming the field that cannot be printed.
  Result<ScriptFieldLayout> resolve(const std::vector<ScriptEvent>& events, ScriptResolveOptions options) const;

 private:
  struct TypeState {
    ScriptFieldSet fields = 0;
    ScriptFieldSet invalid = 0;
    ScriptFieldSet user_set_fields = 0;
    ScriptFieldSet user_unset_fields = 0;
    bool user_set = false;
    bool wildcard_set = false;
  };
  std::array<TypeState, kScriptEventTypes> types_;
};

}  // namespace vperf::report
