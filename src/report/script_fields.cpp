#include "report/script_fields.h"

#include <optional>

namespace vperf::report {

namespace {

struct FieldName {
  std::string_view name;
  ScriptField field;
};

// In perf's all_output_options order (the order hints list them in).
constexpr FieldName kFields[] = {
    {"comm", kFieldComm}, {"tid", kFieldTid},     {"pid", kFieldPid},       {"time", kFieldTime},
    {"cpu", kFieldCpu},   {"event", kFieldEvent}, {"trace", kFieldTrace},   {"ip", kFieldIp},
    {"sym", kFieldSym},   {"dso", kFieldDso},     {"symoff", kFieldSymOff}, {"srcline", kFieldSrcline},
    {"period", kFieldPeriod},
};

// perf script fields vperf does not print: named so the error says "not supported" rather
// than "unknown".
constexpr std::string_view kUnsupportedPerfFields[] = {
    "addr",     "iregs",      "uregs",   "brstack",        "brstacksym",     "data_src",
    "weight",   "bpf-output",  "callindent", "insn",    "insnlen",        "brstackinsn",    "brstackoff",
    "synth",    "phys_addr",   "metric",     "misc",    "srccode",        "ipc",            "tod",
    "data_page_size", "code_page_size", "ins_lat", "brstackinsnlen", "machine_pid", "vcpu", "cgroup",
    "flags",    "dsoff",       "retire_lat", "disasm",  "brstackdisasm",  "brcntr",
};

constexpr ScriptFieldSet kSampleDefaults = kFieldComm | kFieldTid | kFieldCpu | kFieldTime | kFieldEvent | kFieldIp |
                                           kFieldSym | kFieldSymOff | kFieldDso | kFieldPeriod;
constexpr ScriptFieldSet kTracepointDefaults = kFieldComm | kFieldTid | kFieldCpu | kFieldTime | kFieldEvent | kFieldTrace;

std::optional<ScriptField> field_by_name(std::string_view name) {
  for (const FieldName& f : kFields)
    if (f.name == name) return f.field;
  return std::nullopt;
}

bool is_dummy(const perf_event_attr& attr) {
  return attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_DUMMY;
}

size_t index_of(ScriptEventType type) { return static_cast<size_t>(type); }

}  // namespace

ScriptEventType script_event_type(uint32_t attr_type) {
  switch (attr_type) {
    case PERF_TYPE_HARDWARE: return ScriptEventType::Hardware;
    case PERF_TYPE_SOFTWARE: return ScriptEventType::Software;
    case PERF_TYPE_TRACEPOINT: return ScriptEventType::Tracepoint;
    case PERF_TYPE_HW_CACHE: return ScriptEventType::HardwareCache;
    case PERF_TYPE_RAW: return ScriptEventType::Raw;
    case PERF_TYPE_BREAKPOINT: return ScriptEventType::Breakpoint;
    case 0xffffffffu: return ScriptEventType::Synth;  // PERF_TYPE_SYNTH (perf's own, for AUX data)
    default: return ScriptEventType::Other;
  }
}

std::string_view script_event_type_name(ScriptEventType type) {
  switch (type) {
    case ScriptEventType::Hardware: return "hardware";
    case ScriptEventType::Software: return "software";
    case ScriptEventType::Tracepoint: return "tracepoint";
    case ScriptEventType::HardwareCache: return "hardware-cache";
    default: return "unknown";
  }
}

std::string_view script_field_name(ScriptField field) {
  for (const FieldName& f : kFields)
    if (f.field == field) return f.name;
  return "";
}

std::string script_field_names() {
  std::string names;
  for (const FieldName& f : kFields) {
    if (!names.empty()) names += ',';
    names += f.name;
  }
  return names;
}

ScriptFieldSelection::ScriptFieldSelection() {
  for (size_t i = 0; i < kScriptEventTypes; ++i) {
    types_[i].fields = kSampleDefaults;
    types_[i].invalid = kFieldTrace;
  }
  types_[index_of(ScriptEventType::Tracepoint)].fields = kTracepointDefaults;
  types_[index_of(ScriptEventType::Tracepoint)].invalid = 0;
  types_[index_of(ScriptEventType::Synth)].fields = kSampleDefaults & ~kFieldPeriod;
}

Result<std::vector<std::string>> ScriptFieldSelection::apply(std::string_view argument) {
  std::vector<std::string> warnings;
  std::optional<ScriptEventType> type;
  std::string_view list = argument;
  if (size_t colon = argument.find(':'); colon != std::string_view::npos) {
    std::string_view prefix = argument.substr(0, colon);
    list = argument.substr(colon + 1);
    if (prefix == "hw") type = ScriptEventType::Hardware;
    else if (prefix == "sw") type = ScriptEventType::Software;
    else if (prefix == "trace") type = ScriptEventType::Tracepoint;
    else if (prefix == "raw") type = ScriptEventType::Raw;
    else if (prefix == "break") type = ScriptEventType::Breakpoint;
    else if (prefix == "synth") type = ScriptEventType::Synth;
    else return Error{"invalid event type '" + std::string(prefix) + "' in field string '" + std::string(argument) + "'"};
  }
  bool modifies = list.find_first_of("+-") != std::string_view::npos;
  if (type) {
    TypeState& st = types_[index_of(*type)];
    if (!modifies) {  // a plain list replaces this type's set ("trace:" alone shows nothing)
      st.fields = 0;
      st.user_set = true;
      st.wildcard_set = false;
    }
  } else {
    if (list.empty()) return Error{"cannot set the fields to none for all event types"};
    if (!modifies) {
      for (TypeState& st : types_) {
        st.fields = 0;
        st.user_set = true;
        st.wildcard_set = true;
      }
    }
  }

  enum class Change { Default, Set, Add, Remove } change = Change::Default;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string_view token = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? list.size() + 1 : comma + 1;
    if (token.empty()) continue;  // perf's strtok skips empty tokens
    if (token.front() == '+' || token.front() == '-') {
      if (change == Change::Set) return Error{"cannot mix +field/-field with a plain field list in '" + std::string(argument) + "'"};
      change = token.front() == '+' ? Change::Add : Change::Remove;
      token.remove_prefix(1);
    } else {
      if (change != Change::Set && change != Change::Default)
        return Error{"cannot mix +field/-field with a plain field list in '" + std::string(argument) + "'"};
      change = Change::Set;
    }
    std::optional<ScriptField> field = field_by_name(token);
    if (!field) {
      for (std::string_view unsupported : kUnsupportedPerfFields)
        if (unsupported == token) return Error{"field '" + std::string(token) + "' is not supported by vperf script"};
      return Error{"unknown field '" + std::string(token) + "'"};
    }
    if (!type) {
      for (size_t j = 0; j < kScriptEventTypes; ++j) {
        TypeState& st = types_[j];
        if (st.invalid & *field) {
          warnings.push_back("'" + std::string(token) + "' not valid for " +
                             std::string(script_event_type_name(static_cast<ScriptEventType>(j))) + " events. Ignoring.");
          continue;
        }
        if (change == Change::Remove) {
          st.fields &= ~*field;
          st.user_set_fields &= ~*field;
          st.user_unset_fields |= *field;
        } else {
          st.fields |= *field;
          st.user_set_fields |= *field;
          st.user_unset_fields &= ~*field;
        }
        st.user_set = true;
        st.wildcard_set = true;
      }
    } else {
      TypeState& st = types_[index_of(*type)];
      if (st.invalid & *field)
        return Error{"'" + std::string(token) + "' not valid for " + std::string(script_event_type_name(*type)) + " events"};
      if (change == Change::Remove)
        st.fields &= ~*field;
      else
        st.fields |= *field;
      st.user_set = true;
      st.wildcard_set = true;
    }
  }
  return warnings;
}

