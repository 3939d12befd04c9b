#include "report/sample_stacks.h"

#include <linux/perf_event.h>

#include <charconv>
#include <optional>
#include <unordered_map>

namespace vperf::report {

namespace {

FrameKind kind_of(uint8_t cpumode) {
  switch (cpumode) {
    case PERF_RECORD_MISC_KERNEL:
      return FrameKind::Kernel;
    case PERF_RECORD_MISC_GUEST_KERNEL:
      return FrameKind::GuestKernel;
    case PERF_RECORD_MISC_GUEST_USER:
      return FrameKind::GuestUser;
    default:
      return FrameKind::User;
  }
}

// A frame as `perf script | stackcollapse-perf.pl --kernel` names it. perf script prints it as
// "ADDR SYMBOL+0xOFFSET (DSO)", or "[unknown]" for the symbol, and stackcollapse-perf.pl splits
// that with a greedy regex, /^\s*(\w+)\s*(.+) \((.*)\)/: at the line's last " (", which is
// inside the dso's name when that holds one ("/memfd:jit (deleted)": the function becomes
// "[unknown] (/memfd:jit" and the module "deleted"). Then the offset is cut from the function's
// end, an "[unknown]" function becomes the module's file name in brackets (when the module is
// known), and the frame is a kernel frame when the module is "[bracketed]" (not [unknown]: the
// kernel, modules, and also [vdso]) or a vmlinux.
Frame frame_of(const Profile& profile, const ProfileFrame& frame) {
  if (std::string_view inlined = profile.inlined_name(frame); !inlined.empty()) return {std::string(inlined), FrameKind::Inlined};
  const symbols::ResolvedAddress& at = frame.at;
  std::string line;
  if (at.symbol) {
    char offset[24];
    line.append(at.symbol_name())
        .append("+0x")
        .append(offset, std::to_chars(offset, offset + sizeof offset, at.symbol_offset, 16).ptr);
  } else {
    line = "[unknown]";
  }
  line.append(" (").append(at.dso_name()).append(")");
  const size_t split = line.rfind(" (");
  std::string name = line.substr(0, split);
  const std::string module = line.substr(split + 2, line.size() - split - 3);
  if (size_t plus = name.rfind("+0x"); plus != std::string::npos && plus + 3 < name.size() &&
      name.find_first_not_of("0123456789abcdef", plus + 3) == std::string::npos)
    name.erase(plus);
  if (name == "[unknown]" && module != "[unknown]") name = "[" + module.substr(module.rfind('/') + 1) + "]";
  FrameKind kind = kind_of(frame.cpumode);
  if (kind == FrameKind::User || kind == FrameKind::Kernel) {
    bool kernel_module = (module.starts_with("[") || module.ends_with("vmlinux")) && module.find("unknown") == std::string::npos;
    kind = kernel_module ? FrameKind::Kernel : FrameKind::User;
  }
  return {std::move(name), kind};
}

// What frame_of's name depends on: the frame's function (its symbol and inlined name; none for
// an unresolved address), the DSO named after it, and the mode that picks the frame kind.
struct NamedFunction {
  uint32_t function;
  const symbols::Dso* dso;
  uint8_t cpumode;
  bool operator==(const NamedFunction&) const = default;
};
struct NamedFunctionHash {
  size_t operator()(const NamedFunction& f) const {
    return std::hash<uint64_t>()((uint64_t{f.function} << 8 | f.cpumode) ^ reinterpret_cast<uintptr_t>(f.dso) * 0x9e3779b97f4a7c15ULL);
  }
};

}  // namespace

Result<SampleStacks> sample_stacks(data::PerfDataReader& reader, symbols::Machines& machines,
                                   unwind::UserStackUnwinder* unwinder, bool inline_frames) {
  SampleStacks result;
  Profile profile;
  {
    // The replay's caches (resolved addresses, walked chains) are freed before the stacks are
    // named: the profile and the named stacks are the largest things alive then.
    SampleReplay replay(machines, profile, ReplayOptions{.unwinder = unwinder, .inline_frames = inline_frames});
    PerfDataSource source(reader);
    Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& sample) {
      // stackcollapse-perf.pl adds up the period perf script prints, 1 when there is none.
      uint32_t event = sample.event == data::kNoAttrIndex ? 0 : static_cast<uint32_t>(sample.event);
      // The frames perf script prints under the sample line (perf's callchain cursor, which may
      // hold fewer than the replay's stack, or none), or the ip it prints on the line itself.
      const uint32_t stack = replay.cursor_stack(sample);
      profile.count(event, profile.intern_text(sample.comm), stack, sample.sample.period ? sample.sample.period : 1);
      ++result.samples;
      return true;
    });
    if (!stats) return stats.error();
    result.warnings = reader.warnings();
    if (std::optional<std::string> note = replay.scope_note()) result.warnings.push_back(*note);
  }

  // Each frame and each comm named once (its id in the stack profile), each distinct
  // (comm, stack) made a folded stack once. A frame's name is its function's (with the DSO
  // and the mode it ran in): the many addresses of one function are named once.
  constexpr uint32_t kNotYet = core::HashedIds::kNone;
  std::vector<uint32_t> frame_ids(profile.frame_count(), kNotYet), comm_ids;
  std::unordered_map<NamedFunction, uint32_t, NamedFunctionHash> function_ids;
  std::vector<uint32_t> stack;
  for (const ProfileCount& counted : profile.counts()) {
    std::span<const uint32_t> frames = profile.stack(counted.stack);
    if (comm_ids.size() <= counted.comm) comm_ids.resize(counted.comm + 1, kNotYet);
    if (comm_ids[counted.comm] == kNotYet) comm_ids[counted.comm] = result.profile.frame_id(process_frame(profile.text(counted.comm)));
    stack.assign(1, comm_ids[counted.comm]);
    for (auto id = frames.rbegin(); id != frames.rend(); ++id) {
      if (frame_ids[*id] == kNotYet) {
        const ProfileFrame& frame = profile.frame(*id);
        // An unresolved address is named after its DSO alone ("[libfoo.so]").
        const uint32_t function = frame.at.symbol ? frame.function : kNoId;
        auto [named, added] = function_ids.try_emplace(NamedFunction{function, frame.at.dso(), frame.cpumode}, kNotYet);
        if (added) named->second = result.profile.frame_id(frame_of(profile, frame));
        frame_ids[*id] = named->second;
      }
      stack.push_back(frame_ids[*id]);
    }
    result.profile.add_ids(stack, counted.value.weight);
  }
  return result;
}

}  // namespace vperf::report
