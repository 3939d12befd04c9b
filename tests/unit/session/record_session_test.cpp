// RecordSession and its sink, in-process: a fake opener stands for a kernel without hardware
// cycles or without permission; the events it lets through are real (software) ones.
#include "session/record_session.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

#include <sstream>

#include "data/perf_data_reader.h"
#include "session/record_sink.h"
#include "support/fake_event_fs.h"

namespace vperf::session {
namespace {

events::ResolvedEvent event(std::string name, uint32_t type, uint64_t config) {
  events::ResolvedEvent e;
  e.name = std::move(name);
  e.type = type;
  e.config = config;
  return e;
}

// A kernel without hardware events (a VM without a virtual PMU): ENOENT for them.
class NoHardwareOpener final : public perf::PerfEventOpener {
 public:
  Result<perf::EventFd> open(const perf_event_attr& attr, const perf::OpenTarget& target) const override {
    if (attr.type == PERF_TYPE_HARDWARE) return Error::from_errno("perf_event_open", ENOENT);
    return kernel_.open(attr, target);
  }
 private:
  perf::KernelPerfEventOpener kernel_;
};

// Refuses everything as a paranoid kernel does for a user who may not sample at all.
class RefusingOpener final : public perf::PerfEventOpener {
 public:
  Result<perf::EventFd> open(const perf_event_attr&, const perf::OpenTarget&) const override {
    return Error::from_errno("perf_event_open", EMFILE);
  }
};

RecordRequest request_for(const std::filesystem::path& output) {
  RecordRequest r;
  r.events = {event("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)};
  r.fallback_events = {event("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK)};
  r.attr.frequency = 1000;
  r.attr.scope.host = true;
  r.output = output.string();
  r.command = {"true"};
  r.cmdline = {"vperf", "record", "true"};
  r.mmap_pages = 8;
  return r;
}

TEST(RecordSession, MissingCyclesFallBackToCpuClockAndTheFileSaysSo) {
  test::TempTree dir;
  NoHardwareOpener opener;
  SystemRunClock clock;
  std::ostringstream err;
  const std::filesystem::path output = dir.root() / "perf.data";
  EXPECT_EQ(record(request_for(output), opener, clock, err), 0);
  EXPECT_NE(err.str().find("vperf: cycles is not supported here (no hardware PMU); sampling cpu-clock instead"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("[ vperf record: Captured and wrote "), std::string::npos) << err.str();
  Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(output);
  ASSERT_TRUE(reader.ok()) << reader.error().describe();
  ASSERT_EQ(reader->attrs().size(), 1u);
  EXPECT_EQ(reader->attrs()[0].name, "cpu-clock");
  EXPECT_EQ(reader->attrs()[0].attr.type, uint32_t{PERF_TYPE_SOFTWARE});
}

TEST(RecordSession, RefusedEventsEndTheCommandWithAHintAndNoFile) {
  test::TempTree dir;
  RefusingOpener opener;
  SystemRunClock clock;
  std::ostringstream err;
  const std::filesystem::path output = dir.root() / "perf.data";
  try {
    record(request_for(output), opener, clock, err);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(e.hint().find("raise ulimit -n"), std::string::npos) << e.hint();
  }
  EXPECT_FALSE(std::filesystem::exists(output));
}

// A LOST record is read through the record parser, with the trailer of whichever attr it has.
TEST(RecordSink, LostRecordsAreCountedThroughTheParser) {
  test::TempTree dir;
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  attr.sample_id_all = 1;
  Result<data::PerfDataWriter> writer = data::PerfDataWriter::create_file(dir.root() / "perf.data", {{attr, "cpu-clock", {7}}});
  ASSERT_TRUE(writer.ok()) << writer.error().describe();
  perf_event_attr other = attr;
  other.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;  // a shorter trailer than the lost record's
  RecordSink sink(writer.value(), {data::SampleFormat::from_attr(other), data::SampleFormat::from_attr(attr)}, "perf.data");
  const data::SampleFormat format = data::SampleFormat::from_attr(attr);
  data::Record lost;
  lost.type = PERF_RECORD_LOST;
  lost.body = data::LostRecord{7, 1234};
  lost.sample_id.pid = 99;
  sink.write(lost, format);
  sink.write(lost, format);
  data::Record comm;
  comm.type = PERF_RECORD_COMM;
  comm.body = data::CommRecord{1, 1, "init"};
  sink.write(comm, format);
  sink.check();
  EXPECT_EQ(sink.tally().records, 3u);
  EXPECT_EQ(sink.tally().lost_chunks, 2u);
  EXPECT_EQ(sink.tally().lost, 2468u);
  EXPECT_EQ(lost_record(data::build_record(comm, &format), {format}), std::nullopt);
}

}  // namespace
}  // namespace vperf::session
