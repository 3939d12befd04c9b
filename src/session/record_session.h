#pragma once
// A recording, as `perf record` makes one (the user's view is in cli/cmd_record.h):
//   1. the events are opened on every place the target asks for, one ring per place, with
//      perf's fallbacks (cycles -> the request's fallback events when the kernel has no such
//      event; user space only when paranoia refuses the kernel);
//   2. the writer gets the attrs with their kernel ids, then the tracepoint formats (pipe
//      mode), the kernel and module maps (and guests' with --guestkallsyms/--guestmount), and
//      COMM/MMAP2 for the tasks that already exist;
//   3. a RunLoop drains the rings into the RecordSink whenever they wake up and every 100 ms,
//      each batch followed by FINISHED_ROUND, until the command exits, a stop signal comes or
//      every -p/-t task has ended;
//   4. the file is read back for the build-ids of the DSOs samples hit (record_build_ids.h;
//      not in pipe mode, as perf) and the feature sections are written;
//   with --switch-output, 4 ends each file of a series and 2 begins the next (switch_output.h).
// Failures that end the command are UserErrors, with perf's wording where perf has one.
#include <sys/types.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <map>
#include <vector>

#include "events/record_attr.h"
#include "events/resolved_event.h"
#include "guest/guest_symbols.h"
#include "perf/event_fd.h"
#include "session/record_control.h"
#include "session/run_loop.h"
#include "session/switch_output.h"

namespace vperf::session {

struct RecordRequest {
  std::vector<events::ResolvedEvent> events;           // sampled one by one, each with its own period
  std::vector<events::ResolvedEvent> fallback_events;  // when `events` are refused as missing; empty: no fallback
  // Frequency or period, call graph, inherit and machine scope; the per-event bits (tracking,
  // several events, system-wide, enable on exec) are the session's.
  events::RecordAttrOptions attr;
  std::vector<int> cpus;       // non-empty: system-wide on these CPUs
  std::vector<pid_t> threads;  // -p/-t: the threads to sample
  std::vector<pid_t> existing; // -p/-t: processes whose COMM and MMAP2 are synthesized (-a: every process)
  std::string filter;          // for the last event, which must be a tracepoint
  // Filters for tracepoints named by their name, wherever they sit among the events (kvm stat's
  // KVM_RUN filter on syscalls:sys_enter_ioctl).
  std::map<std::string, std::string> tracepoint_filters;
  std::string output = "perf.data";  // "-": perf.data in pipe mode on `pipe_fd`
  int pipe_fd = 1;                   // standard output, or a pipe read in this process (kvm stat live)
  unsigned mmap_pages = 128;
  int compression_level = 0;  // -z: zstd level 1-22 of COMPRESSED records; 0 writes them plain
  // The BUILD_ID table (file mode): the DSOs samples hit, or every mapped one (--buildid-all);
  // none with -B. Its files go into the build-id cache in `buildid_dir` (~/.debug when empty)
  // unless -N, as perf record adds them.
  bool buildid_all = false, no_buildid = false, no_buildid_cache = false;
  std::string buildid_dir;
  // --switch-output: a series of files (file mode only). As perf, the files get no BUILD_ID
  // table and nothing goes into the build-id cache (that reading back would hold up each switch).
  SwitchOutput switch_output;
  // --switch-output-event: events whose occurrence ends the file (a switch, as SIGUSR2 does;
  // occurrences read together end one), opened beside the sampled ones on the same tasks or
  // CPUs and never written to the file, as perf's side-band events. Implies switch_output's
  // signal trigger.
  std::vector<events::ResolvedEvent> switch_events;
  // Run and wait for; with threads, it only times the recording (perf kvm stat record -p PID -- sleep 10).
  // With -p/-t/-a/-C, the command only says how long to record (perf record -p PID -- sleep
  // 10): it is run, not sampled, and ends with the tasks.
  std::vector<std::string> command;
  guest::GuestSymbolSources guests;  // guests whose kernel maps are written (with attr.scope.guest)
  std::vector<std::string> cmdline;  // the CMDLINE feature
  bool quiet = false;
  // --control: commands (enable, disable, stop, ping, evlist) read while recording.
  std::optional<ControlSpec> control;
  // -D/--delay: sampling starts this many milliseconds after the command does; -1: only at a
  // control "enable". Both print perf's "Events disabled" / "Events enabled".
  std::optional<int64_t> delay_ms;
  // Called with the loop before sampling starts, to add what the caller waits for too (kvm
  // stat live's display interval and its reader's end).
  std::function<void(RunLoop&)> also_wait_for;
};

// Records; returns the command's exit status (128 + signal when one ended it), else 0.
// Messages (the closing lines, fallback notes) go to `err`.
int record(const RecordRequest& request, const perf::PerfEventOpener& opener, RunClock& clock, std::ostream& err);

}  // namespace vperf::session
