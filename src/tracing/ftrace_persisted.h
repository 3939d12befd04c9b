#pragma once
// What `vperf ftrace start` changes outside an instance of its own and keeps until `reset`
// puts it back, across commands:
//  - the top-level buffer's files, as they read before start wrote them (start --instance '':
//    the kernel's own buffer, the one 6.1 dumps on an oops), kept in a small file of their own;
//  - kernel.ftrace_dump_on_oops (start --dump-on-oops), which reset gives back its own part of.
// Both parsers read text from outside vperf (the saved file could be damaged, the sysctl is the
// kernel's); tests/fuzz/ftrace_persisted_fuzz.cpp fuzzes them.
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace vperf::tracing {

// Each file's content before vperf's first write to it, in the order they were written (restored
// in the reverse order: tracing_on went off before what it guarded changed).
using SavedFiles = std::vector<std::pair<std::string, std::string>>;

// The saved files as text: a first line naming the format, then per file "NAME LENGTH\n", the
// LENGTH bytes, "\n". Contents may hold any byte (a filter's newline, a trigger's list).
std::string saved_files_text(const SavedFiles& files);
// The text back; an Error for anything saved_files_text could not have written.
Result<SavedFiles> parse_saved_files(std::string_view text);

// kernel.ftrace_dump_on_oops: what the kernel prints to the console on an oops or panic.
// Up to Linux 6.9 a number (0 nothing, 1 the top-level buffer of every CPU, 2 of the CPU that
// oopsed only); from 6.10 also instances: "MODE,NAME[=2],..." (the first field is the top level's
// mode only when it is 0, 1, 2 or orig_cpu; otherwise it names an instance too).
enum class OopsDump { off = 0, all_cpus = 1, oops_cpu = 2 };

struct DumpOnOops {
  OopsDump top = OopsDump::off;
  std::vector<std::pair<std::string, OopsDump>> instances;  // 6.10+, in the sysctl's order
  bool operator==(const DumpOnOops&) const = default;
};

inline constexpr const char* kDumpOnOopsPath = "/proc/sys/kernel/ftrace_dump_on_oops";

// The sysctl's text as the kernel reads it at an oops (anything it would skip is left out).
DumpOnOops parse_dump_on_oops(std::string_view text);
// The text that sets it: "0", "1", "2", "0,trace1,trace2=2".
std::string dump_on_oops_text(const DumpOnOops& setting);
// `setting` with `instance` (empty: the top level) dumped as `mode`; off removes an instance.
DumpOnOops with_oops_dump(DumpOnOops setting, std::string_view instance, OopsDump mode);
// Whether a kernel of this release (uname -r) takes instance names in the sysctl (6.10+).
bool dump_on_oops_takes_instances(std::string_view kernel_release);

Result<DumpOnOops> read_dump_on_oops(const std::filesystem::path& sysctl = kDumpOnOopsPath);
// One write of the whole setting, checked first (kernel_control_text's check_dump_on_oops_text:
// one line, each instance name a name vperf takes). A refusal (EPERM: a kernel or hypervisor that locks the
// sysctl even for root) is an Error whose hint says what to do instead.
Result<void> write_dump_on_oops(const DumpOnOops& setting, const std::filesystem::path& sysctl = kDumpOnOopsPath);

}  // namespace vperf::tracing
