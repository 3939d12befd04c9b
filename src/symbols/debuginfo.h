#pragma once
// Finding the file that holds a DSO's symbols and DWARF, the way perf and gdb look:
//   1. ROOT/.build-id/xx/yyyyyyyy.debug for each debug root, by the DSO's build-id (checked);
//   2. ROOT/PATH.debug (Fedora's layout) and ROOT/PATH (Debian's older layout);
//   3. the .gnu_debuglink name next to the file, in its .debug/ folder, and under each root;
//   4. the file itself.
// A candidate whose build-id differs from the DSO's is skipped (a stale debug package).
#include <filesystem>
#include <optional>
#include <vector>

#include "symbols/build_id.h"
#include "symbols/symbol_config.h"

namespace vperf::symbols {

// ROOT/.build-id/xx/yyyy.debug for a build-id (no check that it exists).
std::filesystem::path build_id_debug_path(const std::filesystem::path& root, const BuildId& id);

// Candidate separate-debuginfo files for `binary` (already under symfs), existing ones only,
// best first. `debuglink` is the binary's .gnu_debuglink name, if any.
std::vector<std::filesystem::path> debuginfo_candidates(const SymbolConfig& config, const std::filesystem::path& binary,
                                                        const std::optional<BuildId>& build_id,
                                                        const std::optional<std::string>& debuglink);

}  // namespace vperf::symbols
