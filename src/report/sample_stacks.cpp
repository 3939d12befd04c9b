#include "report/sample_stacks.h"

#include <linux/perf_event.h>

#include <optional>

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

// A frame as `perf script | stackcollapse-perf.pl --kernel` names it: the symbol, or the
// dso's file name in brackets when only the dso is known, or "[unknown]". Host frames count
// as kernel frames by stackcollapse-perf.pl's rule, from the dso: a "[bracketed]" dso other
// than [unknown] (the kernel, modules, and also [vdso]) or a vmlinux.
Frame frame_of(const Profile& profile, const ProfileFrame& frame) {
  if (std::string_view inlined = profile.inlined_name(frame); !inlined.empty()) return {std::string(inlined), FrameKind::Inlined};
  const symbols::ResolvedAddress& at = frame.at;
  std::string_view dso = at.dso_name();
  std::string name;
  if (at.symbol) {
    name = std::string(at.symbol_name());
  } else if (at.map && dso != "[unknown]") {
    std::string_view base = dso.substr(dso.rfind('/') == std::string_view::npos ? 0 : dso.rfind('/') + 1);
    name = "[" + std::string(base) + "]";
  } else {
    name = "[unknown]";
  }
  FrameKind kind = kind_of(frame.cpumode);
  if (kind == FrameKind::User || kind == FrameKind::Kernel) {
    bool kernel_dso = (dso.starts_with("[") && dso.find("unknown") == std::string_view::npos) || dso.ends_with("vmlinux");
    kind = kernel_dso ? FrameKind::Kernel : FrameKind::User;
  }
  return {std::move(name), kind};
}

}  // namespace

Result<SampleStacks> sample_stacks(data::PerfDataReader& reader, symbols::Machines& machines,
                                   unwind::UserStackUnwinder* unwinder, bool inline_frames) {
  SampleStacks result;
  Profile profile;
  SampleReplay replay(machines, profile, ReplayOptions{.unwinder = unwinder, .inline_frames = inline_frames});
  PerfDataSource source(reader);
  Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& sample) {
    // stackcollapse-perf.pl adds up the period perf script prints, 1 when there is none.
    uint32_t event = sample.event == data::kNoAttrIndex ? 0 : static_cast<uint32_t>(sample.event);
    profile.count(event, profile.intern_text(sample.comm), sample.stack, sample.sample.period ? sample.sample.period : 1);
    ++result.samples;
    return true;
  });
  if (!stats) return stats.error();

  // Each frame named once, each distinct (comm, stack) made a folded stack once.
  std::vector<std::optional<Frame>> named(profile.frame_count());
  for (const ProfileCount& counted : profile.counts()) {
    std::span<const uint32_t> frames = profile.stack(counted.stack);
    Stack stack;
    stack.reserve(frames.size() + 1);
    stack.push_back(process_frame(profile.text(counted.comm)));
    for (auto id = frames.rbegin(); id != frames.rend(); ++id) {
      if (!named[*id]) named[*id] = frame_of(profile, profile.frame(*id));
      stack.push_back(*named[*id]);
    }
    result.profile.add(std::move(stack), counted.value.weight);
  }
  result.warnings = reader.warnings();
  return result;
}

}  // namespace vperf::report
