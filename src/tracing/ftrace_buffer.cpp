#include "tracing/ftrace_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/files.h"
#include "core/process.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "tracing/kernel_control_text.h"
#include "tracing/trace_text.h"

namespace vperf::tracing {

namespace {

constexpr std::string_view kPrivatePrefix = "vperf-";

// The selected word of a "[local] global counter" file.
std::string bracketed(std::string_view text) {
  const size_t open = text.find('['), close = text.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::string(trim(text));
  return std::string(text.substr(open + 1, close - open - 1));
}

// What to write to FILE to give it back the state that reading it showed as `saved`.
std::vector<std::string> restoring_writes(std::string_view file, std::string_view saved) {
  const std::string_view name = file.substr(file.rfind('/') == std::string_view::npos ? 0 : file.rfind('/') + 1);
  const std::string_view text = trim(saved);
  if (name == "trace_clock") return {bracketed(saved)};
  // A refused filter write leaves the event unfiltered, with the refusal (the expression, a
  // caret line, "parse_error: ...") as the file's text: what gives that state back is "0".
  if (name == "filter")
    return {text == "none" || text.find("\nparse_error: ") != std::string_view::npos ? "0" : std::string(text)};
  if (name == "set_ftrace_filter" || name == "set_ftrace_notrace" || name == "set_graph_function" ||
      name == "set_graph_notrace" || name == "set_ftrace_pid" || name == "set_event_pid" || name == "set_event") {
    if (text.starts_with("#") || text == "no pid") return {""};
    std::string joined;
    for (std::string_view line : split(text, '\n'))
      if (!trim(line).empty()) joined += std::string(trim(line)) + " ";
    return {joined};
  }
  if (name == "enable") return {text.starts_with("1") ? "1" : "0"};  // "X" (mixed) comes back as each event's own
  return {std::string(text)};
}

}  // namespace

std::string private_instance_name(pid_t pid) { return std::string(kPrivatePrefix) + std::to_string(pid); }

std::vector<std::string> list_instances(const Tracefs& tracefs) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(tracefs.file("instances"), ec))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> remove_leftover_instances(const Tracefs& tracefs) {
  std::vector<std::string> removed;
  for (const std::string& name : list_instances(tracefs)) {
    if (!name.starts_with(kPrivatePrefix)) continue;
    std::optional<uint64_t> pid = parse_u64(std::string_view(name).substr(kPrivatePrefix.size()));
    if (!pid || static_cast<pid_t>(*pid) == ::getpid() || is_running_vperf(static_cast<pid_t>(*pid))) continue;
    if (::rmdir((tracefs.file("instances") / name).c_str()) == 0) removed.push_back(name);
  }
  return removed;
}

Result<FtraceBuffer> FtraceBuffer::create_instance(const Tracefs& tracefs, std::string name, bool remove_when_done) {
  VPERF_TRY(check_instance_name(name));
  const std::filesystem::path instances = tracefs.file("instances");
  struct stat st{};
  if (::stat(instances.c_str(), &st) != 0)
    return Error{"this kernel's tracefs has no instances (" + instances.string() + ")", 0,
                 "ftrace instances need Linux 3.10 or later"};
  const std::filesystem::path dir = instances / name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    const int err = errno;
    if (err == EEXIST)
      return Error{"the ftrace instance '" + name + "' exists already (another vperf ftrace uses it)", 0,
                   "choose another --instance name, or remove it: vperf ftrace reset --instance " + name};
    return Error{"cannot create the ftrace instance " + dir.string(), err,
                 err == EACCES || err == EPERM ? "run as root (tracefs instances need CAP_SYS_ADMIN)" : ""};
  }
  return FtraceBuffer(tracefs, std::move(name), dir, remove_when_done);
}

Result<FtraceBuffer> FtraceBuffer::open_instance(const Tracefs& tracefs, std::string name) {
  VPERF_TRY(std::filesystem::path dir, instance_directory(tracefs, name));
  return FtraceBuffer(tracefs, std::move(name), dir, false);
}

