#pragma once
// What `vperf probe` does with the tracefs: turn PROBEDEFs on an executable into uprobe
// definitions (perf probe 6.1's lines: its event and group names, file offsets, arguments),
// add them, list them and delete them. Probes added here stay until deleted, as perf's do.
//
// Function probes (FUNC, FUNC+OFF, FUNC%return, 0xADDRESS) in an executable or library (-x):
// with DWARF (the file's or its separate debuginfo's) at every out-of-line and inlined instance,
// with variables, their fields, $params and $vars as arguments (symbols/probe_debuginfo.h);
// without it at the symbol, with the arguments the kernel's uprobe syntax takes as they are
// (registers, $retval, $comm, fetches such as +0(%di), immediates, with types). USDT markers
// by name; source lines and lazy patterns. Without -x, kernel functions (kprobes: FUNC[+OFF],
// FUNC%return, with register and memory arguments, @user for user memory); their variables,
// which need the kernel's debuginfo, are refused in one line.
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "tracing/dynamic_events.h"
#include "tracing/tracefs.h"

namespace vperf::probes {

struct ProbeRequest {
  std::filesystem::path executable;      // -x
  std::filesystem::path module;          // -m: a kernel module's .ko, whose DWARF places kprobes (MOD:FUNC+OFF)
  std::filesystem::path vmlinux;         // -k: the kernel image with DWARF, which places kprobes (FUNC+OFF)
  std::vector<std::string> definitions;  // each a PROBEDEF with its arguments
  bool force = false;                    // -f: add under a numbered name when the name is taken
  bool inlines = true;                   // --no-inlines: only out-of-line instances
  bool append = false;                   // the kernel appends probes to an event: every address of a definition shares its name
  std::string group;                     // every probe in this group (inline probes' private one), else perf's defaults
  std::vector<std::filesystem::path> debug_dirs = {"/usr/lib/debug"};  // separate debuginfo roots (--symfs DIR: DIR/usr/lib/debug)
  std::filesystem::path kallsyms = "/proc/kallsyms";  // the kernel's symbols, whose sizes bound a kprobe's FUNC+OFF
  size_t max_probes = 128;  // --max-probes: the most probe points one definition may give (perf's default)
};

struct PlannedProbe {
  bool kernel = false;       // a kprobe (event.group and event.event name it; event.file is empty)
  tracing::UprobeEvent event;
  std::string definition;  // the uprobe_events (or kprobe_events) line
  std::string point;       // "spin_leaf_hash%return", what perf's "(on ...)" shows
  std::vector<std::string> shown_arguments;  // the arguments as perf shows them: "weight=r->weight", "label:string"
  std::string note;  // said on stderr when planned: a moved probe point
};

// The probes `request` asks for, named and placed, not yet added. `existing` are the
// definitions already in uprobe_events (a taken name is an Error unless request.force).
Result<std::vector<PlannedProbe>> plan_probes(const ProbeRequest& request, const std::vector<std::string>& existing);

// perf probe -V's lines for the point of `definition` in request.executable (its arguments are
// ignored): "Available variables at POINT", then for each instance "\t@<FUNCTION+OFFSET>" and a
// "\t\tTYPE\tNAME" line per variable whose location is known there (the unit's globals and
// statics too with `externs`; tags and validity ranges with `ranges`, perf's --range). An Error
// when the file has no DWARF for the function.
Result<std::vector<std::string>> probe_point_variables(const ProbeRequest& request, const std::string& definition, bool externs, bool ranges);

// perf probe -L's listing of a LINERANGE in request.executable's sources: a "<FUNC@FILE:N>" or
// "<FILE:N>" header, then the source lines, those where a probe can go numbered.
Result<std::vector<std::string>> probe_source_listing(const ProbeRequest& request, const std::string& range);

// perf probe -F: the functions of request.executable that a probe can name, demangled, sorted
// by name, those `filter` (perf's strfilter syntax, core/name_filter.h) keeps; perf's default
// filter is "!_* & !*@plt". perf also lists data objects (variables), which no probe can take as
// a function, and repeats names two symbol tables hold: vperf lists each name of a function or
// PLT entry once, aliases included.
Result<std::vector<std::string>> probe_functions(const ProbeRequest& request, const std::string& filter);

// The USDT markers of request.executable as `perf list sdt` shows them once perf's build-id
// cache holds the file ("  sdt_PROVIDER:NAME" padded to 50, then "[SDT event]"), sorted; with
// `details`, each marker's file offset, semaphore and argument specs follow.
Result<std::vector<std::string>> list_sdt_markers(const ProbeRequest& request, bool details);

// Adds each planned probe; on a failure removes the ones this call added, so nothing is left
// half done. With `record`, notes each probe's file as it is now (for -l's stale marks).
Result<void> add_probes(const tracing::Tracefs& tracefs, const std::vector<PlannedProbe>& probes, bool record = true);

// Removes every uprobe whose GROUP:EVENT matches `pattern` (globs; GROUP: may be left out for
// any group); returns their GROUP:EVENT names. An Error when none matches.
Result<std::vector<std::string>> delete_probes(const tracing::Tracefs& tracefs, const std::string& pattern);

// perf probe -l's lines for the uprobes in uprobe_events matching `pattern` (all when empty):
// "  GROUP:EVENT          (on POINT in FILE[ with ARG ...])", POINT named from DWARF
// (FUNC[+OFF|:RLN][%return]@SRC) or the symbol table (FUNC[+OFF][%return]). With
// `hits`, each line ends with the probe's hits so far (uprobe_profile). A probe whose file is
// gone, or was replaced since vperf probe added it (another inode at the path: the probe stays
// on the old one, so new processes never hit it), ends with "[stale: ...]".
Result<std::vector<std::string>> list_probes(const tracing::Tracefs& tracefs, const std::string& pattern, bool hits = false,
                                             const std::vector<std::filesystem::path>& debug_dirs = {"/usr/lib/debug"});

}  // namespace vperf::probes
