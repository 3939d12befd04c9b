#include "pmc/perfmon_event_source.h"

#include "core/strings.h"

namespace vperf::events {

PerfmonEventSource::PerfmonEventSource(std::vector<PerfmonFile> files, CoreLayout layout)
    : files_(std::move(files)), layout_(layout) {}

const PerfmonEvent* PerfmonEventSource::find(std::string_view event_name) const {
  for (const PerfmonFile& f : files_)
    for (const PerfmonEvent& e : f.events)
      if (equals_nocase(e.name, event_name)) return &e;
  return nullptr;
}

std::vector<std::string> PerfmonEventSource::names() const {
  std::vector<std::string> out;
  for (const PerfmonFile& f : files_)
    for (const PerfmonEvent& e : f.events) out.push_back(e.name);
  return out;
}

std::optional<Result<ResolvedEvent>> PerfmonEventSource::resolve(std::string_view name) const {
  std::string_view s = trim(name);
  if (s.find("::") != std::string_view::npos) return std::nullopt;  // a libpfm4 PMU prefix
  std::vector<std::string_view> parts = split(s, ':');
  const PerfmonEvent* event = find(parts.front());
  if (event == nullptr) return std::nullopt;
  auto fail = [&](const std::string& why) { return std::optional<Result<ResolvedEvent>>(Error{why}); };
  if (event->is_uncore()) {
    PerfmonEncoding enc = encode_perfmon_event(*event, layout_);
    return fail(event->name + " is an uncore event of the " + event->unit + " box; count it as " + enc.pmu_syntax +
                " (use uncore_*_N for one box)");
  }

  PerfmonEvent effective = *event;
  bool user_only = false, kernel_only = false;
  int precise = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view mod = parts[i];
    size_t eq = mod.find('=');
    std::string_view key = mod.substr(0, eq);
    std::optional<uint64_t> value;
    if (eq != std::string_view::npos) {
      value = parse_u64(mod.substr(eq + 1));
      if (!value) return fail("modifier '" + std::string(mod) + "' of " + event->name + ": value is not a number");
    }
    auto flag_value = [&]() -> std::optional<bool> {
      if (!value) return true;
      if (*value > 1) return std::nullopt;
      return *value == 1;
    };
    // PMUv3 has no counter mask, invert or edge: an arm64 event takes u and k only.
    if (layout_ == CoreLayout::Arm && key != "u" && key != "k")
      return fail("modifier '" + std::string(mod) + "' of " + event->name +
                  ": an arm64 event takes u and k only (PMUv3 has no counter mask, invert or edge)");
    if (key == "u" || key == "k" || key == "i" || key == "e") {
      std::optional<bool> on = flag_value();
      if (!on) return fail("modifier '" + std::string(mod) + "' of " + event->name + " takes 0 or 1");
      if (key == "u") user_only = *on;
      if (key == "k") kernel_only = *on;
      if (key == "i") effective.invert = *on;
      if (key == "e") effective.edge_detect = *on;
    } else if (key == "c") {
      if (!value || *value > 0xff)
        return fail("modifier '" + std::string(mod) + "' of " + event->name + ": counter mask must be c=0..255");
      effective.counter_mask = static_cast<uint32_t>(*value);
    } else if (key == "precise") {
      if (!value || *value > 3) return fail("modifier '" + std::string(mod) + "' of " + event->name + ": use precise=0..3");
      precise = static_cast<int>(*value);
    } else {
      return fail("unknown modifier '" + std::string(mod) + "' for perfmon event " + event->name +
                  " (perfmon events take u, k, c=N, i, e, precise=N)");
    }
  }
  PerfmonEncoding enc = encode_perfmon_event(effective, layout_);
  if (precise > enc.max_precise)
    return fail(event->name + " allows precise levels up to " + std::to_string(enc.max_precise) + ", not " +
                std::to_string(precise) + (enc.max_precise == 0 ? " (it is not a PEBS event)" : ""));

  ResolvedEvent r;
  r.name = std::string(s);
  r.name.replace(0, parts.front().size(), event->name);
  r.pmu = enc.pmu;
  r.type = kPerfTypeRaw;
  r.config = enc.config;
  r.config1 = enc.config1;
  r.origin = EventOrigin::Perfmon;
  // ":u" alone counts user level only, like libpfm4's u; ":u:k" counts both.
  r.exclude_kernel = user_only && !kernel_only;
  r.exclude_user = kernel_only && !user_only;
  r.modifiers.precise = precise;
  r.max_precise = enc.max_precise;
  return Result<ResolvedEvent>(std::move(r));
}

}  // namespace vperf::events