Result<void> remove_instance(const Tracefs& tracefs, std::string_view name) {
  VPERF_TRY(std::filesystem::path dir, instance_directory(tracefs, name));
  if (::rmdir(dir.c_str()) != 0) return Error::from_errno("cannot remove the ftrace instance " + dir.string());
  return {};
}

FtraceBuffer FtraceBuffer::top_level(const Tracefs& tracefs) { return FtraceBuffer(tracefs, "", tracefs.root(), false); }

FtraceBuffer FtraceBuffer::top_level_restoring(const Tracefs& tracefs, SavedFiles saved) {
  FtraceBuffer top = top_level(tracefs);
  top.saved_ = std::move(saved);
  return top;
}

FtraceBuffer::FtraceBuffer(FtraceBuffer&& other) noexcept
    : tracefs_(other.tracefs_),
      name_(std::move(other.name_)),
      dir_(std::move(other.dir_)),
      remove_when_done_(other.remove_when_done_),
      released_(other.released_),
      kept_(other.kept_),
      saved_(std::move(other.saved_)) {
  other.released_ = true;
}

FtraceBuffer::~FtraceBuffer() {
  if (!released_) (void)release();
}

bool FtraceBuffer::has(std::string_view file) const {
  struct stat st{};
  return ::stat(this->file(file).c_str(), &st) == 0;
}

Result<std::string> FtraceBuffer::read(std::string_view file) const { return read_file(this->file(file)); }

void FtraceBuffer::save_before_write(std::string_view file) {
  // The trace and its markers are data, not settings: writing "trace" empties it, and nothing
  // gives its old content back.
  if (!is_top_level() || file == "trace" || file == "trace_marker") return;
  for (const auto& [name, text] : saved_)
    if (name == file) return;
  if (Result<std::string> text = read(file)) saved_.emplace_back(std::string(file), *text);
}

Result<void> FtraceBuffer::write(std::string_view file, std::string_view value, bool append) {
  VPERF_TRY(check_buffer_value(file, value));
  save_before_write(file);
  return commit(file, value, append);
}

// A write that gives a file back what it held, checked as every write is: the saved text may
// come from /run/vperf, written by an earlier vperf and read back.
Result<void> FtraceBuffer::restore(std::string_view file, std::string_view value, bool append) {
  VPERF_TRY(check_buffer_value(file, value));
  return commit(file, value, append);
}

Result<void> FtraceBuffer::commit(std::string_view file, std::string_view value, bool append) const {
  return tracefs_.write(this->file(file), value, append ? Tracefs::WriteMode::Append : Tracefs::WriteMode::Replace,
                        this->file("error_log"));
}

Result<void> FtraceBuffer::release() {
  if (released_) return {};
  released_ = true;
  if (kept_) return {};
  if (is_top_level()) {
    Result<void> first_failure;
    // Last written first: tracing_on went off before what it guarded is put back.
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      const auto& [file, text] = *it;
      if (file.ends_with("trigger")) {
        // Remove every trigger now there, then add back those saved.
        if (Result<std::string> now = read(file))
          for (std::string_view line : split(*now, '\n'))
            if (!trim(line).empty() && !line.starts_with("#")) {
              std::string_view trigger = trim(line);
              trigger = trigger.substr(0, trigger.find(" ["));  // "traceoff:count=3 [unlimited]"
              (void)restore(file, "!" + std::string(trigger), true);
            }
        for (std::string_view line : split(text, '\n'))
          if (!trim(line).empty() && !line.starts_with("#")) (void)restore(file, trim(line), true);
        continue;
      }
      for (const std::string& value : restoring_writes(file, text)) {
        Result<void> restored = restore(file, value, false);
        if (!restored && first_failure) first_failure = restored.error();
      }
    }
    saved_.clear();
    return first_failure;
  }
  // An instance someone else owns stays exactly as it is.
  if (!remove_when_done_) return {};
  // Tracing off first, so nothing more lands while it goes.
  (void)commit("tracing_on", "0", false);
  if (::rmdir(dir_.c_str()) != 0 && errno != ENOENT) {
    // Busy: a file of it is still open. The destructor tries again once its owner has closed it.
    released_ = false;
    return Error::from_errno("cannot remove the ftrace instance " + dir_.string());
  }
  return {};
}

}  // namespace vperf::tracing
