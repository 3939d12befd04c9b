#pragma once
// kvm stat live's reader: perf.data in pipe mode from a recording in the same process, read on
// a thread as it comes and fed to a KvmExitAnalysis. The recording writes to recording_fd();
// once the reader stops (end of file, or damage it cannot read past) done_fd() hangs up, so the
// recording's run loop can end, and the reader drains the pipe to its end so the recording
// never blocks on a full pipe.
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "core/scoped_fd.h"
#include "kvm_stat/kvm_exit_analysis.h"
#include "kvm_stat/kvm_recording.h"

namespace vperf::kvm {

class KvmLiveReader {
 public:
  // Starts the thread; the analysis and pass are updated under `lock`.
  KvmLiveReader(KvmExitAnalysis& analysis, std::mutex& lock, std::ostream& err);
  ~KvmLiveReader();
  KvmLiveReader(const KvmLiveReader&) = delete;
  KvmLiveReader& operator=(const KvmLiveReader&) = delete;

  int recording_fd() const { return data_write_.get(); }
  int done_fd() const { return done_read_.get(); }
  // The end of the recording: the reader sees end of file and is joined. Idempotent.
  void finish();

  KvmPass pass;       // under `lock`; pass.unreadable: damage it read up to
  std::string error;  // why the reader stopped early, if it did (read after finish())

 private:
  void read();

  KvmExitAnalysis& analysis_;
  std::mutex& lock_;
  std::ostream& err_;
  ScopedFd data_read_, data_write_, done_read_, done_write_;
  std::thread thread_;
};

}  // namespace vperf::kvm
