#pragma once
// What `vperf probe` does with the tracefs: turn PROBEDEFs on an executable into uprobe
// definitions (perf probe 6.1's lines: its event and group names, file offsets, arguments),
// add them, list them and delete them. Probes added here stay until deleted, as perf's do.
//
// This much of issue 18 is here: function probes (FUNC, FUNC+OFF, FUNC%return, 0xADDRESS) in
// an executable or library (-x) with arguments the kernel's uprobe syntax takes as they are
// (registers, $retval, $comm, fetches such as +0(%di), immediates, @symbols, with types).
// Refused, each in one line that says so: variables and their fields (they need the DWARF
// location lists that come next), source lines and lazy patterns, and probes in the kernel.
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "tracing/dynamic_events.h"
#include "tracing/tracefs.h"

namespace vperf::session {

struct ProbeRequest {
  std::filesystem::path executable;      // -x
  std::vector<std::string> definitions;  // each a PROBEDEF with its arguments
  bool force = false;                    // -f: add under a numbered name when the name is taken
};

struct PlannedProbe {
  tracing::UprobeEvent event;
  std::string definition;  // the uprobe_events line
  std::string point;       // "spin_leaf_hash%return", what perf's "(on ...)" shows
};

// The probes `request` asks for, named and placed, not yet added. `existing` are the
// definitions already in uprobe_events (a taken name is an Error unless request.force).
Result<std::vector<PlannedProbe>> plan_probes(const ProbeRequest& request, const std::vector<std::string>& existing);

// Adds each planned probe; on a failure removes the ones this call added, so nothing is left
// half done.
Result<void> add_probes(const tracing::Tracefs& tracefs, const std::vector<PlannedProbe>& probes);

// Removes every uprobe whose GROUP:EVENT matches `pattern` (globs; GROUP: may be left out for
// any group); returns their GROUP:EVENT names. An Error when none matches.
Result<std::vector<std::string>> delete_probes(const tracing::Tracefs& tracefs, const std::string& pattern);

// perf probe -l's lines for the uprobes in uprobe_events matching `pattern` (all when empty):
// "  GROUP:EVENT (on FILE:0xOFFSET[ ARGS])".
Result<std::vector<std::string>> list_probes(const tracing::Tracefs& tracefs, const std::string& pattern);

}  // namespace vperf::session
