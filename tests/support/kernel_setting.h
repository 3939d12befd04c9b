#pragma once
// Kernel settings (/proc/sys/kernel/*) that a test changes for its own run and puts back.
// Tests in different processes that set the same sysctl (perf_event_paranoid: the record and
// unprivileged tests) would undo each other's value mid-run, so every holder of a
// KernelSetting also holds one machine-wide lock (flock on a file in /tmp) for its lifetime.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

namespace vperf::test {

// Held by every KernelSetting alive; counted within this process (a second flock of the same
// file from the same process, through another descriptor, would wait for the first forever).
class KernelSettingsLock {
 public:
  KernelSettingsLock() {
    if (holders()++ == 0) {
      fd() = ::open("/tmp/vperf-tests-kernel-settings.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd() >= 0) ::flock(fd(), LOCK_EX);  // blocks until another test process is done
    }
  }
  KernelSettingsLock(const KernelSettingsLock&) = delete;
  KernelSettingsLock& operator=(const KernelSettingsLock&) = delete;
  ~KernelSettingsLock() {
    if (--holders() == 0 && fd() >= 0) ::close(fd());  // releases the lock
  }

 private:
  static int& holders() {
    static int count = 0;
    return count;
  }
  static int& fd() {
    static int descriptor = -1;
    return descriptor;
  }
};

// /proc/sys/kernel/NAME set to a value while this lives, then restored. applied() is false
// when the file cannot be read or written (not root, or a read-only /proc/sys in a container).
class KernelSetting {
 public:
  KernelSetting(const std::string& name, const std::string& value) : path_("/proc/sys/kernel/" + name) {
    std::ifstream in(path_);
    std::string old;
    if (!std::getline(in, old) || !write(value)) return;
    old_ = old;
  }
  KernelSetting(const KernelSetting&) = delete;
  KernelSetting& operator=(const KernelSetting&) = delete;
  ~KernelSetting() {
    if (old_) write(*old_);
  }
  bool applied() const { return old_.has_value(); }

 private:
  bool write(const std::string& value) const {
    std::ofstream out(path_);
    out << value << '\n';
    out.flush();
    return static_cast<bool>(out);
  }
  KernelSettingsLock lock_;  // taken before the value is read, released after it is restored
  std::string path_;
  std::optional<std::string> old_;
};

}  // namespace vperf::test
