#include "symbols/debuginfo.h"

#include <system_error>

namespace vperf::symbols {

std::filesystem::path build_id_debug_path(const std::filesystem::path& root, const BuildId& id) {
  std::string hex = id.hex();
  if (hex.size() < 3) return root / ".build-id" / (hex + ".debug");
  return root / ".build-id" / hex.substr(0, 2) / (hex.substr(2) + ".debug");
}

std::vector<std::filesystem::path> debuginfo_candidates(const SymbolConfig& config, const std::filesystem::path& binary,
                                                        const std::optional<BuildId>& build_id,
                                                        const std::optional<std::string>& debuglink) {
  std::vector<std::filesystem::path> out;
  auto consider = [&](const std::filesystem::path& p) {
    std::error_code ec;
    if (p.empty() || !std::filesystem::is_regular_file(p, ec)) return;
    if (std::filesystem::equivalent(p, binary, ec)) return;
    for (const auto& seen : out)
      if (seen == p) return;
    out.push_back(p);
  };
  // The binary's path relative to the symfs root, for ROOT/PATH layouts.
  std::filesystem::path relative = binary.relative_path();
  if (!config.symfs.empty()) {
    std::error_code ec;
    auto rel = std::filesystem::relative(binary, config.symfs, ec);
    if (!ec && !rel.empty() && rel.native().rfind("..", 0) != 0) relative = rel;
  }
  for (const auto& root : config.debug_dirs) {
    if (build_id && !build_id->empty()) consider(build_id_debug_path(root, *build_id));
  }
  for (const auto& root : config.debug_dirs) {
    consider(root / (relative.string() + ".debug"));
    consider(root / relative);
  }
  if (debuglink && !debuglink->empty()) {
    std::filesystem::path dir = binary.parent_path();
    consider(dir / *debuglink);
    consider(dir / ".debug" / *debuglink);
    for (const auto& root : config.debug_dirs) consider(root / relative.parent_path() / *debuglink);
  }
  return out;
}

}  // namespace vperf::symbols
