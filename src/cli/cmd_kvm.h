#pragma once
// vperf kvm [--host] [--guest] [--guestkallsyms FILE] [--guestmodules FILE] [--guestvmlinux FILE]
//           [--guestmount DIR] record|report|script|flamegraph|annotate|stat ...
//
// perf kvm's command: the profiling commands with kvm's defaults (cli/kvm_options.h: the data
// file perf.data.guest/.host/.kvm, events that sample the guest, the guests' symbols), and
// `stat`, the VM-exit analysis (cmd_kvm_stat.h). docs/guest.md walks through it.
#include <CLI/CLI.hpp>

#include "cli/command.h"

namespace vperf::cli {

void add_kvm_command(CLI::App& app, Invocation& inv);

}  // namespace vperf::cli
