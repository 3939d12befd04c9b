#include "session/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <thread>

#include "core/files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "perf/stop_signals.h"
#include "session/run_loop.h"

namespace vperf::session {

namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxRequestBytes = 4096;
constexpr auto kAckWait = std::chrono::milliseconds(1000);    // a session's answer to ping
constexpr auto kSessionEndWait = std::chrono::seconds(10);    // SIGTERM to SIGKILL, at stop
constexpr auto kSignalTakenWait = std::chrono::seconds(2);    // for a session to take a SIGUSR2

std::string unquote(std::string_view value) {
  value = trim(value);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
  return std::string(value);
}

}  // namespace

Result<DaemonConfig> parse_daemon_config(std::string_view text) {
  DaemonConfig config;
  std::string section;
  size_t line_number = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_number;
    line = trim(line);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') return Error{"line " + std::to_string(line_number) + ": a section header without ']'"};
      section = std::string(trim(line.substr(1, line.size() - 2)));
      if (section.starts_with("session-")) {
        const std::string name = section.substr(8);
        if (name.empty() || name.find_first_of(" \t/:") != std::string::npos)
          return Error{"line " + std::to_string(line_number) + ": session name '" + name + "' (no blanks, '/' or ':')"};
        bool known = false;
        for (const DaemonSessionConfig& s : config.sessions) known |= s.name == name;
        if (!known) config.sessions.push_back({name, ""});
      }
      continue;
    }
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) return Error{"line " + std::to_string(line_number) + ": expected KEY = VALUE"};
    const std::string_view key = trim(line.substr(0, equals));
    const std::string value = unquote(line.substr(equals + 1));
    if (section == "daemon" && key == "base") {
      config.base = value;
    } else if (section.starts_with("session-") && key == "run") {
      for (DaemonSessionConfig& s : config.sessions)
        if (s.name == section.substr(8)) s.run = value;
    }
  }
  std::erase_if(config.sessions, [](const DaemonSessionConfig& s) { return trim(s.run).empty(); });
  return config;
}

Result<DaemonConfig> load_daemon_config(const std::string& path, const std::string& base_override) {
  Result<std::string> text = read_file(path, kMaxConfigBytes);
  if (!text) return Error{"cannot read the config " + path + ": " + text.error().describe(), text.error().errno_value};
  Result<DaemonConfig> config = parse_daemon_config(*text);
  if (!config) return Error{path + ": " + config.error().message};
  if (!base_override.empty()) config->base = base_override;
  if (config->base.empty()) return Error{path + " names no base directory ([daemon] base=DIR) and --base was not given"};
  std::error_code ec;
  config->base = std::filesystem::absolute(config->base, ec).lexically_normal().string();
  if (!config->base.empty() && config->base.size() > 1 && config->base.back() == '/') config->base.pop_back();
  return config;
}

namespace {

std::string control_socket(const std::string& base) { return base + "/control"; }
std::string session_dir(const std::string& base, const std::string& name) { return base + "/session-" + name; }

Result<sockaddr_un> socket_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path)
    return Error{"the socket path " + path + " is longer than a unix socket's " + std::to_string(sizeof address.sun_path - 1) + " bytes"};
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

// Writes all of `text`, for a client that reads to the end.
void send_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away: nothing to tell it
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// One line from a client, waiting at most a second for it (a client that connects and says
// nothing must not hold up the sessions' daemon).
std::string receive_line(int fd) {
  std::string line;
  char c = 0;
  while (line.size() < kMaxRequestBytes) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) break;
    const ssize_t n = ::recv(fd, &c, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line.push_back(c);
  }
  return line;
}

class Daemon {
 public:
  Daemon(DaemonStart start, DaemonConfig config, ScopedFd lock, ScopedFd listener)
      : start_(std::move(start)), config_(std::move(config)), lock_(std::move(lock)), listener_(std::move(listener)) {}

  // The daemon's life: sessions started, requests answered, the config followed, until stop
  // or a stop signal.
  int run();

