#include "session/reading_session.h"

#include <gtest/gtest.h>

#include <linux/perf_event.h>

#include <fstream>
#include <sstream>
#include <string>

#include "data/perf_data_writer.h"
#include "support/fake_event_fs.h"

namespace vperf::session {
namespace {

std::string written_recording(const test::TempTree& tree) {
  const std::string path = (tree.root() / "perf.data").string();
  data::EventAttrEntry entry;
  entry.attr.type = PERF_TYPE_SOFTWARE;
  entry.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  entry.attr.size = sizeof(perf_event_attr);
  entry.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  entry.name = "cpu-clock";
  Result<data::PerfDataWriter> writer = data::PerfDataWriter::create_file(path, {entry});
  EXPECT_TRUE(writer.ok());
  if (writer.ok()) {
    EXPECT_TRUE(writer->finish({}).ok());
  }
  return path;
}

TEST(ReadingSession, AMissingRecordingSaysHowToMakeOne) {
  test::TempTree tree;
  try {
    ReadingSession session(ReadingInput{.input = (tree.root() / "none.data").string()}, "vperf record -g -- COMMAND");
    FAIL() << "opened a file that does not exist";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read " + (tree.root() / "none.data").string()), std::string::npos)
        << e.what();
    EXPECT_EQ(e.hint(), "record one first: vperf record -g -- COMMAND (or give -i FILE)");
  }
}

TEST(ReadingSession, NamesTheInputAndItsErrorsTheSameWay) {
  test::TempTree tree;
  const std::string path = written_recording(tree);
  ReadingSession session(ReadingInput{.input = path}, "vperf record -- COMMAND");
  EXPECT_FALSE(session.is_pipe());
  EXPECT_EQ(session.name(), path);
  EXPECT_EQ(session.header_info().input, path);
  EXPECT_TRUE(session.header_info().captured_on.has_value());
  ASSERT_EQ(session.reader().attrs().size(), 1u);
  EXPECT_EQ(std::string(session.no_samples().what()), path + " has no samples");
  EXPECT_EQ(session.no_samples().hint(), "record some: vperf record -- COMMAND");
  const UserError damaged = session.unreadable(Error{"a record runs past the end"});
  EXPECT_EQ(std::string(damaged.what()), "cannot read the samples of " + path + ": a record runs past the end");
  EXPECT_EQ(unreadable_recording("the pipe", Error{"x"}).hint(), damaged.hint());
}

TEST(ReadingSession, MachinesAreMadeOnceWithTheScopeAsked) {
  test::TempTree tree;
  const std::string path = written_recording(tree);
  ReadingSession session(ReadingInput{.input = path, .scope = {.host = false, .guest = true}}, "vperf record");
  symbols::Machines& machines = session.machines();
  EXPECT_EQ(&session.machines(), &machines);
  EXPECT_FALSE(machines.sample_scope().host);
  EXPECT_TRUE(machines.sample_scope().guest);
  EXPECT_NE(session.unwinder(), nullptr);
  EXPECT_EQ(session.unwinder(), session.unwinder());
}

TEST(ReadingSession, UnusableGuestSymbolsStopWithTheFix) {
  test::TempTree tree;
  tree.write("kallsyms", "0000000000000000 T _stext\n");  // zeroed addresses: kptr_restrict in the guest
  const std::string path = written_recording(tree);
  ReadingInput input{.input = path};
  input.guests.kallsyms = tree.root() / "kallsyms";
  ReadingSession session(std::move(input), "vperf record");
  EXPECT_THROW(session.machines(), UserError);
}

TEST(ReadingSession, WarningsOneLineEachOrOneLineForATruncatedFile) {
  test::TempTree tree;
  const std::string path = written_recording(tree);
  {
    // Half a record header after the (unterminated) data: a killed recording.
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out.write("\x09\x00\x00\x00", 4);
  }
  ReadingSession session(ReadingInput{.input = path}, "vperf record");
  ASSERT_TRUE(session.reader().read([](const data::RecordView&) { return true; }).ok());
  const std::vector<std::string>& warnings = session.reader().warnings();
  ASSERT_GE(warnings.size(), 2u);
  std::ostringstream each, one;
  session.print_warnings(each);
  session.print_warnings(one, true);
  std::string expected_each, expected_one = "vperf: warning: ";
  for (size_t i = 0; i < warnings.size(); ++i) {
    expected_each += "vperf: warning: " + warnings[i] + "\n";
    expected_one += (i ? "; " : "") + warnings[i];
  }
  EXPECT_EQ(each.str(), expected_each);
  EXPECT_EQ(one.str(), expected_one + "\n");
}

}  // namespace
}  // namespace vperf::session
