#pragma once
// vperf kvm stat record|report|live: VM-exit analysis from the kvm tracepoints, as perf kvm stat
// (see kvm/kvm_exit_analysis.h for the analysis, docs/kvm-stat.md for the guide).
//
//   record [-o perf.data.guest] [-p PID | --domain NAME] [-q] [--] [COMMAND]
//          system-wide without a target; with a target and a COMMAND, the target while
//          COMMAND runs (perf's `record -p PID -- sleep 10`)
//   report [-i perf.data.guest] [--event vmexit|ioport|mmio|msr|hypercall] [--vcpu N]
//          [-k sample|time|max_t|min_t|mean] [-p PID | --domain NAME] [--json]
//   live   [-d SECONDS] [-p PID | --domain NAME] [--event ...] [--vcpu N] [-k ...]
//
// --domain NAME [--connect URI] is -p with the pid of that libvirt domain's VMM (QEMU) on this
// host now (guest/domain_guest_mount.h); giving both is a usage error.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/kvm_options.h"

namespace vperf::cli {

struct KvmStatRecordOptions {
  std::string output = "perf.data.guest";  // perf kvm stat record's default; "-" for a pipe
  std::string pids;                        // -p; neither -p nor COMMAND: all CPUs, as perf
  std::string domain;                      // --domain: -p of its VMM
  std::string uri = "qemu:///system";      // --connect
  bool allow_unsafe_uri = false;           // --allow-unsafe-uri
  std::vector<std::string> command;
  bool quiet = false;
  std::vector<std::string> cmdline;  // the whole command line, for perf.data's header
};
int run_kvm_stat_record(const KvmStatRecordOptions& options, std::ostream& err);

struct KvmStatReportOptions {
  std::string input = "perf.data.guest";  // "-" for a pipe
  std::string event = "vmexit";
  std::optional<uint32_t> vcpu;
  std::string sort_key = "sample";
  std::string pids;  // -p: only these VMs (VMM processes)
  std::string domain;                  // --domain: only its VMM (by its pid now)
  std::string uri = "qemu:///system";  // --connect
  bool allow_unsafe_uri = false;       // --allow-unsafe-uri
  bool json = false;
};
int run_kvm_stat_report(const KvmStatReportOptions& options, std::ostream& out, std::ostream& err);

struct KvmStatLiveOptions {
  double interval_seconds = 1;  // -d, perf's default display interval
  std::string pids;
  std::string domain;                  // --domain: -p of its VMM
  std::string uri = "qemu:///system";  // --connect
  bool allow_unsafe_uri = false;       // --allow-unsafe-uri
  std::string event = "vmexit";
  std::optional<uint32_t> vcpu;
  std::string sort_key = "sample";
};
// Records in this process (kvm stat record's recording, perf.data in pipe mode read by a
// thread) and prints a table every -d seconds, until SIGINT/SIGTERM/SIGHUP; returns 0.
int run_kvm_stat_live(const KvmStatLiveOptions& options, std::ostream& out, std::ostream& err);

// Adds "stat" with its record/report/live subcommands under `vperf kvm`, whose -i/-o (`kvm`'s
// file) names record's output and report's input unless their own options do.
void add_kvm_stat_subcommand(CLI::App& kvm, Invocation& inv, std::shared_ptr<const KvmOptions> kvm_options);

}  // namespace vperf::cli
