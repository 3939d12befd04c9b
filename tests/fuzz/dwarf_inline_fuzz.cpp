// libFuzzer target for inline chains from DWARF (symbols/source_lines.h): the .debug_info of a
// binary or its debuginfo file is whatever its builder's tools wrote. The input is the file; it
// must open or fail with an Error, and so must every lookup. Each compile unit's index must be
// sorted, disjoint segments naming functions it holds, each caller indexed before its callee
// (so a chain ends); a chain that is found is non-empty, bounded, and inlined up to its end.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "symbols/source_lines.h"

namespace {

void check_unit(const vperf::symbols::DwarfInfo& info, Dwarf_Die* cu) {
  using Functions = vperf::symbols::DwarfInfo::CuFunctions;
  const Functions unit = Functions::index(cu);
  uint64_t previous_end = 0;
  for (const Functions::Segment& s : unit.segments) {
    if (s.start >= s.end || s.start < previous_end || s.function >= unit.functions.size()) __builtin_trap();
    previous_end = s.end;
  }
  for (size_t id = 0; id < unit.functions.size(); ++id)
    if (unit.functions[id].caller != Functions::kNone && unit.functions[id].caller >= id) __builtin_trap();
  for (const Functions::Segment& s : unit.segments) {
    for (uint64_t at : {s.start, s.end - 1}) {
      auto frames = info.frames_at(at);
      if (!frames) continue;
      if (frames->empty() || frames->size() > 1024) __builtin_trap();
      for (size_t i = 0; i + 1 < frames->size(); ++i)
        if (!(*frames)[i].inlined) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = ::memfd_create("dwarf-inline-fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, data, size) != static_cast<ssize_t>(size)) {
    ::close(fd);
    return 0;
  }
  {
    auto info = vperf::symbols::DwarfInfo::open("/proc/self/fd/" + std::to_string(fd));
    if (info) {
      Dwarf_Off offset = 0, next = 0;
      size_t header_size = 0;
      for (int units = 0; units < 64 && dwarf_nextcu(info->handle(), offset, &next, &header_size, nullptr, nullptr, nullptr) == 0;
           ++units, offset = next) {
        Dwarf_Die cu;
        if (dwarf_offdie(info->handle(), offset + header_size, &cu) != nullptr) check_unit(*info, &cu);
      }
    }
  }
  ::close(fd);
  return 0;
}
