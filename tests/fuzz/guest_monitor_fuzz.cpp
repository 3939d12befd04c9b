// libFuzzer target for what a guest's monitor answers and what the guest's memory holds: the
// register and memory-dump texts must parse or fail with an Error, and the kernel stack
// unwinders must end (bounded, no out-of-range read) on any stack and any ORC tables — here
// the input's own bytes serve as kernel text, ORC tables and stack at once.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "guest/guest_memory.h"
#include "guest/kernel_stacks.h"
#include "guest/vcpu_registers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vperf::guest;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parse_info_registers(text);
  (void)parse_memory_dump(text);

  constexpr uint64_t kBase = 0xffffffff81000000;
  DumpMemory memory;
  memory.add({kBase, std::vector<uint8_t>(data, data + size)});
  GuestKernelLayout layout;
  layout.core_text = {kBase, kBase + size};
  layout.text = {layout.core_text};
  layout.function_starts = {kBase};
  layout.orc_ip_table = kBase;
  layout.orc_ip_table_end = kBase + size / 2 / 4 * 4;
  layout.orc_entries = kBase + size / 2;
  for (int version : {601, 603, 604}) {
    layout.major = version / 100;
    layout.minor = version % 100;
    VcpuRegisters r;
    r.rip = kBase + size / 3;
    r.rsp = r.rbp = kBase + (size >= 8 ? 8 : 0);
    for (StackMethod method : {StackMethod::orc, StackMethod::frame_pointer, StackMethod::scan})
      if (unwind_kernel_stack(r, memory, memory, layout, method).frames.size() > kMaxKernelFrames) __builtin_trap();
    (void)unwind_kernel_stack(r, memory, memory, layout, std::nullopt);
  }
  return 0;
}
