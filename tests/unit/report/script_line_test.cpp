// append_script_sample against lines perf 6.1's `perf script` printed for real recordings
// (copied from its output; the samples here carry the same values).
#include "report/script_line.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace vperf::report {
namespace {

constexpr const char* kLd = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2";

std::shared_ptr<const symbols::Map> map_of(symbols::DsoKind kind, const std::string& name, uint64_t start, uint64_t end) {
  auto dso = std::make_shared<symbols::Dso>(kind, name, [] { return Result<symbols::DsoContents>(symbols::DsoContents{}); });
  auto map = std::make_shared<symbols::Map>();
  map->start = start;
  map->end = end;
  map->addressing = kind == symbols::DsoKind::User ? symbols::MapAddressing::FileOffset : symbols::MapAddressing::Absolute;
  map->dso = dso;
  return map;
}

symbols::ResolvedAddress resolved(uint64_t ip, std::shared_ptr<const symbols::Map> map, const symbols::Symbol* symbol,
                                  uint64_t offset) {
  symbols::ResolvedAddress at;
  at.ip = ip;
  at.map = std::move(map);
  at.symbol = symbol;
  at.symbol_offset = offset;
  if (at.map) at.map_relative = at.map->map_ip(ip);
  return at;
}

class ScriptLineTest : public ::testing::Test {
 protected:
  ScriptLineTest() {
    entry_.attr.type = PERF_TYPE_SOFTWARE;
    entry_.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    entry_.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
    entry_.name = "cpu-clock";
  }

  // A frame of the sample's stack; inlined_name set for an inlined frame.
  struct TestFrame {
    uint64_t ip;
    uint8_t cpumode;
    symbols::ResolvedAddress at;
    std::string_view inlined_name;
  };

  // `chain`: the stack SampleReplay would give the sample (leaf first), of which recorded_ came
  // from the recorded callchain, the first unknown marker after unknown_marker_at_ of them.
  std::string line(const data::Sample& s, pid_t pid, uint64_t time, const symbols::ResolvedAddress& at,
                   const std::vector<TestFrame>& chain, ScriptFieldSet fields, uint32_t cpu = 0) {
    data::Record record;
    record.type = PERF_RECORD_SAMPLE;
    data::RecordView view{record, {}, &entry_, 0, 0};
    ResolvedSample sample{.view = view, .sample = s, .pid = pid};
    sample.tid = pid;
    sample.cpu = cpu;
    sample.time = time;
    sample.comm = comm_;
    sample.at = at;
    std::vector<uint32_t> frames;
    for (const TestFrame& f : chain)
      frames.push_back(f.inlined_name.empty() ? profile_.intern_frame(f.ip, f.cpumode, f.at)
                                             : profile_.intern_frame(f.ip, f.cpumode, f.at, InlinePlace{f.inlined_name, 1}));
    sample.profile = &profile_;
    sample.stack = profile_.intern_stack(frames);
    sample.recorded_frames = recorded_;
    sample.unknown_marker_at = unknown_marker_at_;
    std::string out, through_kept_lines;
    append_script_sample(out, sample, fields, entry_.name, options_, nullptr);
    // Twice through the lines kept from sample to sample: formatted, then copied.
    for (int pass = 0; pass < 2; ++pass) {
      through_kept_lines.clear();
      append_script_sample(through_kept_lines, sample, fields, entry_.name, options_, nullptr, &frame_lines_);
      EXPECT_EQ(through_kept_lines, out) << "a kept frame line prints what formatting it prints";
    }
    return out;
  }

