#pragma once
// A trace.dat recorded from a buffer's per-CPU trace_pipe_raw (vperf ftrace record): each CPU's
// pages moved into the TraceDatWriter (spliced where the kernel can, with no copy through
// vperf), and the file itself, private and unnamed until its head is written.
#include <cstddef>
#include <filesystem>

#include "core/error.h"
#include "core/scoped_fd.h"
#include "tracing/ftrace_buffer.h"
#include "tracing/trace_dat.h"

namespace vperf::tracing {

// One CPU's trace_pipe_raw drained into the trace.dat being written: whole pages spliced while
// the run goes (no copy through vperf, where the file is uncompressed), and at the end read()
// for the last, partly filled page, which splice leaves in the kernel.
class RawCpuRecorder {
 public:
  static Result<RawCpuRecorder> open(const FtraceBuffer& buffer, int cpu, size_t index, size_t page_size);
  // Moves the whole pages there are now into `file`; `final` also takes the partly filled last page.
  Result<void> drain(TraceDatWriter& file, bool final);

  int cpu() const { return cpu_; }
  size_t index() const { return index_; }
  int raw_fd() const { return raw_.get(); }

 private:
  RawCpuRecorder() = default;
  int cpu_ = 0;
  size_t index_ = 0;
  size_t page_size_ = 4096;
  ScopedFd raw_, pipe_read_, pipe_write_;
};

// A write that failed because the file system is full (or the quota, or the file size limit).
bool out_of_room(const Error& e);

// The trace.dat being made: 0600 whatever the umask and whatever mode a file it replaces had,
// as it holds /proc/kallsyms and real kernel addresses (perf.data is 0600 too); read-write, as
// the recording reads its own pages back when it moves them. It stays unnamed (O_TMPFILE, in
// the output's directory) until its head is written, so that a kill before that leaves the
// file it replaces, or none, never one without its head; a file system without O_TMPFILE gets
// the name at once.
struct NewTraceDat {
  ScopedFd fd;
  bool named = false;
};
Result<NewTraceDat> create_trace_dat(const std::filesystem::path& path);
// Gives the file its name, in place of what had it.
Result<void> name_trace_dat(NewTraceDat& file, const std::filesystem::path& path);

}  // namespace vperf::tracing
