#pragma once
// Dynamic tracepoints: uprobes (and kprobes) as the kernel's uprobe_events / kprobe_events take
// them. A definition is one line,
//   p:GROUP/EVENT PATH:0xOFFSET[(0xREF_CTR_OFFSET)] [ARG ...]      (r: for a return probe)
// written (appended) to <tracefs>/uprobe_events; "-:GROUP/EVENT" removes it. Once added, the
// event is an ordinary tracepoint, events/GROUP/EVENT, for stat, record and every reader.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tracing/tracefs.h"

namespace vperf::tracing {

struct UprobeEvent {
  std::string group;  // "probe_libc"
  std::string event;  // "malloc", "malloc__return"
  std::filesystem::path file;
  uint64_t file_offset = 0;
  std::optional<uint64_t> ref_ctr_offset;  // a USDT semaphore's file offset
  bool is_return = false;
  std::vector<std::string> arguments;  // "size=%di:u64", "$retval"
};

// A probe on a kernel function (kprobe): SYMBOL+OFFSET, the same for every boot (KASLR moves
// the address, not the symbol). perf 6.1 writes an entry probe as _text+OFFSET instead, from
// the same address; the kernel resolves both to it.
struct KprobeEvent {
  std::string group;   // "probe"
  std::string event;   // "do_sys_openat2", "do_sys_openat2__return"
  std::string symbol;  // "do_sys_openat2"
  uint64_t offset = 0;
  bool is_return = false;
  std::vector<std::string> arguments;  // "dfd=%di", "filename=+0(%si):string"
};

// The kprobe_events line of `event`: "p:GROUP/EVENT SYMBOL+OFFSET [ARG ...]" ("r:" for a
// return probe).
std::string kprobe_definition(const KprobeEvent& event);

// The uprobe_events line of `event`, as perf probe writes it.
std::string uprobe_definition(const UprobeEvent& event);

// perf probe's default group for probes on `file`: "probe_" and the file's name up to its first
// character that is not a letter, digit or '_' ("probe_libc" for libc.so.6, "probe_vperf" for
// vperf-workload).
std::string default_uprobe_group(const std::filesystem::path& file);

// The lines of <tracefs>/uprobe_events ("p:probe_libc/malloc /usr/lib/...:0x98930").
Result<std::vector<std::string>> uprobe_definitions(const Tracefs& tracefs);
// Appends a definition; the kernel's refusal is an Error with its reason from error_log when
// it gave one.
Result<void> add_uprobe(const Tracefs& tracefs, std::string_view definition);
// Removes GROUP/EVENT (absent: an Error with ENOENT).
Result<void> remove_uprobe(const Tracefs& tracefs, std::string_view group, std::string_view event);
// The same for <tracefs>/kprobe_events; a kernel without kprobes (no kprobe_events file) is an
// Error that says so and names CONFIG_KPROBE_EVENTS.
Result<std::vector<std::string>> kprobe_definitions(const Tracefs& tracefs);
Result<void> add_kprobe(const Tracefs& tracefs, std::string_view definition);
Result<void> remove_kprobe(const Tracefs& tracefs, std::string_view group, std::string_view event);
bool has_kprobes(const Tracefs& tracefs);

// A uprobe_events line back as an UprobeEvent ("r:GROUP/EVENT PATH:0xOFF(0xREF) ARG ..."). The
// kernel's own lines only: an Error for anything else.
Result<UprobeEvent> parse_uprobe_definition(std::string_view line);

// uprobe_profile's hit counts: "PATH EVENT" -> hits (the kernel keeps them per probe since it
// was added).
Result<std::vector<std::pair<std::string, uint64_t>>> uprobe_hits(const Tracefs& tracefs);

// Whether the kernel adds a second probe with a taken GROUP/EVENT to that event (its README says
// "Create/append/..." for uprobe_events, Linux 5.x and later) instead of refusing it.
bool kernel_appends_probes(const Tracefs& tracefs);
// GROUP/EVENT of a definition line, "probe_libc/malloc".
std::string uprobe_name(std::string_view definition);

}  // namespace vperf::tracing