namespace {

// perf's evsel__check_attr for the first event of a type.
Result<void> check_event(const ScriptEvent& event, ScriptFieldSet& fields, ScriptFieldSet user_set_fields) {
  const uint64_t sample_type = event.attr->sample_type;
  auto require = [&](uint64_t bit, std::string_view what, ScriptFieldSet field) -> Result<void> {
    if (sample_type & bit) return {};
    if (user_set_fields & field) {
      std::string shown = field == (kFieldTid | kFieldPid) ? "tid/pid" : std::string(script_field_name(static_cast<ScriptField>(field)));
      return Error{"samples of event '" + event.name + "' were recorded without " + std::string(what) + ": cannot print field '" +
                   shown + "'"};
    }
    fields &= ~field;  // a default the file cannot fill: dropped quietly, as perf does
    return {};
  };
  if (fields & kFieldIp)
    if (Result<void> ok = require(PERF_SAMPLE_IP, "IP", kFieldIp); !ok) return ok;
  bool has_address = (sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_ADDR)) != 0;
  if ((fields & kFieldSym) && !has_address)
    return Error{"field 'sym' needs sample addresses, but event '" + event.name + "' has neither IP nor ADDR"};
  if ((fields & kFieldSymOff) && !(fields & kFieldSym)) return Error{"field 'symoff' needs field 'sym'"};
  if ((fields & kFieldSrcline) && !(fields & kFieldIp)) return Error{"field 'srcline' needs field 'ip' (the addresses it turns into source lines)"};
  if ((fields & kFieldDso) && !has_address)
    return Error{"field 'dso' needs sample addresses, but event '" + event.name + "' has neither IP nor ADDR"};
  if (fields & (kFieldPid | kFieldTid))
    if (Result<void> ok = require(PERF_SAMPLE_TID, "TID", kFieldTid | kFieldPid); !ok) return ok;
  if (fields & kFieldTime)
    if (Result<void> ok = require(PERF_SAMPLE_TIME, "TIME", kFieldTime); !ok) return ok;
  if (fields & kFieldCpu)
    if (Result<void> ok = require(PERF_SAMPLE_CPU, "CPU", kFieldCpu); !ok) return ok;
  return {};
}

