// perf report's kptr_restrict warning (report__warn_kptr_restrict, perf 6.1), decided from the
// recording's events, kernel maps and kernel samples.
#include "report/restricted_kernel_maps.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstring>

namespace vperf::report {
namespace {

data::EventAttrEntry event(bool exclude_kernel) {
  data::EventAttrEntry entry{};
  std::memset(&entry.attr, 0, sizeof entry.attr);
  entry.attr.type = PERF_TYPE_SOFTWARE;
  entry.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  entry.attr.exclude_kernel = exclude_kernel;
  entry.name = exclude_kernel ? "cpu-clock:u" : "cpu-clock";
  return entry;
}

data::Record map(uint16_t cpumode, uint32_t pid, const std::string& name, uint64_t pgoff) {
  data::Record record;
  record.type = PERF_RECORD_MMAP;
  record.misc = cpumode;
  record.body = data::MmapRecord{pid, pid, 0xffffffff81000000, 0x1000000, pgoff, name};
  return record;
}

data::Record sample(uint16_t cpumode) {
  data::Record record;
  record.type = PERF_RECORD_SAMPLE;
  record.misc = cpumode;
  record.body = data::Sample{};
  return record;
}

constexpr uint32_t kEveryPid = UINT32_MAX;

TEST(RestrictedKernelMaps, NoKernelMapWarnsWhenAnEventSamplesTheKernel) {
  RestrictedKernelMaps maps;
  maps.observe(sample(PERF_RECORD_MISC_USER));
  std::optional<std::string> warning = maps.warning({event(true), event(false)});
  ASSERT_TRUE(warning);
  EXPECT_TRUE(warning->starts_with("Kernel address maps (/proc/{kallsyms,modules}) were restricted."));
  EXPECT_NE(warning->find("As no suitable kallsyms nor vmlinux was found, kernel samples can't be resolved."), std::string::npos);
  EXPECT_EQ(warning->find('\n'), std::string::npos);
}

TEST(RestrictedKernelMaps, UserSpaceOnlyEventsNeverWarn) {
  RestrictedKernelMaps maps;
  EXPECT_FALSE(maps.warning({event(true)}));
  EXPECT_FALSE(maps.warning({}));
}

TEST(RestrictedKernelMaps, TheKernelsMapWithItsReferenceSilencesIt) {
  RestrictedKernelMaps maps;
  maps.observe(map(PERF_RECORD_MISC_KERNEL, kEveryPid, "[kernel.kallsyms]_text", 0xffffffff81000000));
  maps.observe(map(PERF_RECORD_MISC_KERNEL, kEveryPid, "[ext4]", 0));  // modules have pgoff 0
  maps.observe(sample(PERF_RECORD_MISC_KERNEL));
  EXPECT_FALSE(maps.warning({event(false)}));
}

// A kernel map without a relocation reference: perf warns only once a kernel sample hit it.
TEST(RestrictedKernelMaps, AKernelMapWithoutReferenceWarnsOnlyWithKernelSamples) {
  RestrictedKernelMaps maps;
  maps.observe(map(PERF_RECORD_MISC_KERNEL, kEveryPid, "[kernel.kallsyms]", 0));
  maps.observe(sample(PERF_RECORD_MISC_USER));
  EXPECT_FALSE(maps.warning({event(false)}));
  maps.observe(sample(PERF_RECORD_MISC_KERNEL));
  std::optional<std::string> warning = maps.warning({event(false)});
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("If some relocation was applied (e.g. kexec) symbols may be misresolved."), std::string::npos);
}

// A guest's kernel map, or one a process mapped, is not the host kernel's.
TEST(RestrictedKernelMaps, OnlyTheHostKernelsMapCounts) {
  RestrictedKernelMaps maps;
  maps.observe(map(PERF_RECORD_MISC_GUEST_KERNEL, kEveryPid, "[guest.kernel.kallsyms]_text", 0xffffffff81000000));
  maps.observe(map(PERF_RECORD_MISC_USER, 1234, "[kernel.kallsyms]_text", 0xffffffff81000000));
  EXPECT_TRUE(maps.warning({event(false)}));
}

}  // namespace
}  // namespace vperf::report
