#pragma once
// The BUILD_ID feature `perf record` 6.1 writes when it finishes a file: it reads its own
// recording back (process_buildids), marks the DSO that each sample's ip falls in (callchain
// frames are not marked), and lists the marked DSOs with their build-ids
// (perf_session__write_buildid_table), in the order perf first met them: the kernel, then
// files in the order they were first mapped. Every entry has pid -1 (perf's host machine) and
// misc KERNEL for the kernel and its modules, USER for the rest. The [vdso] is listed whenever
// a process mapped it, hit or not, as perf does. A DSO whose build-id cannot be read (a file
// deleted since, no note) is left out, as perf leaves it out. Guest samples mark nothing.
//
// Where the build-ids come from, read when the recording ends, as perf reads them: the running
// kernel's notes (/sys/kernel/notes), a module's /sys/module/NAME/notes/.note.gnu.build-id,
// this process's [vdso] image (the same kernel's), each file's NT_GNU_BUILD_ID note.
//
// Pipe mode has none: perf 6.1 writes no HEADER_BUILD_ID records to a pipe.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "symbols/build_id.h"

namespace vperf::session {

struct BuildIdSources {
  std::filesystem::path kernel_notes = "/sys/kernel/notes";
  std::filesystem::path sys_module = "/sys/module";
  std::function<Result<std::vector<char>>()> vdso_image;  // empty: this process's [vdso]
  // A file mapped by a process in another mount namespace (a container) is read through
  // PROC/PID/root, as perf's nsinfo reads it; empty: as named.
  std::filesystem::path proc = "/proc";
};

// The NT_GNU_BUILD_ID ("GNU" note of type 3) in a run of ELF notes, as /sys/kernel/notes and
// a .note.gnu.build-id section hold them; nullopt if there is none or the notes are malformed.
std::optional<symbols::BuildId> build_id_from_notes(std::span<const uint8_t> notes);
// The same from a file of notes (/sys/kernel/notes, a module's .note.gnu.build-id).
std::optional<symbols::BuildId> build_id_from_file(const std::filesystem::path& path);

struct RecordedBuildIds {
  std::vector<data::BuildIdEntry> entries;
  data::ReadStats stats;  // of the pass over the recording (perf's "Processed N events")
};

// Which DSOs, in which order:
//   Record      perf record's table: the DSOs samples hit (and the [vdso] when mapped), the
//               kernel first, then in mapping order;
//   RecordAll   perf record --buildid-all's: every DSO mapped, hit or not, in the same order;
//   Inject      perf inject -b's: the files and [vdso] samples hit, in the order of their first
//               sample. Not the kernel or its modules: the recording may come from another
//               boot or machine, whose ids inject cannot know (perf inject 6.1 writes the
//               kernel's entry with an empty build-id).
enum class BuildIdTable { Record, RecordAll, Inject };

// Reads `recording` (vperf's finished data section, before the features are written) and
// returns the build-ids perf would write for it.
Result<RecordedBuildIds> recorded_build_ids(data::PerfDataReader& recording, const BuildIdSources& sources = {},
                                            BuildIdTable table = BuildIdTable::Record);

}  // namespace vperf::session
