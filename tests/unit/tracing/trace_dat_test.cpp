#include "tracing/trace_dat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/files.h"

namespace vperf::tracing {
namespace {

// The fuzz seeds are real files: vperf's own version 6, and trace-cmd convert's version 7 of it
// (zstd-compressed and not); see tests/fuzz/corpus/README.md.
std::vector<uint8_t> seed(const std::string& name) {
  std::ifstream in(std::string(VPERF_SOURCE_DIR) + "/tests/fuzz/corpus/trace_dat/" + name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> report_of(const std::vector<uint8_t>& bytes) {
  Result<TraceDat> file = TraceDat::parse(bytes, false);
  EXPECT_TRUE(file.ok()) << file.error().describe();
  std::vector<std::string> lines;
  if (file) {
    EXPECT_TRUE(print_trace_report(*file, [&](std::string_view line) { lines.emplace_back(line); }).ok());
  }
  return lines;
}

TEST(TraceDat, VersionsSixAndSevenOfOneTraceReadTheSame) {
  const std::vector<std::string> v6 = report_of(seed("v6-getppid-stacktrace"));
  ASSERT_EQ(v6.size(), 1u + 3 * 2);  // cpus=, then 3 syscalls and their 3 stacks (one entry each, frames on lines of their own)
  EXPECT_EQ(v6[0], "cpus=2");
  EXPECT_NE(v6[1].find(" sys_enter_getppid: "), std::string::npos) << v6[1];
  EXPECT_NE(v6[2].find(" kernel_stack: "), std::string::npos) << v6[2];
  size_t frames = 0;
  for (size_t at = v6[2].find("=> 0xffffffff8"); at != std::string::npos; at = v6[2].find("=> 0xffffffff8", at + 1)) ++frames;
  EXPECT_EQ(frames, 4u) << "4 frames, as addresses (no kallsyms in the seed, the kernel print fmt without plugins): " << v6[2];
  EXPECT_EQ(report_of(seed("v7-zstd-getppid-stacktrace")), v6);  // libzstd1 is part of every Debian 12
  EXPECT_EQ(report_of(seed("v7-none-getppid-stacktrace")), v6);
  Result<TraceDat> file = TraceDat::parse(seed("v6-getppid-stacktrace"), false);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->version(), 6);
  EXPECT_EQ(file->clock(), "local");
  EXPECT_TRUE(file->timestamps_in_ns());
  EXPECT_EQ(file->lost_by_cpu(), (std::vector<uint64_t>{0, 0}));
}

// The kernel flags a page that follows lost events and stores how many after its data; the
// report says so before that page's first event, as trace-cmd does.
TEST(TraceDat, LostEventsArePrintedWhereTheyHappened) {
  std::vector<uint8_t> bytes = seed("v6-getppid-stacktrace");
  // CPU 0's data is the first page-aligned block after the flyrecord table.
  const size_t table = std::search(bytes.begin(), bytes.end(), "flyrecord", "flyrecord" + 9) - bytes.begin() + 10;
  uint64_t offset = 0;
  std::memcpy(&offset, bytes.data() + table, 8);
  uint64_t commit = 0;
  std::memcpy(&commit, bytes.data() + offset + 8, 8);
  const uint64_t used = commit & ((1u << 27) - 1);
  commit |= (1ull << 31) | (1ull << 30);
  std::memcpy(bytes.data() + offset + 8, &commit, 8);
  const uint64_t lost = 7;
  std::memcpy(bytes.data() + offset + 16 + used, &lost, 8);
  const std::vector<std::string> lines = report_of(bytes);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(lines[1].starts_with("CPU:0 [7 EVENTS DROPPED]\n  vperf-workload-")) << lines[1];
  Result<TraceDat> file = TraceDat::parse(bytes, false);
  ASSERT_TRUE(file.ok());
  Result<TraceReportSummary> summary = print_trace_report(*file, [](std::string_view) {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(describe_losses(*file, *summary),
            (std::vector<std::string>{"CPU 0 lost events; gaps start-25093.011001: counts over this CPU's trace are lower bounds"}));
}

TEST(TraceDat, DamagedFilesAreOneErrorNeverAWildRead) {
  const std::vector<uint8_t> whole = seed("v6-getppid-stacktrace");
  std::vector<uint8_t> truncated(whole.begin(), whole.end() - 100);
  Result<TraceDat> cut = TraceDat::parse(truncated, false);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().describe().find("truncated"), std::string::npos) << cut.error().describe();
  // A page whose header claims more data than a page holds.
  std::vector<uint8_t> bad = whole;
  const size_t table = std::search(bad.begin(), bad.end(), "flyrecord", "flyrecord" + 9) - bad.begin() + 10;
  uint64_t offset = 0;
  std::memcpy(&offset, bad.data() + table, 8);
  const uint64_t huge = 100000;
  std::memcpy(bad.data() + offset + 8, &huge, 8);
  Result<TraceDat> file = TraceDat::parse(bad, false);
  ASSERT_TRUE(file.ok());
  Result<void> walked = file->for_each_event([](const TraceDatEvent&) { return true; });
  ASSERT_FALSE(walked.ok());
  EXPECT_NE(walked.error().describe().find("claims 100000 bytes"), std::string::npos) << walked.error().describe();
  EXPECT_FALSE(TraceDat::parse(std::vector<uint8_t>{'x'}, false).ok());
}

}  // namespace
}  // namespace vperf::tracing
