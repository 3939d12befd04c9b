// libFuzzer target for what vperf ftrace start keeps for reset (tracing/ftrace_persisted.h): the
// saved top-level files (a file in /run/vperf that could be damaged) and kernel.ftrace_dump_on_oops
// as the kernel gives it. Any bytes parse or are refused; what parses writes back to the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tracing/ftrace_persisted.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace vperf::tracing;
  if (vperf::Result<SavedFiles> files = parse_saved_files(text)) {
    if (saved_files_text(*files) != text) std::abort();
  }
  const DumpOnOops setting = parse_dump_on_oops(text);
  // Its own text reads back as the same setting.
  if (parse_dump_on_oops(dump_on_oops_text(setting)) != setting) std::abort();
  (void)with_oops_dump(setting, text.substr(0, size / 2), static_cast<OopsDump>(size % 3));
  (void)dump_on_oops_takes_instances(text);
  return 0;
}
