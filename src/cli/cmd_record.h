#pragma once
// vperf record [-e EVENTS] [-F HZ | -c PERIOD] [-g | --call-graph fp|dwarf[,SIZE]]
//              [-a | -C CPUS | -p PIDS | -t TIDS] [--filter EXPR] [-o FILE|-] [-m PAGES]
//              [-i|--no-inherit] [-q] [--] [COMMAND [ARGS...]]
//
// Samples into perf's own perf.data format (file, or pipe mode with -o -), which perf 6.1's
// report and script read. The flow, as perf record:
//   1. the events are opened (per task for a COMMAND/-p/-t, per CPU for -a/-C), one ring per
//      place; `cycles` falls back to `cpu-clock` where the kernel has no hardware cycles,
//      saying so (perf does the same);
//   2. perf.data gets the attrs with their kernel ids, then the kernel/module maps and, for
//      tasks that already exist (-a, -p, -t), their COMM and MMAP2 records;
//   3. the rings are drained whenever they wake up (and every 100 ms), each batch followed by
//      FINISHED_ROUND, after which the file is readable up to there even if vperf is killed;
//   4. on the command's exit, SIGINT/SIGTERM/SIGHUP (forwarded to the command) or the end of
//      -p/-t tasks, the rest is drained, the file is read back for the build-ids of the DSOs
//      samples hit (session/record_build_ids.h; not in pipe mode, as perf) and the feature
//      sections are written.
// An event the kernel refuses with EACCES at perf_event_paranoid >= 2 is sampled in user space
// only, as perf does (perf/permission_fallback.h). An existing FILE is renamed FILE.old first.
// The closing lines are perf's (with its "Processed N events and lost M chunks!" warning
// between them when the kernel dropped records):
//   [ vperf record: Woken up 1 times to write data ]
//   [ vperf record: Captured and wrote 0.015 MB perf.data (280 samples) ]
#include "cli/perf_record_options.h"
