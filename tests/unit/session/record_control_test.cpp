// record --control: the spec, the commands as perf 6.1 reads them, and the reading of a pipe
// that delivers them in pieces.
#include "session/record_control.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace vperf::session {
namespace {

TEST(RecordControl, SpecsAreFifoOrFdWithAnOptionalAck) {
  std::optional<ControlSpec> fifo = parse_control_spec("fifo:/run/ctl,/run/ack");
  ASSERT_TRUE(fifo);
  EXPECT_EQ(fifo->kind, ControlSpec::Kind::fifo);
  EXPECT_EQ(fifo->control, "/run/ctl");
  EXPECT_EQ(fifo->ack, "/run/ack");
  std::optional<ControlSpec> fd = parse_control_spec("fd:10");
  ASSERT_TRUE(fd);
  EXPECT_EQ(fd->kind, ControlSpec::Kind::fd);
  EXPECT_EQ(fd->control, "10");
  EXPECT_EQ(fd->ack, "");
  for (const char* bad : {"", "fifo:", "fd:", "fd:x", "fd:1,", "fifo:a,", "pipe:a", "fd:99999999999", "fd:-1"})
    EXPECT_FALSE(parse_control_spec(bad)) << bad;
}

TEST(RecordControl, CommandsAreReadAsPerfReadsThem) {
  EXPECT_EQ(parse_control_command("enable").kind, ControlCommand::Kind::enable);
  EXPECT_EQ(parse_control_command("  disable  ").kind, ControlCommand::Kind::disable);
  ControlCommand named = parse_control_command("enable cpu-clock");
  EXPECT_EQ(named.kind, ControlCommand::Kind::enable);
  EXPECT_EQ(named.event, "cpu-clock");
  EXPECT_EQ(parse_control_command("stop").kind, ControlCommand::Kind::stop);
  EXPECT_EQ(parse_control_command("ping").kind, ControlCommand::Kind::ping);
  EXPECT_EQ(parse_control_command("evlist -v").kind, ControlCommand::Kind::evlist);
  EXPECT_EQ(parse_control_command("snapshot").kind, ControlCommand::Kind::snapshot);
  for (const char* unknown : {"", "stop now", "pingx", "ENABLE", "ack"})
    EXPECT_EQ(parse_control_command(unknown).kind, ControlCommand::Kind::unknown) << unknown;
}

TEST(RecordControl, APipeDeliversCommandsInPiecesAndDropsOverlongLines) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  int ack_fds[2];
  ASSERT_EQ(::pipe2(ack_fds, O_CLOEXEC), 0);
  Result<RecordControl> control = RecordControl::open(
      ControlSpec{ControlSpec::Kind::fd, std::to_string(pipe_fds[0]), std::to_string(ack_fds[1])});
  ASSERT_TRUE(control.ok()) << control.error().describe();
  auto send = [&](std::string_view text) { ASSERT_EQ(::write(pipe_fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size())); };

  send("ena");
  Result<std::vector<ControlCommand>> none = control->read_commands();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "half a command is kept for the next read";
  send(std::string("ble\nping") + '\0' + "stop\n");
  Result<std::vector<ControlCommand>> three = control->read_commands();
  ASSERT_TRUE(three.ok());
  ASSERT_EQ(three->size(), 3u);
  EXPECT_EQ((*three)[0].kind, ControlCommand::Kind::enable);
  EXPECT_EQ((*three)[1].kind, ControlCommand::Kind::ping);
  EXPECT_EQ((*three)[2].kind, ControlCommand::Kind::stop);

  send(std::string(RecordControl::kMaxCommand + 10, 'x'));
  send("y\ndisable\n");
  Result<std::vector<ControlCommand>> after_long = control->read_commands();
  ASSERT_TRUE(after_long.ok());
  ASSERT_EQ(after_long->size(), 1u) << "the overlong line is dropped whole, the next one read";
  EXPECT_EQ((*after_long)[0].kind, ControlCommand::Kind::disable);

  control->ack();
  char buf[8] = {};
  EXPECT_EQ(::read(ack_fds[0], buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf, 5), std::string("ack\n\0", 5));
  for (int fd : {pipe_fds[0], pipe_fds[1], ack_fds[0], ack_fds[1]}) ::close(fd);
}

TEST(RecordControl, AMissingFifoOrClosedFdIsAnError) {
  Result<RecordControl> missing = RecordControl::open(ControlSpec{ControlSpec::Kind::fifo, "/nonexistent/ctl", ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/ctl"), std::string::npos);
  Result<RecordControl> closed = RecordControl::open(ControlSpec{ControlSpec::Kind::fd, "999", ""});
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.error().message.find("999"), std::string::npos);
}

}  // namespace
}  // namespace vperf::session
