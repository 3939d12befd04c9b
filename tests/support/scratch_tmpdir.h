#pragma once
// TMPDIR pointed at a scratch directory while alive, so that what the code under test leaves in
// its temporary directories (vperf-guest-symbols-*) is seen.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "support/fake_event_fs.h"

namespace vperf::test {

// The vperf-guest-symbols-* directories under `dir`.
inline int private_directories(const std::filesystem::path& dir) {
  int n = 0;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().starts_with("vperf-guest-symbols-");
  return n;
}

// TMPDIR pointed at a scratch directory while alive, so what the code under test leaves there is seen.
class ScratchTmpdir {
 public:
  ScratchTmpdir() {
    if (const char* old = std::getenv("TMPDIR")) saved_ = old;
    ::setenv("TMPDIR", tree_.root().c_str(), 1);
  }
  ~ScratchTmpdir() {
    if (saved_) ::setenv("TMPDIR", saved_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  const std::filesystem::path& dir() const { return tree_.root(); }

 private:
  TempTree tree_;
  std::optional<std::string> saved_;
};

}  // namespace vperf::test
