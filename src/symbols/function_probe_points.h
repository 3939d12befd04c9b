#pragma once
// Where a uprobe on a function of an ELF file goes: uprobe_events takes a file offset, and
// perf probe turns FUNC[+OFF] into one by the function's symbol (.symtab, else .dynsym, the
// symbols ElfFile::function_symbols chooses) and the PT_LOAD segment that holds it. A name with
// several addresses (a local function in two objects) is probed at each, as perf does.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::symbols {

struct FunctionProbePoint {
  uint64_t address = 0;      // the function's ELF virtual address, plus the offset
  uint64_t file_offset = 0;  // ... as a file offset: what uprobe_events takes
};

// The probe points of `function` + `offset` in `file`, by address. An Error names the file and
// says what to do when the function is not there, or the offset lies past its end.
Result<std::vector<FunctionProbePoint>> function_probe_points(const std::filesystem::path& file, std::string_view function,
                                                               uint64_t offset);

}  // namespace vperf::symbols
