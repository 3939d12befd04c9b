#pragma once
// JIT symbol maps, /tmp/perf-PID.map, written by JITs (V8, the JVM agent, LuaJIT...):
// one symbol a line, "START SIZE NAME", START and SIZE in hex (perf writes no 0x; one is
// accepted), NAME the rest of the line and may contain spaces. Addresses are absolute.
// Malformed lines are skipped, as perf skips them; an unreadable file is an Error.
#include <filesystem>
#include <string_view>

#include "core/error.h"
#include "symbols/symbol.h"

namespace vperf::symbols {

SymbolTable parse_jit_map(std::string_view text);
Result<SymbolTable> load_jit_map(const std::filesystem::path& path);
// DIR/perf-PID.map
std::filesystem::path jit_map_path(const std::filesystem::path& dir, int pid);

}  // namespace vperf::symbols