 private:
  struct Session {
    DaemonSessionConfig config;
    pid_t pid = -1;
    ScopedFd exit_fd;  // pidfd: readable once the session's process has ended
    std::chrono::steady_clock::time_point started;
    bool ending = false;   // sent SIGTERM for a change of the config
    bool restart = false;  // ending, and still in the config: start it again once it is gone
  };

  void log(const std::string& message) const;
  void start_session(const DaemonSessionConfig& config);
  void session_ended(pid_t pid);
  void reconfigure();
  void answer(int client);
  std::string list(const std::string& separator, bool verbose) const;
  std::string ping(const std::string& name) const;
  bool ping_session(const Session& session) const;
  std::string signal(const std::string& name) const;
  void end_all_sessions();
  static std::string up(std::chrono::steady_clock::time_point since);

  DaemonStart start_;
  DaemonConfig config_;
  ScopedFd lock_, listener_, inotify_;
  std::map<std::string, Session> sessions_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  RunLoop* loop_ = nullptr;
  bool stopping_ = false;
};

void Daemon::log(const std::string& message) const {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  ::localtime_r(&now.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  std::fprintf(stdout, "[%s.%06ld] %s\n", stamp, now.tv_nsec / 1000, message.c_str());
  std::fflush(stdout);
}

std::string Daemon::up(std::chrono::steady_clock::time_point since) {
  return std::to_string(std::chrono::duration_cast<std::chrono::minutes>(std::chrono::steady_clock::now() - since).count());
}

void Daemon::start_session(const DaemonSessionConfig& config) {
  const std::string dir = session_dir(config_.base, config.name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const char* fifo : {"control", "ack"}) {
    const std::string path = dir + "/" + fifo;
    if (::mkfifo(path.c_str(), 0600) != 0 && errno != EEXIST) {
      log("session '" + config.name + "': cannot make " + path + ": " + std::strerror(errno));
      return;
    }
  }
  std::vector<std::string> args{start_.vperf, "record", "--control=fifo:control,ack"};
  for (std::string_view word : split(config.run, ' '))
    if (!trim(word).empty()) args.emplace_back(trim(word));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string output = dir + "/output";
  const pid_t pid = ::fork();
  if (pid < 0) {
    log("session '" + config.name + "': cannot fork: " + std::strerror(errno));
    return;
  }
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    perf::StopSignals::reset_in_child();
    const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0 || ::chdir(dir.c_str()) != 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Session& session = sessions_[config.name];
  session = Session{config, pid, ScopedFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))), std::chrono::steady_clock::now(), false, false};
  log("reconfig: running session [" + config.name + ":" + std::to_string(pid) + "]: " + config.run);
  if (session.exit_fd.valid())
    loop_->watch_fd(session.exit_fd.get(), [this, pid](short) {
      session_ended(pid);
      return Next::unwatch;
    });
}

void Daemon::session_ended(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.pid != pid) continue;
    const std::string name = it->first;
    const bool restart = it->second.restart && !stopping_;
    log("session '" + name + "' exited, status=" + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
    // The fd the loop polled is closed only now, after its last wakeup: its number cannot
    // come back as another session's while a watch still names it.
    sessions_.erase(it);
    if (restart)
      for (const DaemonSessionConfig& wanted : config_.sessions)
        if (wanted.name == name) start_session(wanted);
    return;
  }
}

void Daemon::reconfigure() {
  Result<DaemonConfig> loaded = load_daemon_config(start_.config_path, start_.base_override);
  if (!loaded) {
    log("reconfig: keeping the sessions as they are: " + loaded.error().message);
    return;
  }
  if (loaded->base != config_.base) log("reconfig: the base cannot change while the daemon runs; keeping " + config_.base);
  config_.sessions = loaded->sessions;
  for (auto& [session_name, session] : sessions_) {
    const std::string& name = session_name;  // a structured binding cannot be captured before C++20's clang 16
    auto wanted = std::find_if(config_.sessions.begin(), config_.sessions.end(),
                               [&](const DaemonSessionConfig& s) { return s.name == name; });
    const bool still_wanted = wanted != config_.sessions.end();
    // A session already ending (an earlier change) starts again, with the config as it is
    // then, if the config still has it; one whose command ends by itself does not.
    if (session.ending) {
      session.restart = still_wanted;
      continue;
    }
    if (still_wanted && wanted->run == session.config.run) continue;
    session.restart = still_wanted;
    log("reconfig: session '" + name + "' " + (session.restart ? "changed" : "removed") + ": ending it");
    ::kill(session.pid, SIGTERM);
    session.ending = true;
  }
  for (const DaemonSessionConfig& wanted : config_.sessions)
    if (!sessions_.contains(wanted.name)) start_session(wanted);
}

