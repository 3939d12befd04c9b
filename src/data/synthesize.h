#pragma once
// Records the kernel never sends for what existed before recording started, built the way
// perf record synthesizes them, so a report can name the tasks and map their addresses:
//   COMM   for every thread of an existing process (-p, -a)
//   MMAP2  for every executable mapping in /proc/PID/maps, and every other one too when the
//          recording asks the kernel for data maps (attr.mmap_data, as --call-graph dwarf does)
//   MMAP   for the kernel ("[kernel.kallsyms]_text" at _text, pgoff = _text, as perf) and for
//          each module in /proc/modules ("[name]" or its path under /lib/modules)
//
// They are encoded by data::build_record (data/perf_record.h), the one record encoder, each
// followed by the sample_id trailer of `format` (the first event's layout; none without
// sample_id_all) with every field zero, as perf writes synthesized records (no time, no id: a
// reader attributes them to the first event).
#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "data/perf_record.h"

namespace vperf::data {

using RecordBytes = std::vector<uint8_t>;

RecordBytes comm_record(pid_t pid, pid_t tid, std::string_view comm, bool exec, const SampleFormat& format);

struct MappingLine {
  uint64_t start = 0, end = 0, pgoff = 0;
  uint32_t major = 0, minor = 0;
  uint64_t inode = 0;
  std::string perms;  // "r-xp"
  std::string path;   // may be empty or "[vdso]"
};
// One line of /proc/PID/maps; nullopt for a malformed line.
std::optional<MappingLine> parse_maps_line(std::string_view line);

RecordBytes mmap2_record(pid_t pid, pid_t tid, const MappingLine& mapping, uint16_t misc, const SampleFormat& format);
RecordBytes mmap_record(pid_t pid, pid_t tid, uint64_t start, uint64_t length, uint64_t pgoff, std::string_view filename,
                        uint16_t misc, const SampleFormat& format);

struct ProcRoot {
  std::filesystem::path proc = "/proc";
};

// Which mappings of /proc/PID/maps become MMAP2 records: the code maps, or all of them (data
// maps, misc MMAP_DATA: the file's read-only segments, [heap], [stack], //anon, [vvar]) as
// perf record synthesizes them when its events have attr.mmap_data. perf's DWARF unwinder
// reads a file's .eh_frame_hdr through the map that holds it, which is a read-only one, so a
// recording of a running process without them unwinds no further than the sampled ip.
enum class SynthesizedMaps { CodeOnly, All };

// The maps to synthesize for a recording whose tracking event has `attr`: all of them when it
// asks the kernel for data maps too, so that existing and new mappings are recorded alike.
SynthesizedMaps synthesized_maps_for(const perf_event_attr& attr);

// COMM for each thread and MMAP2 for the mappings `which` of process `pid`, in address order.
// Threads that end meanwhile are skipped; a process that ended is an Error (ESRCH).
Result<std::vector<RecordBytes>> synthesize_process(pid_t pid, SynthesizedMaps which, const SampleFormat& format,
                                                    const ProcRoot& root = {});

// The kernel and module maps from the texts of a kallsyms and a modules file (modules may be
// empty): what the two functions below write, without their I/O. A guest's (`guest_machine_pid`
// set) are guest-kernel maps of that machine; the host's have pid -1.
std::vector<RecordBytes> kernel_map_records(std::string_view kallsyms, std::string_view modules,
                                            std::optional<pid_t> guest_machine_pid, const SampleFormat& format);

// The kernel and module maps of the host, as perf record writes them first.
Result<std::vector<RecordBytes>> synthesize_kernel_maps(const SampleFormat& format, const ProcRoot& root = {});

// A guest's kernel and module maps from its copied kallsyms and modules, as perf kvm record
// writes them for each guest machine: "[guest.kernel.kallsyms]_text" at the guest's _text
// (pgoff = _text, for KASLR), each module "[name]", misc GUEST_KERNEL, pid = the machine's
// (0 for the default guest, else the VMM's pid).
Result<std::vector<RecordBytes>> synthesize_guest_kernel_maps(const std::filesystem::path& kallsyms,
                                                              const std::filesystem::path& modules, pid_t machine_pid,
                                                              const SampleFormat& format);

}  // namespace vperf::data
