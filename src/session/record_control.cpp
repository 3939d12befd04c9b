#include "session/record_control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/strings.h"

namespace vperf::session {

std::optional<ControlSpec> parse_control_spec(std::string_view text) {
  ControlSpec spec;
  if (text.starts_with("fifo:")) {
    spec.kind = ControlSpec::Kind::fifo;
    text.remove_prefix(5);
  } else if (text.starts_with("fd:")) {
    spec.kind = ControlSpec::Kind::fd;
    text.remove_prefix(3);
  } else {
    return std::nullopt;
  }
  const size_t comma = text.find(',');
  spec.control = std::string(text.substr(0, comma));
  if (comma != std::string_view::npos) spec.ack = std::string(text.substr(comma + 1));
  if (spec.control.empty() || (comma != std::string_view::npos && spec.ack.empty())) return std::nullopt;
  if (spec.kind == ControlSpec::Kind::fd) {
    for (const std::string* fd : {&spec.control, &spec.ack}) {
      if (fd->empty()) continue;
      const std::optional<uint64_t> number = parse_u64(*fd);
      if (!number || *number > INT32_MAX) return std::nullopt;
    }
  }
  return spec;
}

ControlCommand parse_control_command(std::string_view line) {
  line = trim(line);
  const size_t blank = line.find_first_of(" \t");
  const std::string_view verb = line.substr(0, blank);
  const std::string_view rest = blank == std::string_view::npos ? std::string_view{} : trim(line.substr(blank));
  ControlCommand command;
  if (verb == "enable" || verb == "disable") {
    command.kind = verb == "enable" ? ControlCommand::Kind::enable : ControlCommand::Kind::disable;
    command.event = std::string(rest);
  } else if (!rest.empty() && verb != "evlist") {
    command.kind = ControlCommand::Kind::unknown;  // "stop now": not a command perf knows
  } else if (verb == "stop") {
    command.kind = ControlCommand::Kind::stop;
  } else if (verb == "ping") {
    command.kind = ControlCommand::Kind::ping;
  } else if (verb == "evlist") {
    command.kind = ControlCommand::Kind::evlist;
  } else if (verb == "snapshot") {
    command.kind = ControlCommand::Kind::snapshot;
  }
  return command;
}

namespace {

Result<int> open_fifo(const std::string& path, const char* role) {
  // Read-write: opening a fifo read-only (or write-only) without O_NONBLOCK would wait for the
  // other end, and a write-only non-blocking open fails while nobody reads.
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error::from_errno(std::string("cannot open the ") + role + " fifo '" + path + "'");
  return fd;
}

Result<int> inherited_fd(const std::string& number, const char* role) {
  const int fd = static_cast<int>(*parse_u64(number));
  if (::fcntl(fd, F_GETFD) < 0) return Error::from_errno(std::string("the ") + role + " fd " + number + " is not open");
  return fd;
}

}  // namespace

Result<RecordControl> RecordControl::open(const ControlSpec& spec) {
  RecordControl control;
  if (spec.kind == ControlSpec::Kind::fifo) {
    VPERF_TRY(int control_fd, open_fifo(spec.control, "control"));
    control.owned_control_.reset(control_fd);
    control.control_fd_ = control_fd;
    if (!spec.ack.empty()) {
      VPERF_TRY(int ack_fd, open_fifo(spec.ack, "ack"));
      control.owned_ack_.reset(ack_fd);
      control.ack_fd_ = ack_fd;
    }
  } else {
    VPERF_TRY(control.control_fd_, inherited_fd(spec.control, "control"));
    if (!spec.ack.empty()) {
      VPERF_TRY(control.ack_fd_, inherited_fd(spec.ack, "ack"));
    }
    // Reading must not wait: the loop only calls read_commands when the fd is readable, but
    // another reader of the same pipe may have taken the bytes by then.
    const int flags = ::fcntl(control.control_fd_, F_GETFL);
    if (flags >= 0) (void)::fcntl(control.control_fd_, F_SETFL, flags | O_NONBLOCK);
  }
  return control;
}

Result<std::vector<ControlCommand>> RecordControl::read_commands() {
  std::vector<ControlCommand> commands;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(control_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) return Error::from_errno("cannot read the control fd");
    if (n == 0) break;  // an inherited pipe whose writer closed: nothing more will come
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buf[i];
      if (c == '\n' || c == '\0') {
        if (!overlong_ && !trim(pending_).empty()) commands.push_back(parse_control_command(pending_));
        pending_.clear();
        overlong_ = false;
      } else if (!overlong_) {
        pending_.push_back(c);
        if (pending_.size() > kMaxCommand) {
          pending_.clear();
          overlong_ = true;
        }
      }
    }
  }
  return commands;
}

void RecordControl::ack() const {
  if (ack_fd_ < 0) return;
  static constexpr char kAck[] = "ack\n";  // sizeof includes the NUL, which perf sends too
  // A full or closed ack pipe loses the ack, as perf's: the recording goes on either way.
  (void)!::write(ack_fd_, kAck, sizeof kAck);
}

}  // namespace vperf::session
