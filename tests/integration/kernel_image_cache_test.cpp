// The kernel image cache on the real kernel (symbols/kernel_image_cache.h): the first report
// of a boot reads /proc/kallsyms whole and keeps the image's symbols; the next reads only the
// first page (for _text, which validates the entry) and prints the same report, byte for byte.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <string>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/run_program.h"

namespace vperf::test {
namespace {

struct TracedReport {
  ProgramResult result;
  uint64_t kallsyms_bytes = 0;  // what the run read from /proc/kallsyms
};

// vperf report under strace, with `cache_home` as XDG_CACHE_HOME.
TracedReport traced_report(const TempTree& dir, const std::string& data, const std::filesystem::path& cache_home) {
  const std::string log = (dir.root() / "strace.log").string();
  TracedReport out;
  out.result = run_program({"strace", "-qq", "-y", "-e", "trace=read", "-o", log, VPERF_BINARY, "report", "--stdio", "-i", data},
                           {{"XDG_CACHE_HOME", cache_home.string()}});
  std::ifstream in(log);
  // read(3</proc/kallsyms>, "..."..., 1048576) = 1048521
  const std::regex kallsyms_read(R"(^read\(\d+</proc/kallsyms>,.*\) = (\d+)$)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, kallsyms_read)) out.kallsyms_bytes += std::stoull(m[1].str());
  return out;
}

TEST(KernelImageCache, TheSecondReportOfABootReadsOnlyKallsymsFirstPageAndPrintsTheSame) {
  VPERF_REQUIRE(!find_program("strace").empty(), "strace on PATH");
  VPERF_REQUIRE(kallsyms_shows_addresses(), "/proc/kallsyms showing addresses (kptr_restrict, root)");
  TempTree dir;
  const std::filesystem::path cache_home = dir.root() / "cache";
  std::filesystem::create_directory(cache_home);
  ::chmod(cache_home.c_str(), 0700);
  const std::string data = (dir.root() / "perf.data").string();
  // getppid calls: most samples are in the kernel, so the report needs kernel symbols.
  ProgramResult recorded = run_vperf({"record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-o", data, "--",
                                      VPERF_WORKLOAD, "getppid", "300000"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;

  TracedReport first = traced_report(dir, data, cache_home);
  ASSERT_EQ(first.result.exit_code, 0) << first.result.err;
  ASSERT_NE(first.result.out.find("[k] "), std::string::npos) << "no kernel symbol in the report:\n" << first.result.out;
  EXPECT_GT(first.kallsyms_bytes, 1u << 20) << "the first run must read kallsyms whole";
  struct stat st {};
  ASSERT_EQ(::stat((cache_home / "vperf/kernel-symbols/kernel-image").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  TracedReport second = traced_report(dir, data, cache_home);
  ASSERT_EQ(second.result.exit_code, 0) << second.result.err;
  EXPECT_GT(second.kallsyms_bytes, 0u) << "the entry is validated against kallsyms' _text";
  EXPECT_LE(second.kallsyms_bytes, 4096u);
  EXPECT_EQ(second.result.out, first.result.out);
}

}  // namespace
}  // namespace vperf::test
