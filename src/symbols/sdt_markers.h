#pragma once
// USDT markers (SystemTap's statically defined tracing) of an ELF file: the NT_STAPSDT notes
// that <sys/sdt.h>'s STAP_PROBE macros leave in .note.stapsdt (Debian's python3.11 has 9, its
// libstdc++ 3: throw, rethrow, catch). vperf reads them from the file itself, as `readelf -n`
// shows them; perf 6.1 lists and probes them only after `perf buildid-cache --add FILE`.
//
// A note (owner "stapsdt", type 3) describes one marker. For a 64-bit file its descriptor is
//   u64 pc, u64 base, u64 semaphore, then "provider\0name\0arguments\0"
// (32-bit files: u32 each). `base` is the address .stapsdt.base had when the note was written:
// where the file's .stapsdt.base now sits elsewhere (prelink moved it), pc and semaphore move
// by the same difference. A semaphore, when not 0, is a u16 in .probes that the program reads
// to see whether a tracer listens (the kernel raises it for a uprobe given its file offset as
// the reference counter). Arguments are "SIZE@OPERAND" words in the assembler's syntax:
// "8@%rbx", "-4@112(%rsp)", "4@$5" (a negative size is a signed value).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::symbols {

struct SdtMarker {
  std::string provider;  // "python"
  std::string name;      // "function__entry"
  uint64_t address = 0;  // the probe point's ELF virtual address
  uint64_t base = 0;     // .stapsdt.base's address as the note records it
  uint64_t semaphore = 0;  // the semaphore's address; 0: the marker has none
  std::string arguments;   // "8@%r14 8@%rax -4@%ebp", as written; empty without arguments
  // File offsets of the probe point and of the semaphore (0 without one): what uprobe_events
  // takes ("PATH:OFFSET(REF_CTR_OFFSET)"). nullopt where no loaded segment holds the address.
  std::optional<uint64_t> file_offset;
  std::optional<uint64_t> semaphore_offset;
};

struct SdtArgument {
  int size = 0;         // bytes: 1, 2, 4 or 8
  bool is_signed = false;
  std::string operand;  // "%rbx", "112(%rsp)", "$5", "foo(%rip)"
};

// One note's descriptor (`wide`: a 64-bit file's). The offsets are left unset.
Result<SdtMarker> parse_sdt_descriptor(std::span<const uint8_t> descriptor, bool wide);
// A marker's argument words; an Error names the first word that is not SIZE@OPERAND.
Result<std::vector<SdtArgument>> parse_sdt_arguments(std::string_view arguments);

// The markers of `path`, in note order, pc and semaphore moved with .stapsdt.base and given
// their file offsets. An empty list for a file without markers; an Error for one that is not
// ELF or whose notes are damaged.
Result<std::vector<SdtMarker>> read_sdt_markers(const std::filesystem::path& path);

// perf's event name for a marker: "sdt_python:function__entry".
std::string sdt_event_name(const SdtMarker& marker);

}  // namespace vperf::symbols
