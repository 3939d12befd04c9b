#include "cli/perf_options.h"

#include <algorithm>
#include <array>
#include <span>

namespace vperf::cli {

namespace {

// From `perf COMMAND -h` of perf 6.1 (linux-perf 6.1 in Debian 12).
constexpr std::string_view kStatShort = "aABCDdeGgIijMnoprStTvx";
constexpr auto kStatLong = std::to_array<std::string_view>(
    {"all-cpus", "no-aggr", "big-num", "cpu", "delay", "detailed", "event", "cgroup", "group", "interval-print",
     "no-inherit", "json-output", "metrics", "null", "output", "pid", "repeat", "sync", "tid", "transaction", "verbose",
     "field-separator", "all-kernel", "all-user", "append", "control", "cputype", "filter", "for-each-cgroup",
     "hybrid-merge", "interval-clear", "interval-count", "iostat", "log-fd", "metric-no-group", "metric-no-merge",
     "metric-only", "no-csv-summary", "no-merge", "per-core", "per-die", "per-node", "per-socket", "per-thread",
     "percore-show-thread", "post", "pre", "quiet", "scale", "smi-cost", "summary", "table", "td-level", "timeout",
     "topdown"});
constexpr std::string_view kRecordShort = "abBcCdDeFgGIijkmNnoPpqRrSstTuvWz";
constexpr auto kRecordLong = std::to_array<std::string_view>(
    {"all-cpus", "branch-any", "no-buildid", "count", "cpu", "data", "delay", "event", "freq", "cgroup", "intr-regs",
     "no-inherit", "branch-filter", "clockid", "mmap-pages", "no-buildid-cache", "no-samples", "output", "period", "pid",
     "quiet", "raw-samples", "realtime", "snapshot", "stat", "tid", "timestamp", "uid", "verbose", "weight",
     "compression-level", "affinity", "aio", "all-cgroups", "all-kernel", "all-user", "aux-sample", "buildid-all",
     "buildid-mmap", "call-graph", "clang-opt", "clang-path", "code-page-size", "control", "data-page-size", "debuginfod",
     "dry-run", "exclude-perf", "filter", "group", "kcore", "kernel-callchains", "max-size", "mmap-flush", "namespaces",
     "no-bpf-event", "no-buffering", "num-thread-synthesize", "off-cpu", "overwrite", "per-thread", "phys-data",
     "proc-map-timeout", "running-time", "sample-cpu", "sample-identifier", "strict-freq", "switch-events",
     "switch-max-files", "switch-output", "switch-output-event", "synth", "tail-synthesize", "threads",
     "timestamp-boundary", "timestamp-filename", "transaction", "user-callchains", "user-regs", "vmlinux"});
constexpr std::string_view kReportShort = "bcCdDFfgGiIkMmnpqsStTUvwx";
constexpr auto kReportLong = std::to_array<std::string_view>(
    {"branch-stack", "comms", "cpu", "dsos", "dump-raw-trace", "fields", "force", "call-graph", "inverted", "input",
     "show-info", "vmlinux", "disassembler-style", "modules", "show-nr-samples", "parent", "quiet", "sort", "symbols",
     "field-separator", "threads", "hide-unresolved", "verbose", "column-widths", "exclude-other", "asm-raw",
     "branch-history", "children", "demangle", "demangle-kernel", "disable-order", "full-source-path", "group",
     "group-sort-idx", "header", "header-only", "hierarchy", "ignore-callees", "ignore-vmlinux", "inline", "itrace",
     "kallsyms", "max-stack", "mem-mode", "mmaps", "ns", "objdump", "percent-limit", "percent-type", "percentage", "pid",
     "prefix", "prefix-strip", "pretty", "raw-trace", "samples", "show-cpu-utilization", "show-on-off-events",
     "show-ref-call-graph", "show-total-period", "skip-empty", "socket-filter", "source", "stats", "stdio",
     "stdio-color", "stitch-lbr", "switch-off", "switch-on", "symbol-filter", "symfs", "tasks", "tid", "time",
     "time-quantum", "total-cycles", "tui"});
constexpr std::string_view kScriptShort = "acCdDFfgGiIkLlsSv";
constexpr auto kScriptLong = std::to_array<std::string_view>(
    {"all-cpus", "comms", "cpu", "debug-mode", "dump-raw-trace", "fields", "force", "gen-script", "hide-call-graph",
     "input", "show-info", "vmlinux", "list", "script", "symbols", "verbose", "addr-range", "call-ret-trace",
     "call-trace", "deltatime", "demangle", "demangle-kernel", "dlarg", "dlfilter", "dsos", "dump-unsorted-raw-trace",
     "full-source-path", "graph-function", "guest-code", "guestkallsyms", "guestmodules", "guestmount", "guestvmlinux",
     "header", "header-only", "inline", "insn-trace", "itrace", "kallsyms", "list-dlfilters", "max-blocks", "max-stack",
     "ns", "per-event-dump", "pid", "reltime", "show-bpf-events", "show-cgroup-events", "show-kernel-path",
     "show-lost-events", "show-mmap-events", "show-namespace-events", "show-on-off-events", "show-round-events",
     "show-switch-events", "show-task-events", "show-text-poke-events", "stitch-lbr", "stop-bt", "switch-off",
     "switch-on", "symfs", "tid", "time", "xed"});
constexpr std::string_view kAnnotateShort = "CdDfiklMmnPqsv";
constexpr auto kAnnotateLong = std::to_array<std::string_view>(
    {"cpu", "dsos", "dump-raw-trace", "force", "input", "vmlinux", "print-line", "disassembler-style", "modules",
     "show-nr-samples", "full-paths", "quiet", "symbol", "verbose", "asm-raw", "demangle", "demangle-kernel", "group",
     "ignore-vmlinux", "itrace", "objdump", "percent-limit", "percent-type", "prefix", "prefix-strip",
     "show-total-period", "skip-missing", "source", "stdio", "stdio-color", "stdio2", "symfs", "tui"});
constexpr std::string_view kProbeShort = "aDdfFkLlmnqsVvx";
constexpr auto kProbeLong = std::to_array<std::string_view>(
    {"add", "definition", "del", "force", "funcs", "vmlinux", "line", "list", "module", "dry-run", "quiet", "source",
     "vars", "verbose", "exec", "bootconfig", "cache", "demangle", "demangle-kernel", "externs", "filter", "max-probes",
     "no-inlines", "range", "symfs", "target-ns"});

// `perf` 6.1's command list, and its help.
constexpr auto kPerfCommands = std::to_array<std::string_view>(
    {"annotate", "archive", "bench", "buildid-cache", "buildid-list", "c2c", "config", "daemon", "data", "diff", "evlist",
     "ftrace", "inject", "iostat", "kallsyms", "kmem", "kvm", "kwork", "list", "lock", "mem", "record", "report", "sched",
     "script", "stat", "test", "timechart", "top", "version", "probe", "trace", "help"});

bool has_option(std::string_view shorts, std::span<const std::string_view> longs, std::string_view word) {
  if (word.starts_with("--")) {
    std::string_view name = word.substr(2, word.find('=') == std::string_view::npos ? std::string_view::npos : word.find('=') - 2);
    // perf's boolean options take a "no-" form.
    auto known = [&](std::string_view n) { return std::find(longs.begin(), longs.end(), n) != longs.end(); };
    return known(name) || (name.starts_with("no-") && known(name.substr(3)));
  }
  return word.size() >= 2 && word[0] == '-' && shorts.find(word[1]) != std::string_view::npos;
}

}  // namespace

bool is_perf_command(std::string_view word) {
  return std::find(kPerfCommands.begin(), kPerfCommands.end(), word) != kPerfCommands.end();
}

bool is_perf_option(std::string_view command, std::string_view word) {
  if (command == "stat") return has_option(kStatShort, kStatLong, word);
  if (command == "record") return has_option(kRecordShort, kRecordLong, word);
  if (command == "report") return has_option(kReportShort, kReportLong, word);
  if (command == "script") return has_option(kScriptShort, kScriptLong, word);
  if (command == "annotate") return has_option(kAnnotateShort, kAnnotateLong, word);
  if (command == "probe") return has_option(kProbeShort, kProbeLong, word);
  return false;
}

}  // namespace vperf::cli
