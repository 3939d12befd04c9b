// libFuzzer target for perf's name-filter syntax (core/name_filter.h), given on the command line
// to vperf probe -F --filter: any text parses or fails with an Error, and what parses can be
// evaluated (deep nesting is refused, not a stack overflow).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/name_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto filter = vperf::NameFilter::parse(text);
  if (!filter) return 0;
  (void)filter->matches("malloc");
  (void)filter->matches("_IO_file_open@plt");
  (void)filter->matches(text);
  return 0;
}
