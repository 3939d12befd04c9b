// perf report --header's event line and bit names, against lines perf 6.1 printed for
// `perf record -e cpu-clock -F 999 -g` on this machine.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstring>

#include "report/report_header.h"

namespace vperf::report {
namespace {

TEST(ReportHeader, EventLineAsPerfPrintsIt) {
  data::EventAttrEntry e;
  std::memset(&e.attr, 0, sizeof(e.attr));
  e.name = "cpu-clock";
  e.ids = {87599, 87600};
  perf_event_attr& a = e.attr;
  a.type = PERF_TYPE_SOFTWARE;
  a.size = 128;
  a.sample_freq = 999;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
  a.read_format = PERF_FORMAT_ID | (1u << 4);
  a.disabled = a.inherit = a.mmap = a.comm = a.freq = a.enable_on_exec = a.task = a.sample_id_all = 1;
  a.exclude_guest = a.mmap2 = a.comm_exec = a.ksymbol = a.bpf_event = 1;
  EXPECT_EQ(event_line(e),
            "# event : name = cpu-clock, , id = { 87599, 87600 }, type = 1, size = 128, { sample_period, sample_freq } = 999, "
            "sample_type = IP|TID|TIME|CALLCHAIN|PERIOD, read_format = ID|LOST, disabled = 1, inherit = 1, mmap = 1, "
            "comm = 1, freq = 1, enable_on_exec = 1, task = 1, sample_id_all = 1, exclude_guest = 1, mmap2 = 1, "
            "comm_exec = 1, ksymbol = 1, bpf_event = 1\n");
  e.ids.clear();
  a.config = 0x3c;
  EXPECT_TRUE(event_line(e).starts_with("# event : name = cpu-clock, , type = 1, size = 128, config = 0x3c, ")) << event_line(e);
}

TEST(ReportHeader, BitNamesWithUnknownBitsInHex) {
  EXPECT_EQ(sample_type_names(PERF_SAMPLE_IP | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW), "IP|CPU|RAW");
  EXPECT_EQ(sample_type_names(PERF_SAMPLE_IP | (1ULL << 40)), "IP|0x10000000000");
  EXPECT_EQ(read_format_names(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_GROUP), "TOTAL_TIME_ENABLED|GROUP");
}

}  // namespace
}  // namespace vperf::report
