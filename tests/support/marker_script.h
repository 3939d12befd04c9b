#pragma once
// A program that leaves a marker file behind when it runs: what shows that something (a
// libvirt URI's ext transport, say) ran it, or did not.
#include <filesystem>

#include "support/fake_event_fs.h"

namespace vperf::test {

// TREE/NAME, a shell script that creates `marker`.
inline std::filesystem::path marker_script(const TempTree& tree, const std::string& name, const std::filesystem::path& marker) {
  tree.write(name, "#!/bin/sh\ntouch '" + marker.string() + "'\n");
  std::filesystem::permissions(tree.root() / name, std::filesystem::perms::owner_all);
  return tree.root() / name;
}

}  // namespace vperf::test
