#pragma once
// Small programs compiled at test time for the ELF, debuginfo and DWARF tests: a known build-id
// (-Wl,--build-id=0x...), known functions, an always-inlined callee, C++ names to demangle.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf::test {

inline constexpr const char* kTestBuildId = "0123456789abcdef0123456789abcdef01234567";

inline const char* kTestProgramSource = R"(
#include <cstdio>
namespace demo {
struct Widget {
  int twice(int x) const;
};
int Widget::twice(int x) const { return 2 * x; }
}  // namespace demo
static inline __attribute__((always_inline)) int inner_add(int a, int b) {
  volatile int sink = a;
  return sink + b;
}
extern "C" __attribute__((noinline)) int outer_function(int x) {
  int r = inner_add(x, 3);
  return r * 7;
}
extern "C" __attribute__((noinline)) int second_function(int x) { return outer_function(x) + 1; }
int main(int argc, char**) {
  demo::Widget w;
  std::printf("%d\n", second_function(argc) + w.twice(argc));
  return 0;
}
)";

// Compiles kTestProgramSource into dir/name with -g -O2 and the fixed build-id; the test is
// skipped if there is no C++ compiler.
inline std::filesystem::path compile_test_program(const TempTree& tree, const std::string& name,
                                                  const std::vector<std::string>& extra_flags = {}) {
  tree.write("prog.cpp", kTestProgramSource);
  std::filesystem::path out = tree.root() / name;
  std::vector<std::string> argv{"g++", "-g", "-O2", "-fno-omit-frame-pointer",
                                std::string("-Wl,--build-id=0x") + kTestBuildId, "-o", out.string(),
                                (tree.root() / "prog.cpp").string()};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  ProgramResult r = run_program(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

// Address of a symbol as `nm` prints it (hex), 0 if absent.
inline uint64_t nm_address(const std::filesystem::path& binary, const std::string& symbol) {
  ProgramResult r = run_program({"nm", binary.string()});
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t eol = r.out.find('\n', pos);
    if (eol == std::string::npos) eol = r.out.size();
    std::string line = r.out.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() > 19 && line.substr(19) == symbol) return std::stoull(line.substr(0, 16), nullptr, 16);
  }
  return 0;
}

}  // namespace vperf::test