bool has_callchain(const perf_event_attr& attr) { return (attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0; }

}  // namespace

Result<ScriptFieldLayout> ScriptFieldSelection::resolve(const std::vector<ScriptEvent>& events,
                                                       ScriptResolveOptions options) const {
  std::array<TypeState, kScriptEventTypes> types = types_;
  ScriptFieldLayout layout;
  layout.use_callchain = !options.hide_callchain;

  if (options.pipe) {
    // perf's process_attr: as each attr arrives, the first event of each type is checked and,
    // with callchains anywhere so far, its type gets ip and sym.
    uint64_t combined = 0;
    std::array<bool, kScriptEventTypes> seen{};
    for (const ScriptEvent& event : events) {
      combined |= event.attr->sample_type;
      ScriptEventType type = script_event_type(event.attr->type);
      if (type == ScriptEventType::Other) continue;
      if (seen[index_of(type)]) continue;
      seen[index_of(type)] = true;
      TypeState& st = types[index_of(type)];
      if (event.attr->sample_type)
        if (Result<void> ok = check_event(event, st.fields, st.user_set_fields); !ok) return ok.error();
      bool chains = (combined & PERF_SAMPLE_CALLCHAIN) || (combined & PERF_SAMPLE_BRANCH_STACK) ||
                    ((combined & PERF_SAMPLE_REGS_USER) && (combined & PERF_SAMPLE_STACK_USER));
      if (layout.use_callchain && chains) {
        if (!(st.user_unset_fields & kFieldIp)) st.fields |= kFieldIp;
        if (!(st.user_unset_fields & kFieldSym)) st.fields |= kFieldSym;
      }
    }
  } else {
    for (size_t j = 0; j < kScriptEventTypes; ++j) {
      TypeState& st = types[j];
      const ScriptEvent* first = nullptr;
      for (const ScriptEvent& event : events) {
        if (is_dummy(*event.attr) || index_of(script_event_type(event.attr->type)) != j) continue;
        first = &event;
        break;
      }
      if (first && st.fields)
        if (Result<void> ok = check_event(*first, st.fields, st.user_set_fields); !ok) return ok.error();
    }
    if (layout.use_callchain && !events.empty()) {
      bool any = false;
      for (const ScriptEvent& event : events) any = any || has_callchain(*event.attr);
      layout.use_callchain = any;
    }
    TypeState& tracepoints = types[index_of(ScriptEventType::Tracepoint)];
    if (layout.use_callchain && !tracepoints.user_set) {
      for (const ScriptEvent& event : events) {
        if (event.attr->type != PERF_TYPE_TRACEPOINT || !has_callchain(*event.attr)) continue;
        tracepoints.fields |= kFieldIp | kFieldSym | kFieldSymOff | kFieldDso;
        break;
      }
    }
  }
  for (size_t j = 0; j < kScriptEventTypes; ++j) layout.fields[j] = types[j].fields;
  return layout;
}

}  // namespace vperf::report