bool Daemon::ping_session(const Session& session) const {
  const std::string dir = session_dir(config_.base, session.config.name);
  // Write-only and non-blocking: the open fails at once when no recording reads the fifo.
  ScopedFd control(::open((dir + "/control").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  ScopedFd ack(::open((dir + "/ack").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!control.valid() || !ack.valid()) return false;
  char stale[256];
  while (::read(ack.get(), stale, sizeof stale) > 0) {  // an earlier client's unread acks
  }
  static constexpr char kPing[] = "ping\n";
  if (::write(control.get(), kPing, sizeof kPing - 1) != static_cast<ssize_t>(sizeof kPing - 1)) return false;
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + kAckWait;
  while (answer.find("ack\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{ack.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[64];
    const ssize_t n = ::read(ack.get(), buf, sizeof buf);
    if (n > 0) answer.append(buf, static_cast<size_t>(n));
  }
  return true;
}

std::string Daemon::ping(const std::string& name) const {
  char line[512];
  std::string out;
  if (!name.empty() && !sessions_.contains(name)) {
    std::snprintf(line, sizeof line, "%-4s %s (not found)\n", "FAIL", name.c_str());
    return line;
  }
  for (const auto& [session_name, session] : sessions_) {
    if (!name.empty() && session_name != name) continue;
    std::snprintf(line, sizeof line, "%-4s %s\n", ping_session(session) ? "OK" : "FAIL", session_name.c_str());
    out += line;
  }
  return out;
}

// Whether `pid` has `signal` pending (process-directed: /proc/PID/status's ShdPnd mask).
static bool signal_pending(pid_t pid, int signal) {
  Result<std::string> status = read_file("/proc/" + std::to_string(pid) + "/status");
  if (!status) return false;
  const size_t at = status->find("\nShdPnd:");
  if (at == std::string::npos) return false;
  const std::optional<uint64_t> mask = parse_u64_base(trim(std::string_view(*status).substr(at + 8, status->find('\n', at + 1) - at - 8)), 16);
  return mask && (*mask >> (signal - 1)) & 1;
}

std::string Daemon::signal(const std::string& name) const {
  std::string out;
  for (const auto& [session_name, session] : sessions_) {
    if (!name.empty() && session_name != name) continue;
    // A SIGUSR2 still pending would absorb this one (the kernel keeps one of each): each
    // request is a file of its own only once the last one was taken (perf daemon.sh signals
    // twice in a row and counts the files).
    const auto deadline = std::chrono::steady_clock::now() + kSignalTakenWait;
    while (signal_pending(session.pid, SIGUSR2) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (::kill(session.pid, SIGUSR2) == 0)
      out += "signal " + std::to_string(SIGUSR2) + " sent to session '" + session_name + " [" + std::to_string(session.pid) + "]'\n";
  }
  if (out.empty() && !name.empty()) out = "FAIL " + name + " (not found)\n";
  return out;
}

std::string Daemon::list(const std::string& sep, bool verbose) const {
  const std::string& base = config_.base;
  std::string out;
  const std::string pid = std::to_string(::getpid());
  if (!sep.empty()) {
    out += pid + sep + "daemon" + sep + base + sep + base + "/output" + sep + base + "/lock" + sep + up(started_) + "\n";
  } else {
    out += "[" + pid + ":daemon] base: " + base + "\n";
    if (verbose)
      out += "  output:  " + base + "/output\n  lock:    " + base + "/lock\n  up:      " + up(started_) + " minutes\n";
  }
  for (const auto& [name, s] : sessions_) {
    const std::string dir = session_dir(base, name);
    if (!sep.empty()) {
      out += std::to_string(s.pid) + sep + name + sep + s.config.run + sep + dir + sep + dir + "/output" + sep + dir + "/control" + sep +
             dir + "/ack" + sep + up(s.started) + "\n";
      continue;
    }
    out += "[" + std::to_string(s.pid) + ":" + name + "] vperf record " + s.config.run + "\n";
    if (verbose)
      out += "  base:    " + dir + "\n  output:  " + dir + "/output\n  control: " + dir + "/control\n  ack:     " + dir +
             "/ack\n  up:      " + up(s.started) + " minutes\n";
  }
  return out;
}

void Daemon::end_all_sessions() {
  stopping_ = true;
  for (auto& [name, session] : sessions_) ::kill(session.pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kSessionEndWait;
  while (!sessions_.empty()) {
    std::vector<pollfd> fds;
    for (auto& [name, session] : sessions_) fds.push_back({session.exit_fd.get(), POLLIN, 0});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      for (auto& [name, session] : sessions_) ::kill(session.pid, SIGKILL);
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(left.count(), 100))) < 0 && errno != EINTR) break;
    std::vector<pid_t> ended;
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents != 0)
        for (auto& [name, session] : sessions_)
          if (session.exit_fd.get() == fds[i].fd) ended.push_back(session.pid);
    for (pid_t pid : ended) session_ended(pid);
  }
}

void Daemon::answer(int client) {
  const std::string request = receive_line(client);
  const std::vector<std::string_view> words = split(request, ' ');
  const std::string_view verb = words.empty() ? std::string_view{} : words[0];
  const std::string argument = words.size() > 1 ? std::string(words[1]) : std::string();
  if (verb == "list") {
    // "list SEP-IN-HEX VERBOSE": the separator may be any text, blanks included.
    std::string sep;
    for (size_t i = 0; i + 1 < argument.size(); i += 2)
      if (std::optional<uint64_t> byte = parse_u64_base(std::string_view(argument).substr(i, 2), 16)) sep.push_back(static_cast<char>(*byte));
    send_all(client, list(sep, words.size() > 2 && words[2] == "verbose"));
  } else if (verb == "ping") {
    send_all(client, ping(argument));
  } else if (verb == "signal") {
    send_all(client, signal(argument));
  } else if (verb == "stop") {
    log("stopping: ending the sessions");
    end_all_sessions();
    send_all(client, "");
  } else {
    send_all(client, "FAIL unknown request\n");
  }
}

int Daemon::run() {
  Result<perf::StopSignals> signals = perf::StopSignals::install();
  if (!signals) {
    log("cannot install signal handlers: " + signals.error().describe());
    return 1;
  }
  SystemRunClock clock;
  RunLoop loop(clock);
  loop_ = &loop;
  log("daemon started (pid " + std::to_string(::getpid()) + ")");
  // The config file's directory, not the file: an editor replaces the file by renaming a new
  // one over it, which a watch on the old file would never see. Only a finished write or a
  // rename counts: a file just created is still empty.
  const std::filesystem::path config_path(start_.config_path);
  inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (inotify_.valid())
    ::inotify_add_watch(inotify_.get(), config_path.parent_path().c_str(), IN_CLOSE_WRITE | IN_MOVED_TO);
  for (const DaemonSessionConfig& wanted : config_.sessions) start_session(wanted);
  bool stop = false;
  loop.watch_fd(listener_.get(), [&](short) {
    ScopedFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) return Next::keep_going;
    answer(client.get());
    if (stopping_) {
      stop = true;
      return Next::stop;
    }
    return Next::keep_going;
  });
  if (inotify_.valid())
    loop.watch_fd(inotify_.get(), [&](short) {
      alignas(inotify_event) char buf[4096];
      bool ours = false;
      for (ssize_t n; (n = ::read(inotify_.get(), buf, sizeof buf)) > 0;) {
        for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
          const auto* event = reinterpret_cast<const inotify_event*>(buf + at);
          if (event->len > 0 && config_path.filename() == event->name) ours = true;
          at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
      }
      if (ours) reconfigure();
      return Next::keep_going;
    });
  loop.watch_signals(*signals, [&](const std::vector<perf::StopSignal>&) {
    log("stop signal: ending the sessions");
    end_all_sessions();
    stop = true;
    return Next::stop;
  });
  Result<bool> ran = loop.run();
  if (!ran) log("the wait failed: " + ran.error().describe());
  if (!stopping_) end_all_sessions();
  ::unlink(control_socket(config_.base).c_str());
  log("daemon exited");
  return stop || ran ? 0 : 1;
}

// Owns BASE: its lock taken (or who holds it), its control socket listening.
Result<std::pair<ScopedFd, ScopedFd>> own_base(const std::string& base) {
  struct stat st {};
  if (::stat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error{"the base directory " + base + " does not exist", ENOENT, "mkdir -p " + base};
  const std::string lock_path = base + "/lock";
  ScopedFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640));
  if (!lock.valid()) return Error::from_errno("cannot open " + lock_path);
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(lock.get(), pid, sizeof pid - 1, 0);
    const std::string owner = n > 0 ? std::string(trim(std::string_view(pid, static_cast<size_t>(n)))) : "?";
    return Error{std::string(kDaemonOwnedMessage) + " (pid " + owner + ") owns " + base, 0,
                 "stop it first: vperf daemon stop --base " + base};
  }
  VPERF_TRY(sockaddr_un address, socket_address(control_socket(base)));
  ScopedFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) return Error::from_errno("cannot make a unix socket");
  ::unlink(address.sun_path);  // a dead daemon's: the lock says none runs now
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
    return Error::from_errno("cannot bind " + control_socket(base));
  if (::listen(listener.get(), 16) != 0) return Error::from_errno("cannot listen on " + control_socket(base));
  return std::pair{std::move(lock), std::move(listener)};
}

