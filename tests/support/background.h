#pragma once
// Programs a test runs beside vperf: one in the background whose output is kept (to signal it
// and read what it printed once it ends), and a child held before exec (its PID is known before
// it does anything, so vperf can attach to it first).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/run_program.h"

extern char** environ;

namespace vperf::test {

// A program running in the background, its stdout/stderr kept in memory files, so the test
// can signal it, watch its children, and collect what it printed once it ends.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {{"LC_ALL", "C"}}) {
    out_fd_ = ::memfd_create("vperf-test-out", MFD_CLOEXEC);
    err_fd_ = ::memfd_create("vperf-test-err", MFD_CLOEXEC);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      std::string entry(*e);
      if (!env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
    }
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<std::string> args_copy = argv;
    std::vector<char*> args, envp;
    for (auto& s : args_copy) args.push_back(s.data());
    args.push_back(nullptr);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);  // as run_program's
    posix_spawn_file_actions_adddup2(&actions, out_fd_, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd_, 2);
    int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
  }
  ~Background() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_fd_);
    ::close(err_fd_);
  }
  pid_t pid() const { return pid_; }

  // Waits for the end; exit_code as run_program (-1 when a signal ended it).
  ProgramResult wait() {
    ProgramResult r;
    int status = 0;
    if (pid_ > 0 && !reaped_) {
      ::waitpid(pid_, &status, 0);
      reaped_ = true;
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    r.out = slurp(out_fd_);
    r.err = slurp(err_fd_);
    return r;
  }

 private:
  static std::string slurp(int fd) {
    std::string text;
    char buf[65536];
    ssize_t n;
    off_t at = 0;
    while ((n = ::pread(fd, buf, sizeof buf, at)) > 0) {
      text.append(buf, static_cast<size_t>(n));
      at += n;
    }
    return text;
  }
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool reaped_ = false;
};

// A child that blocks until released, then execs `argv`: what it does after the release is
// all the workload's (no shell, no start-up system calls of its own), and its PID is known
// before it starts.
class HeldChild {
 public:
  explicit HeldChild(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& s : copy) args.push_back(s.data());
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[1]);
      char c;
      if (::read(fds[0], &c, 1) != 1) ::_exit(120);  // the test went away without releasing it
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[0]);
    release_fd_ = fds[1];
  }
  ~HeldChild() {
    if (release_fd_ >= 0) ::close(release_fd_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void release() {
    char c = 'x';
    EXPECT_EQ(::write(release_fd_, &c, 1), 1);
    ::close(release_fd_);
    release_fd_ = -1;
  }
  // The exit status, reaped at once so a -p/-t counter sees the task gone (not a zombie).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;
  bool reaped_ = false;
};

}  // namespace vperf::test