  data::EventAttrEntry entry_;
  Profile profile_;
  ScriptFrameLines frame_lines_;
  uint32_t recorded_ = 0;
  uint32_t unknown_marker_at_ = kNoId;
  std::string comm_ = "vperf-workload";
  ScriptLineOptions options_{.event_name_width = 9, .use_callchain = true};
  std::shared_ptr<const symbols::Map> ld_ = map_of(symbols::DsoKind::User, kLd, 0x7fa5cd96f000, 0x7fa5cd995000);
  std::shared_ptr<const symbols::Map> kernel_ =
      map_of(symbols::DsoKind::Kernel, "[kernel.kallsyms]", 0xffffffff81000000, 0xffffffff83000000);
  symbols::Symbol intel_check_word_{0x14d00, 0x15000, "intel_check_word.constprop.0"};
  symbols::Symbol mas_next_slot_{0xffffffff821c7fc0, 0xffffffff821c8000, "mas_next_slot"};
};

constexpr ScriptFieldSet kDefault = kFieldComm | kFieldTid | kFieldTime | kFieldEvent | kFieldIp | kFieldSym | kFieldSymOff |
                                    kFieldDso | kFieldPeriod;

TEST_F(ScriptLineTest, DefaultLineWithoutCallchain) {
  data::Sample s;
  s.ip = 0x7fa5cd984004;
  s.period = 250000;
  EXPECT_EQ(line(s, 31738, 16430309497123, resolved(s.ip, ld_, &intel_check_word_, 0x224), {}, kDefault),
            "  vperf-workload 31738 16430.309497:     250000 cpu-clock:      7fa5cd984004 "
            "intel_check_word.constprop.0+0x224 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n");
  s.ip = 0xffffffff821c7fc8;
  EXPECT_EQ(line(s, 31738, 16430309748999, resolved(s.ip, kernel_, &mas_next_slot_, 0x8), {}, kDefault),
            "  vperf-workload 31738 16430.309748:     250000 cpu-clock:  ffffffff821c7fc8 mas_next_slot+0x8 ([kernel.kallsyms])\n");
}

TEST_F(ScriptLineTest, CallchainFramesOneALineWithDsoOffsetsForUserSpace) {
  entry_.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  data::Sample s;
  s.ip = 0x7fa5cd983f02;
  s.period = 250000;
  s.callchain = {PERF_CONTEXT_USER, 0x7fa5cd983f02, 0x690000000};
  symbols::ResolvedAddress leaf = resolved(s.ip, ld_, &intel_check_word_, 0x122);
  leaf.map_relative = 0x14f02;
  recorded_ = 2;
  std::vector<TestFrame> chain{{s.ip, PERF_RECORD_MISC_USER, leaf, {}},
                                {0x690000000, PERF_RECORD_MISC_USER, resolved(0x690000000, nullptr, nullptr, 0), {}}};
  EXPECT_EQ(line(s, 932, 16554553375000, leaf, chain, kDefault),
            "vperf-workload   932 16554.553375:     250000 cpu-clock: \n"
            "\t           14f02 intel_check_word.constprop.0+0x122 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
            "\t       690000000 [unknown] ([unknown])\n"
            "\n");

  // -G (use_callchain false): one line, comm padded again.
  options_.use_callchain = false;
  EXPECT_EQ(line(s, 932, 16554553375000, leaf, chain, kDefault),
            "  vperf-workload   932 16554.553375:     250000 cpu-clock:      7fa5cd983f02 "
            "intel_check_word.constprop.0+0x122 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n");
}

TEST_F(ScriptLineTest, KernelFramesAndMaxStack) {
  entry_.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  data::Sample s;
  s.ip = 0xffffffff821c7fc8;
  s.period = 250000;
  s.callchain = {PERF_CONTEXT_KERNEL, 0xffffffff821c7fc8, 0xffffffff821c7fd0};
  symbols::ResolvedAddress a = resolved(0xffffffff821c7fc8, kernel_, &mas_next_slot_, 0x8);
  symbols::ResolvedAddress b = resolved(0xffffffff821c7fd0, kernel_, &mas_next_slot_, 0x10);
  std::vector<TestFrame> chain{{a.ip, PERF_RECORD_MISC_KERNEL, a, {}}, {b.ip, PERF_RECORD_MISC_KERNEL, b, {}}};
  recorded_ = 2;
  options_.max_stack = 1;
  EXPECT_EQ(line(s, 1, 1000000000, a, chain, kFieldIp | kFieldSym | kFieldSymOff | kFieldDso),
            "\n\tffffffff821c7fc8 mas_next_slot+0x8 ([kernel.kallsyms])\n\n");
  options_.max_stack = 127;
  // Pipe mode's tracepoint callchain fields: ip and sym only.
  EXPECT_EQ(line(s, 1, 1000000000, a, chain, kFieldIp | kFieldSym),
            "\n\tffffffff821c7fc8 mas_next_slot\n\tffffffff821c7fd0 mas_next_slot\n\n");
}

TEST_F(ScriptLineTest, UnknownCallchainMarkerDiscardsTheRecordedChain) {
  entry_.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  data::Sample s;
  s.ip = 0xffffffff821c7fc8;
  // A sched_switch callchain as the kernel recorded it (perf script -D): it ends in -1, and
  // perf 6.1 prints the sample with no frames at all.
  s.callchain = {PERF_CONTEXT_KERNEL, 0xffffffff821c7fc8, PERF_CONTEXT_USER, 0xdca57d, ~0ULL};
  symbols::ResolvedAddress a = resolved(s.ip, kernel_, &mas_next_slot_, 0x8);
  std::vector<TestFrame> chain{{a.ip, PERF_RECORD_MISC_KERNEL, a, {}},
                                {0xdca57d, PERF_RECORD_MISC_USER, resolved(0xdca57d, nullptr, nullptr, 0), {}}};
  recorded_ = 2;
  unknown_marker_at_ = 2;
  EXPECT_EQ(line(s, 1, 0, a, chain, kFieldComm | kFieldIp | kFieldSym), "vperf-workload \n\n");
  // Past --max-stack the marker is never reached: perf prints the frames before it.
  options_.max_stack = 2;
  EXPECT_EQ(line(s, 1, 0, a, chain, kFieldComm | kFieldIp | kFieldSym),
            "vperf-workload \n\tffffffff821c7fc8 mas_next_slot\n\t          dca57d [unknown]\n\n");
}

TEST_F(ScriptLineTest, EmptyRecordedCallchainHasNoFrames) {
  entry_.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  data::Sample s;
  s.ip = 0x7fa5cd984004;
  s.period = 1;
  symbols::ResolvedAddress at = resolved(s.ip, ld_, &intel_check_word_, 0x224);
  // SampleReplay's lone-ip frame for an empty callchain is not one perf prints.
  EXPECT_EQ(line(s, 7, 2000000, at, {{s.ip, PERF_RECORD_MISC_USER, at, {}}}, kFieldComm | kFieldIp | kFieldSym),
            "vperf-workload \n\n");
}

TEST_F(ScriptLineTest, InlinedFramesEndInInlinedInsteadOfTheDso) {
  entry_.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  data::Sample s;
  s.ip = 0x7fa5cd984004;
  s.callchain = {PERF_CONTEXT_USER, s.ip};
  symbols::ResolvedAddress at = resolved(s.ip, ld_, &intel_check_word_, 0x224);
  std::vector<TestFrame> chain{{s.ip, PERF_RECORD_MISC_USER, at, "check_one"}, {s.ip, PERF_RECORD_MISC_USER, at, {}}};
  recorded_ = 1;
  EXPECT_EQ(line(s, 7, 0, at, chain, kFieldIp | kFieldSym | kFieldSymOff | kFieldDso),
            "\n\t           15004 check_one+0x224 (inlined)\n"
            "\t           15004 intel_check_word.constprop.0+0x224 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n\n");
}

TEST_F(ScriptLineTest, PidTidCpuAndSingleFieldsAsPerfPadsThem) {
  data::Sample s;
  s.ip = 0x7fa5cd984004;
  s.period = 250000;
  symbols::ResolvedAddress at = resolved(s.ip, ld_, &intel_check_word_, 0x224);
  comm_ = "migration/0";
  // perf script -F comm,pid,tid,cpu: "     migration/0    18/18    [000] "
  EXPECT_EQ(line(s, 18, 0, at, {}, kFieldComm | kFieldPid | kFieldTid | kFieldCpu), "     migration/0    18/18    [000] \n");
  EXPECT_EQ(line(s, 31738, 0, at, {}, kFieldTid), "31738 \n");
  EXPECT_EQ(line(s, 31738, 16430309497000, at, {}, kFieldTime), "16430.309497: \n");
  EXPECT_EQ(line(s, 31738, 0, at, {}, kFieldEvent), "cpu-clock: \n");
  EXPECT_EQ(line(s, 31738, 0, at, {}, kFieldPeriod), "    250000 \n");
  EXPECT_EQ(line(s, 31738, 0, at, {}, kFieldIp), "     7fa5cd984004\n");
  EXPECT_EQ(line(s, 31738, 0, at, {}, kFieldIp | kFieldSym), "     7fa5cd984004 intel_check_word.constprop.0\n");
  EXPECT_EQ(line(s, 31738, 0, at, {}, kFieldSym), "\n") << "sym without ip prints nothing, as perf";
  EXPECT_EQ(line(s, 5, 0, at, {}, kFieldCpu, 12), "[012] \n");
}

TEST_F(ScriptLineTest, PeriodComesFromTheAttrWhenNotSampled) {
  entry_.attr.sample_type &= ~PERF_SAMPLE_PERIOD;
  entry_.attr.sample_period = 1;  // perf record -e TRACEPOINT: -c 1
  data::Sample s;
  // perf script -F comm,pid,period on sched_switch: "            perf 32407          1 "
  comm_ = "perf";
  EXPECT_EQ(line(s, 32407, 0, {}, {}, kFieldComm | kFieldPid | kFieldPeriod), "            perf 32407          1 \n");
}

// A frame id names another frame once the profile has forgotten its frames (script forgets them
// as it goes), and other fields print another line: neither reuses a kept line.
TEST_F(ScriptLineTest, KeptFrameLinesAreForgottenWithTheProfileAndOnOtherFields) {
  entry_.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  data::Sample s;
  s.ip = 0xffffffff821c7fc8;
  s.period = 1;
  s.callchain = {PERF_CONTEXT_KERNEL, s.ip};
  recorded_ = 1;
  const symbols::ResolvedAddress kernel_at = resolved(s.ip, kernel_, &mas_next_slot_, 0x8);
  const std::string kernel_frame = "\tffffffff821c7fc8 mas_next_slot+0x8 ([kernel.kallsyms])\n";
  EXPECT_TRUE(line(s, 1, 0, kernel_at, {{s.ip, PERF_RECORD_MISC_KERNEL, kernel_at, {}}}, kDefault & ~kFieldDso)
                  .ends_with("\tffffffff821c7fc8 mas_next_slot+0x8\n\n"));
  EXPECT_TRUE(line(s, 1, 0, kernel_at, {{s.ip, PERF_RECORD_MISC_KERNEL, kernel_at, {}}}, kDefault).ends_with(kernel_frame + "\n"));
  profile_.clear();
  s.ip = 0x7fa5cd984004;
  s.callchain = {PERF_CONTEXT_USER, s.ip};
  symbols::ResolvedAddress user_at = resolved(s.ip, ld_, &intel_check_word_, 0x224);
  user_at.map_relative = 0x15004;
  EXPECT_TRUE(line(s, 1, 0, user_at, {{s.ip, PERF_RECORD_MISC_USER, user_at, {}}}, kDefault)
                  .ends_with("\t           15004 intel_check_word.constprop.0+0x224 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n\n"));
}

TEST(ScriptTimestamp, TruncatesToMicroseconds) {
  EXPECT_EQ(script_timestamp(16430309497999), "16430.309497");
  EXPECT_EQ(script_timestamp(5000001000), "5.000001");
  EXPECT_EQ(script_timestamp(0), "0.000000");
  EXPECT_EQ(script_timestamp(999999999), "0.999999");
  EXPECT_EQ(script_timestamp(1000), "0.000001");
  EXPECT_EQ(script_timestamp(UINT64_MAX), "18446744073.709551");
}

}  // namespace
}  // namespace vperf::report