void write_pid(int lock_fd) {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd, 0) == 0) (void)!::pwrite(lock_fd, pid.data(), pid.size(), 0);
}

}  // namespace

Result<void> start_daemon(const DaemonStart& start) {
  VPERF_TRY(DaemonConfig config, load_daemon_config(start.config_path, start.base_override));
  VPERF_TRY(auto owned, own_base(config.base));
  const std::string output_path = config.base + "/output";
  ScopedFd output(::open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!output.valid()) return Error::from_errno("cannot open " + output_path);
  // As perf's: the daemon holds no other directory busy (a session runs in its own). The
  // config's path is absolute, so nothing else here depends on the directory.
  if (::chdir(config.base.c_str()) != 0) return Error::from_errno("cannot enter " + config.base);
  std::fflush(stdout);
  std::fflush(stderr);
  if (!start.foreground) {
    const pid_t child = ::fork();
    if (child < 0) return Error::from_errno("cannot fork the daemon");
    // The child holds the lock and the socket now (the same open files): this process's
    // copies close with it, and the command returns with the daemon listening.
    if (child > 0) return {};
    ::setsid();
  }
  write_pid(owned.first.get());
  ScopedFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null.valid()) ::dup2(null.get(), 0);
  ::dup2(output.get(), 1);
  ::dup2(output.get(), 2);
  const int status = Daemon(start, std::move(config), std::move(owned.first), std::move(owned.second)).run();
  std::fflush(stdout);
  std::_Exit(status);
}

Result<std::string> query_daemon(const DaemonQuery& query) {
  VPERF_TRY(sockaddr_un address, socket_address(control_socket(query.base)));
  ScopedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error::from_errno("cannot make a unix socket");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
    return Error{"no vperf daemon runs for " + query.base, errno, "start one: vperf daemon start --config FILE"};
  std::string request;
  switch (query.command) {
    case DaemonQuery::Command::list: {
      request = "list ";
      for (unsigned char c : query.separator) {
        char digits[3];
        std::snprintf(digits, sizeof digits, "%02x", c);
        request += digits;
      }
      if (query.separator.empty()) request += "-";
      request += query.verbose ? " verbose" : " short";
      break;
    }
    case DaemonQuery::Command::ping: request = "ping " + query.session; break;
    case DaemonQuery::Command::signal: request = "signal " + query.session; break;
    case DaemonQuery::Command::stop: request = "stop"; break;
  }
  request += "\n";
  send_all(fd.get(), request);
  std::string answer;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  return answer;
}

}  // namespace vperf::session
