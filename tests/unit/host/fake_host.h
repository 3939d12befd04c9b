#pragma once
// Fakes for the host probes' OS boundaries: a perf_event_open that answers like a kernel with or
// without a PMU, an MSR reader, /dev/kvm, and a temp directory for fake /proc, sysfs and tracefs.
#include <linux/perf_event.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "host/kvm_device.h"
#include "msr/msr_reader.h"
#include "perf/event_fd.h"

namespace vperf::host::test {

// Decides per attr: an errno to fail with, or 0 to succeed with `count`.
class FakePerfEventOpener : public perf::PerfEventOpener {
 public:
  std::function<int(const perf_event_attr&)> errno_for = [](const perf_event_attr&) { return ENOENT; };
  uint64_t count = 1000;
  // A PMU's counters: a group member beyond them is refused with EINVAL, as the kernel's
  // validate_group does at open time. 0: no limit.
  unsigned group_limit = 0;
  mutable std::vector<perf_event_attr> opened;
  mutable std::map<int, unsigned> group_members;  // leader fd -> members opened

  Result<perf::EventFd> open(const perf_event_attr& attr, const perf::OpenTarget& target) const override {
    int err = errno_for(attr);
    if (err != 0) return Error::from_errno("perf_event_open", err);
    if (target.group_fd >= 0 && group_limit != 0) {
      if (group_members[target.group_fd] + 2 > group_limit) return Error::from_errno("perf_event_open", EINVAL);
      ++group_members[target.group_fd];
    }
    opened.push_back(attr);
    // A pipe holding the counter value stands in for the perf fd: read() returns 8 bytes.
    int fds[2];
    if (::pipe(fds) != 0) return Error::from_errno("pipe");
    if (::write(fds[1], &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return Error::from_errno("write");
    ::close(fds[1]);
    return perf::EventFd(ScopedFd(fds[0]));
  }
};

// A kernel without a hardware PMU: software events work, hardware ones are ENOENT.
inline int no_pmu_kernel(const perf_event_attr& attr) { return attr.type == PERF_TYPE_SOFTWARE ? 0 : ENOENT; }
// A kernel with a PMU but no PEBS (precise_ip > 0 is EOPNOTSUPP) and no LBR.
inline int pmu_without_pebs(const perf_event_attr& attr) {
  if (attr.precise_ip > 0) return EOPNOTSUPP;
  if (attr.sample_type & PERF_SAMPLE_BRANCH_STACK) return EOPNOTSUPP;
  return 0;
}

class FakeMsrReader : public msr::MsrReader {
 public:
  std::map<uint32_t, uint64_t> values;
  int failure_errno = ENOENT;  // for registers not in `values`
  Result<uint64_t> read(int, uint32_t address) const override {
    auto it = values.find(address);
    if (it == values.end()) return Error::from_errno("read MSR", failure_errno);
    return it->second;
  }
};

class FakeKvm : public KvmDevice {
 public:
  int version = 0;  // 0: fail with `err`
  int err = ENOENT;
  Result<int> api_version() const override {
    if (version == 0) return Error::from_errno("open /dev/kvm", err);
    return version;
  }
  std::string path() const override { return "/dev/kvm"; }
};

// A temp directory removed at the end of the test.
class TempTree {
 public:
  explicit TempTree(const std::string& tag) {
    root_ = std::filesystem::temp_directory_path() / ("vperf-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  const std::filesystem::path& root() const { return root_; }
  void write(const std::string& relative, const std::string& content) const {
    auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }
  void mkdir(const std::string& relative) const { std::filesystem::create_directories(root_ / relative); }

 private:
  std::filesystem::path root_;
};

}  // namespace vperf::host::test
