#include "cli/perf_options.h"

#include <algorithm>
#include <array>
#include <span>

namespace vperf::cli {

namespace {

// From `perf stat -h` and `perf record -h` of perf 6.1 (linux-perf 6.1 in Debian 12).
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

bool has_option(std::string_view shorts, std::span<const std::string_view> longs, std::string_view word) {
  if (word.starts_with("--")) {
    std::string_view name = word.substr(2, word.find('=') == std::string_view::npos ? std::string_view::npos : word.find('=') - 2);
    return std::find(longs.begin(), longs.end(), name) != longs.end();
  }
  return word.size() >= 2 && word[0] == '-' && shorts.find(word[1]) != std::string_view::npos;
}

}  // namespace

bool is_perf_option(std::string_view command, std::string_view word) {
  if (command == "stat") return has_option(kStatShort, kStatLong, word);
  if (command == "record") return has_option(kRecordShort, kRecordLong, word);
  return false;
}

}  // namespace vperf::cli
