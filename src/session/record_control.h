#pragma once
// perf record's --control: another process (perf daemon, a test harness, a script that wants
// samples only around one phase) drives a running recording by writing commands, one per line
// (or NUL-terminated), to a control fifo or inherited fd, and reads "ack\n\0" from an ack fifo
// or fd after each command it understood, as perf 6.1 answers:
//   enable [EVENT] / disable [EVENT]  start or stop counting (all events, or the one named)
//   stop                               end the recording as a signal would
//   ping                               only the ack (perf daemon's liveness check)
//   evlist                             the events' names, on the recording's stderr
//   snapshot                           perf's AUX-area snapshot: vperf records no AUX area
// An unknown command gets no ack (as perf). --control=fifo:CTL[,ACK] opens the fifos (made
// beforehand with mkfifo), --control=fd:CTL[,ACK] uses descriptors the caller passed down.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::session {

struct ControlSpec {
  enum class Kind { fifo, fd };
  Kind kind = Kind::fifo;
  std::string control, ack;  // paths (fifo) or decimal fds (fd); ack may be empty
};

// "fifo:CTL[,ACK]" or "fd:CTL[,ACK]"; nullopt when it is neither.
std::optional<ControlSpec> parse_control_spec(std::string_view text);

struct ControlCommand {
  enum class Kind { enable, disable, stop, ping, evlist, snapshot, unknown };
  Kind kind = Kind::unknown;
  std::string event;  // enable/disable: the event named, empty for all
};

// One command as read (without its '\n' or NUL); surrounding blanks are ignored.
ControlCommand parse_control_command(std::string_view line);

// The open control and ack descriptors, and the bytes of a command not yet complete.
class RecordControl {
 public:
  // Opens the fifos (read-write and non-blocking, so that neither waits for the other end) or
  // checks the inherited fds. The error says which and why.
  static Result<RecordControl> open(const ControlSpec& spec);

  int control_fd() const { return control_fd_; }
  // Reads what is there; returns the complete commands, each once. A line longer than
  // kMaxCommand bytes is dropped whole (no command is that long).
  Result<std::vector<ControlCommand>> read_commands();
  // "ack\n" and its NUL, as perf writes it, when there is an ack descriptor.
  void ack() const;

  static constexpr size_t kMaxCommand = 4096;

 private:
  RecordControl() = default;

  int control_fd_ = -1, ack_fd_ = -1;
  ScopedFd owned_control_, owned_ack_;  // the fifos opened here; inherited fds stay the caller's
  std::string pending_;
  bool overlong_ = false;  // dropping the rest of a line past kMaxCommand
};

}  // namespace vperf::session
