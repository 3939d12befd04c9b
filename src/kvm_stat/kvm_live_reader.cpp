#include "kvm_stat/kvm_live_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "data/perf_data_reader.h"

namespace vperf::kvm {

KvmLiveReader::KvmLiveReader(KvmExitAnalysis& analysis, std::mutex& lock, std::ostream& err)
    : analysis_(analysis), lock_(lock), err_(err) {
  int data[2], done[2];
  if (::pipe2(data, O_CLOEXEC) != 0) throw UserError(Error::from_errno("pipe").describe(), "raise ulimit -n");
  data_read_ = ScopedFd(data[0]);
  data_write_ = ScopedFd(data[1]);
  if (::pipe2(done, O_CLOEXEC) != 0) throw UserError(Error::from_errno("pipe").describe(), "raise ulimit -n");
  done_read_ = ScopedFd(done[0]);
  done_write_ = ScopedFd(done[1]);
  thread_ = std::thread([this] { read(); });
}

KvmLiveReader::~KvmLiveReader() { finish(); }

void KvmLiveReader::finish() {
  data_write_.reset();
  if (thread_.joinable()) thread_.join();
}

void KvmLiveReader::read() {
  std::optional<std::string> failure;
  try {
    Result<data::PerfDataReader> pipe = data::PerfDataReader::open_pipe(data_read_.get());
    if (!pipe) {
      failure = "the recording sent no perf.data: " + pipe.error().describe();
    } else if (Result<void> read = analyse_kvm_recording(pipe.value(), analysis_, pass, &lock_, err_); !read) {
      failure = read.error().describe();
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (failure) {
    std::lock_guard<std::mutex> guard(lock_);
    error = *failure;
  }
  done_write_.reset();
  char discard[4096];
  while (::read(data_read_.get(), discard, sizeof discard) > 0) {
  }
}

}  // namespace vperf::kvm
