#include "report/sample_stacks.h"

#include <linux/perf_event.h>

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
Frame frame_of(const ChainFrame& frame) {
  if (!frame.inlined_name.empty()) return {std::string(frame.inlined_name), FrameKind::Inlined};
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
  SampleReplay replay(machines, ReplayOptions{.unwinder = unwinder, .inline_frames = inline_frames});
  Result<data::ReadStats> stats = replay.run(reader, [&](const ResolvedSample& sample) {
    Stack stack;
    stack.reserve(sample.chain.size() + 1);
    stack.push_back(process_frame(std::string(sample.comm)));
    for (auto frame = sample.chain.rbegin(); frame != sample.chain.rend(); ++frame)
      stack.push_back(frame_of(*frame));
    // stackcollapse-perf.pl adds up the period perf script prints, 1 when there is none.
    result.profile.add(stack, sample.sample.period ? sample.sample.period : 1);
    ++result.samples;
    return true;
  });
  if (!stats) return stats.error();
  result.warnings = reader.warnings();
  return result;
}

}  // namespace vperf::report
