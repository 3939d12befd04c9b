#include "tracing/ftrace_persisted.h"

#include <algorithm>
#include <cerrno>

#include "core/files.h"
#include "core/strings.h"
#include "tracing/kernel_control_text.h"

namespace vperf::tracing {

namespace {

constexpr std::string_view kSavedFilesFormat = "vperf ftrace saved files 1\n";

std::optional<OopsDump> mode_named(std::string_view word) {
  if (word == "0") return OopsDump::off;
  if (word == "1") return OopsDump::all_cpus;
  if (word == "2" || word == "orig_cpu") return OopsDump::oops_cpu;
  return std::nullopt;
}

}  // namespace

std::string saved_files_text(const SavedFiles& files) {
  std::string text(kSavedFilesFormat);
  for (const auto& [name, content] : files) {
    text += name + " " + std::to_string(content.size()) + "\n";
    text += content;
    text += "\n";
  }
  return text;
}

Result<SavedFiles> parse_saved_files(std::string_view text) {
  auto damaged = [](const std::string& why) {
    return Error{"the saved top-level ftrace state is damaged: " + why, 0,
                 "compare the top level's files with a fresh boot's, then remove /run/vperf/ftrace-top-level"};
  };
  if (!text.starts_with(kSavedFilesFormat)) return damaged("it does not start with its format line");
  text.remove_prefix(kSavedFilesFormat.size());
  SavedFiles files;
  while (!text.empty()) {
    const size_t end_of_header = text.find('\n');
    if (end_of_header == std::string_view::npos) return damaged("a header without its newline");
    const std::string_view header = text.substr(0, end_of_header);
    const size_t space = header.rfind(' ');
    if (space == std::string_view::npos || space == 0) return damaged("a header without a name and a length");
    const std::string_view name = header.substr(0, space);
    const std::string_view digits = header.substr(space + 1);
    // Written as std::to_string writes it: a number with no sign and no leading zero.
    if (digits.size() > 1 && digits[0] == '0') return damaged("a length with a leading zero");
    const std::optional<uint64_t> length = parse_u64_base(digits, 10);
    // Names are tracefs paths below the buffer ("events/sched/enable"): never absolute, never up.
    if (name.starts_with('/') || name.find("..") != std::string_view::npos) return damaged("a name outside tracefs");
    if (!length) return damaged("a length that is not a number");
    text.remove_prefix(end_of_header + 1);
    if (*length >= text.size() || text[*length] != '\n') return damaged("a content cut short");
    files.emplace_back(std::string(name), std::string(text.substr(0, *length)));
    text.remove_prefix(*length + 1);
  }
  return files;
}

DumpOnOops parse_dump_on_oops(std::string_view text) {
  DumpOnOops setting;
  // The kernel keeps what was written up to its first newline (proc_dostring), and reads back
  // that with a newline added.
  text = text.substr(0, text.find('\n'));
  bool first = true;
  for (std::string_view field : split(text, ',')) {
    if (first) {
      first = false;
      if (std::optional<OopsDump> mode = mode_named(field)) {
        setting.top = *mode;
        continue;
      }
    }
    const size_t equals = field.find('=');
    const std::string_view name = field.substr(0, equals);
    if (name.empty()) continue;  // the kernel finds no instance of that name either
    // The kernel dumps an instance on the oopsing CPU for "=2"/"=orig_cpu", on all CPUs otherwise.
    const std::string_view mode = equals == std::string_view::npos ? "" : field.substr(equals + 1);
    setting.instances.emplace_back(std::string(name), mode == "2" || mode == "orig_cpu" ? OopsDump::oops_cpu : OopsDump::all_cpus);
  }
  return setting;
}

std::string dump_on_oops_text(const DumpOnOops& setting) {
  std::string text = std::to_string(static_cast<int>(setting.top));
  for (const auto& [name, mode] : setting.instances) text += "," + name + (mode == OopsDump::oops_cpu ? "=2" : "");
  return text;
}

DumpOnOops with_oops_dump(DumpOnOops setting, std::string_view instance, OopsDump mode) {
  if (instance.empty()) {
    setting.top = mode;
    return setting;
  }
  std::erase_if(setting.instances, [&](const auto& entry) { return entry.first == instance; });
  if (mode != OopsDump::off) setting.instances.emplace_back(std::string(instance), mode);
  return setting;
}

bool dump_on_oops_takes_instances(std::string_view kernel_release) {
  const std::vector<std::string_view> parts = split(kernel_release, '.');
  if (parts.size() < 2) return false;
  const std::optional<uint64_t> major = parse_u64(parts[0]);
  std::string_view minor_text = parts[1];
  minor_text = minor_text.substr(0, minor_text.find_first_not_of("0123456789"));
  const std::optional<uint64_t> minor = parse_u64(minor_text);
  if (!major || !minor) return false;
  return *major > 6 || (*major == 6 && *minor >= 10);
}

Result<DumpOnOops> read_dump_on_oops(const std::filesystem::path& sysctl) {
  VPERF_TRY(std::string text, read_file(sysctl));
  return parse_dump_on_oops(text);
}

Result<void> write_dump_on_oops(const DumpOnOops& setting, const std::filesystem::path& sysctl) {
  const std::string text = dump_on_oops_text(setting);
  VPERF_TRY(check_dump_on_oops_text(text));
  Result<void> written = write_kernel_file(sysctl, text);
  if (written) return {};
  const int err = written.error().errno_value;
  std::string hint;
  if (err == EACCES) hint = "run as root";
  if (err == EPERM)
    hint = "this kernel refuses the sysctl even to root (lockdown, or a hypervisor's restriction): leave out --dump-on-oops, "
           "or boot with ftrace_dump_on_oops on the kernel command line";
  return Error{"cannot write '" + text + "' to " + sysctl.string(), err, hint};
}

}  // namespace vperf::tracing
