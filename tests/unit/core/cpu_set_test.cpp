#include "core/cpu_set.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "support/capability.h"

namespace vperf {
namespace {

TEST(CpuList, ParsesSysfsFormat) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11").value(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5,1,1-2\n").value(), (std::vector<int>{1, 2, 5}));
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(CpuList, RejectsBadRangesNamingThem) {
  for (const char* bad : {"", "3-1", "a", "1,,2", "-1", "0-99999999", "1-"}) {
    auto r = parse_cpu_list(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(parse_cpu_list("0,3-1").error().message.find("'3-1'"), std::string::npos);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST(CpuList, OverlappingRangesCostTheirCpusNotTheirSum) {
  // 8,000 copies of "0-65535" (64 KB of -C or cpulist text, a fuzzer's find) were once
  // expanded to half a billion entries (2 GiB) before duplicates went. In a child held to
  // 256 MiB of address space, the list must parse to its 65,536 CPUs.
  VPERF_REQUIRE(!kAddressSanitizer, "a build without ASan, which reserves terabytes of address space up front");
  std::string text;
  for (int i = 0; i < 8000; ++i) text += "0-65535,";
  text.pop_back();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit limit{256 << 20, 256 << 20};
    ::setrlimit(RLIMIT_AS, &limit);
    try {
      Result<std::vector<int>> cpus = parse_cpu_list(text);
      ::_exit(cpus.ok() && cpus->size() == 65536 && cpus->back() == 65535 ? 0 : 1);
    } catch (...) {
      ::_exit(2);  // std::bad_alloc
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong CPUs, 2: out of memory";
}

TEST(CpuList, OnlineCpusOfThisMachine) {
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok()) << cpus.error().describe();
  EXPECT_FALSE(cpus->empty());
  EXPECT_EQ(cpus->front(), 0);
}

}  // namespace
}  // namespace vperf
