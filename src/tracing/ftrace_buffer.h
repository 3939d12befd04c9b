#pragma once
// The ftrace buffer a vperf ftrace command works in: its own tracefs instance
// (instances/vperf-PID, made for the run and removed on every exit path), a named instance that
// outlives the command (`vperf ftrace start --instance NAME` ... `reset`), or, only for a tracer
// the kernel does not allow in instances, the top-level buffer, whose every file vperf writes
// is saved first and restored exactly when the buffer is released.
//
// Writes go through Tracefs::write, as tracing/dynamic_events's do. A write the kernel refuses
// is an Error naming the file and the value, with the entry that write added to the buffer's
// error_log (where the kernel explains a bad filter or trigger) as its message's tail. Every name and value is checked for its file first
// (tracing/kernel_control_text.h).
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tracing/ftrace_persisted.h"
#include "tracing/tracefs.h"

namespace vperf::tracing {

// "vperf-PID": the private instance of the vperf process PID.
std::string private_instance_name(pid_t pid);

// Removes the private instances of vperf processes that no longer run (killed with SIGKILL, or
// crashed); returns their names. Instances of running vperfs and every other instance stay.
std::vector<std::string> remove_leftover_instances(const Tracefs& tracefs);

// The instances under instances/, sorted.
std::vector<std::string> list_instances(const Tracefs& tracefs);

// Removes instances/NAME (its name checked, and resolved inside instances/, as open_instance does).
Result<void> remove_instance(const Tracefs& tracefs, std::string_view name);

class FtraceBuffer {
 public:
  // Makes instances/NAME (NAME as tracing/kernel_control_text's check_instance_name takes it:
  // never "..", ".", or a name with '/'). An existing instance of that name is an error (another vperf ftrace
  // uses it; the hint says how to remove it), as is a kernel without instances.
  static Result<FtraceBuffer> create_instance(const Tracefs& tracefs, std::string name, bool remove_when_done = true);
  // An existing instance, left in place when released (start/stop/show work on one); its name is
  // checked and must resolve to a directory inside instances/ (kernel_control_text's
  // instance_directory), so `--instance ..` never reaches the top level.
  static Result<FtraceBuffer> open_instance(const Tracefs& tracefs, std::string name);
  // The top-level buffer: files written through it are restored when it is released.
  static FtraceBuffer top_level(const Tracefs& tracefs);
  // The top-level buffer as an earlier command left it (vperf ftrace start --instance ''):
  // releasing it restores `saved`, what that command's writes replaced.
  static FtraceBuffer top_level_restoring(const Tracefs& tracefs, SavedFiles saved);

  FtraceBuffer(FtraceBuffer&& other) noexcept;
  FtraceBuffer& operator=(FtraceBuffer&&) = delete;
  FtraceBuffer(const FtraceBuffer&) = delete;
  FtraceBuffer& operator=(const FtraceBuffer&) = delete;
  // release(), its error dropped (an error path must not throw a second time).
  ~FtraceBuffer();

  const Tracefs& tracefs() const { return tracefs_; }
  bool is_top_level() const { return name_.empty(); }
  const std::string& name() const { return name_; }  // empty for the top level
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file(std::string_view name) const { return dir_ / std::string(name); }

  // Writes `value` to FILE (truncating, or appending: set_ftrace_filter lists, triggers), both
  // checked for that file first (kernel_control_text's check_buffer_value). A refusal's error
  // quotes the error_log entry this write added, if any.
  Result<void> write(std::string_view file, std::string_view value, bool append = false);
  Result<std::string> read(std::string_view file) const;
  bool has(std::string_view file) const;

  // Stops tracing and returns the buffer to what it was: an owned instance is removed, the top
  // level gets back every file vperf wrote. Idempotent.
  Result<void> release();
  // Leaves the buffer as it now is when released: an owned instance stays, the top level keeps
  // what was written (start hands either to a later command).
  void keep() { kept_ = true; }
  // Top level: what each written file held before, in write order (what start keeps for reset).
  const SavedFiles& saved_files() const { return saved_; }

 private:
  FtraceBuffer(Tracefs tracefs, std::string name, std::filesystem::path dir, bool remove_when_done)
      : tracefs_(std::move(tracefs)), name_(std::move(name)), dir_(std::move(dir)), remove_when_done_(remove_when_done) {}
  void save_before_write(std::string_view file);
  Result<void> restore(std::string_view file, std::string_view value, bool append);
  // Tracefs::write of FILE of this buffer, its refusal explained by this buffer's error_log.
  Result<void> commit(std::string_view file, std::string_view value, bool append) const;

  Tracefs tracefs_;
  std::string name_;
  std::filesystem::path dir_;
  bool remove_when_done_ = false;
  bool released_ = false;
  bool kept_ = false;
  // Top level only: each written file's content before vperf's first write, in write order.
  SavedFiles saved_;
};

}  // namespace vperf::tracing
