#pragma once
// trace-cmd's trace.dat, version 6 (trace-cmd.dat.v6(5)): written by `vperf ftrace record`,
// read by `vperf ftrace report`, and by trace-cmd report and KernelShark.
//
//   the tracing data (tracing/tracing_data.h, version "6", with kallsyms and every ftrace format)
//   u32 CPU count
//   "options  \0", then options {u16 id, u32 size, data}, ended by id 0:
//       TRACECLOCK (4): the trace_clock file's text, so readers know the timestamps' unit
//       UNAME (5), VERSION (9): the machine and the writer
//       CPUSTAT (2): per CPU, per_cpu/cpuN/stats at the end of the run (entries, overrun,
//                    dropped events: what the ring buffer lost, kept in the file)
//   "flyrecord\0", then per CPU {u64 offset, u64 size}
//   each CPU's ring-buffer pages, as trace_pipe_raw gave them, at a page-aligned offset
//
// Events lost inside the data are in the pages themselves: the kernel flags a page that follows
// lost events (and stores how many); readers show "CPU:N [K EVENTS DROPPED]" there.
//
// Reading also takes version 7 (trace-cmd.dat.v7(5), what trace-cmd 3.1 writes by default):
// the same pieces in sections found through options, each possibly compressed (zstd or zlib,
// loaded only when a file needs them), and one flyrecord buffer per tracefs instance.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/byte_reader.h"
#include "core/error.h"
#include "core/file_mapping.h"
#include "tracing/tracepoint_decoder.h"

namespace vperf::tracing {

// --- writing ---
//
// A recording writes its trace.dat while it runs, so that a SIGKILL or a full disk at any
// moment leaves a file that trace-cmd and vperf read up to its last whole page (trace-cmd
// itself keeps each CPU's pages in a trace.dat.cpuN file and assembles them at the end: a kill
// leaves no trace.dat). The head (tracing data, options, the CPUs' offset/size table or BUFFER
// option) goes first, with every CPU's size 0; each CPU then owns a region further on, sparse
// until written (a hole costs no disk). Pages are appended to their CPU's region and only then
// is the CPU's size in the table rewritten (8 bytes, never across a page of the file, so a kill
// cannot tear it), so the table only ever names whole pages that are there. A region that fills
// moves, by copy, to the end of the file and doubles (its offset rewritten after the copy, the
// old one punched out). At the end the regions are moved down, each to its final place (through
// the end of the file when its place overlaps data still in use), and the file is truncated:
// every step keeps the table pointing at whole data. Text known only at the end (the saved
// comms, each CPU's stats) has room kept for it, rewritten as it changes.

struct TraceDatHeader {
  std::vector<uint8_t> tracing_data;  // build_tracing_data(..., {"6", kallsyms, every ftrace format})
  std::string trace_clock;            // the trace_clock file: "[local] global counter ..."
  std::string uname;                  // "Linux HOST RELEASE MACHINE"
  uint32_t page_size = 4096;
  // 6, or 7: the same pieces as trace-cmd.dat.v7(5)'s sections, found through one options
  // section, the CPUs' pages in one flyrecord buffer section.
  int version = 6;
  // Version 7 only: "zstd" compresses every section but the options and the saved comms, and
  // each CPU's pages in chunks of up to 1 MiB (trace-cmd's default); empty or "none" writes
  // them as they are.
  std::string compression;
  // Bytes kept for the saved comms (tracing data's last piece), which grow while the run goes.
  size_t cmdlines_room = 64 << 10;
  // Each CPU's room before its first move (a hole until written; a multiple of the page size).
  uint64_t first_region_room = 32ull << 20;
  std::vector<int> cpus;              // the CPUs recorded, in CPU order (version 6's table has no numbers)
  std::vector<std::string> cpu_stats; // per CPU, per_cpu/cpuN/stats as it is at the start
};

class TraceDatWriter {
 public:
  // Writes the head to `fd` (an empty regular file opened read-write, kept open by the caller).
  static Result<TraceDatWriter> begin(int fd, const TraceDatHeader& header);
  TraceDatWriter(TraceDatWriter&&) noexcept;
  TraceDatWriter& operator=(TraceDatWriter&&) noexcept;
  ~TraceDatWriter();

  // Whole pages for the CPU at `index` (of header.cpus): from a pipe that holds `bytes` of them
  // (spliced into the file, uncompressed), or from memory. Committed before returning, but for
  // a compressed file, whose pages wait for a chunk of 1 MiB or the next flush().
  Result<void> add_pages_from_pipe(size_t index, int pipe_fd, size_t bytes);
  Result<void> add_pages(size_t index, std::span<const uint8_t> pages);
  // Compressed: the pages waiting, as a chunk per CPU, committed.
  Result<void> flush();
  // The saved comms (cut at a whole line to the room kept) and a CPU's stats, rewritten.
  Result<void> update_cmdlines(std::string_view text);
  Result<void> update_stats(size_t index, std::string_view text);
  // The raw page bytes recorded for the CPU at `index`.
  uint64_t page_bytes(size_t index) const;
  // Flushes, moves the regions down and truncates. An error (ENOSPC: no room to move a region)
  // leaves the file as readable as before, only with holes and not compacted.
  Result<void> finish();

 private:
  struct State;
  explicit TraceDatWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// --- reading ---

struct TraceDatEvent {
  int buffer = 0;                     // index into TraceDat::buffer_names()
  int cpu = 0;
  uint64_t timestamp = 0;             // in the trace clock's unit (ns for local, global, mono...)
  std::span<const uint8_t> data;      // the event's raw record (common_type first)
  long long missed_before = 0;        // events the CPU lost just before this one; -1: some, count unknown
};

class TraceDat {
 public:
  static Result<TraceDat> open(const std::filesystem::path& path);
  // From bytes in memory (the fuzz target's way in). `plugins`: print through libtraceevent's
  // plugins, as trace-cmd does (the fuzz target leaves them out).
  static Result<TraceDat> parse(std::vector<uint8_t> bytes, bool plugins = true);

  int version() const { return version_; }
  // The machine's CPU count (what trace-cmd report prints as cpus=).
  int cpu_count() const { return cpu_count_; }
  // The recorded buffers: "" for the top level, else the instance's name.
  std::vector<std::string> buffer_names() const;
  uint32_t page_size() const { return page_size_; }
  // The selected trace clock ("local"), empty when the file does not say.
  const std::string& clock() const { return clock_; }
  // Whether timestamps are nanoseconds (trace-cmd prints them as seconds.micros) rather than
  // raw counts (the counter and x86-tsc clocks).
  bool timestamps_in_ns() const;
  const std::string& uname() const { return uname_; }
  // Each CPU's stats text at the end of the recording, in CPU order.
  const std::vector<std::string>& cpu_stats() const { return cpu_stats_; }
  // Lost events by CPU from the stats ("overrun" + "dropped events").
  std::vector<uint64_t> lost_by_cpu() const;

  const TracepointDecoder& decoder() const { return *decoder_; }
  // What reading the file's header repaired or left out, one line each (a page size that is not
  // a power of two). The formats left out are in decoder().warnings().
  const std::vector<std::string>& warnings() const { return warnings_; }
  // What reading the file's header lost, one line each (a CPU's compressed data cut short at a
  // chunk that does not decompress): the events are incomplete.
  const std::vector<std::string>& damage() const { return damage_; }

  // Every event of every CPU in time order (ties: the lower CPU first, as trace-cmd); stops
  // early when `visit` returns false. A malformed page (a size past its end, an event that
  // overruns it, bytes after a CPU's last whole page) is skipped and the CPU's events go on
  // from the next page; the walk then ends with an Error naming the first such page and how
  // many there were, after every readable event was visited. `lost_at_end`, when given, hears
  // of each CPU whose last pages say events were lost but hold none after the loss (no event
  // follows to carry it): buffer, CPU, and the count (-1: some, count unknown).
  Result<void> for_each_event(const std::function<bool(const TraceDatEvent&)>& visit,
                              const std::function<void(int buffer, int cpu, long long lost)>& lost_at_end = {}) const;

 private:
  struct CpuData {
    int cpu = 0;
    std::span<const uint8_t> pages;  // into bytes_, or into decompressed_
  };
  struct Buffer {
    std::string name;
    std::vector<CpuData> cpus;
  };
  TraceDat() = default;
  // The file's bytes_ parsed.
  Result<void> parse_bytes(bool plugins);
  Result<void> parse_v6(size_t after_preamble);
  Result<void> parse_v7(size_t after_page_size, bool plugins);
  struct V7Parse;  // parse_v7's steps
  // A version 6 "flyrecord" table (u64 offset, u64 size per CPU) at `r`, as the buffer `name`.
  Result<void> read_flyrecord_table(ByteReader& r, uint32_t cpus, const std::string& name);

  // The file: mapped (open), or owned (parse); bytes_ is either. locked_fd_ holds the shared
  // lock that keeps a writer from cutting the mapped file (TraceDatWriter::finish).
  ScopedFd locked_fd_;
  std::optional<FileMapping> mapping_;
  std::vector<uint8_t> owned_;
  std::span<const uint8_t> bytes_;
  std::vector<std::vector<uint8_t>> decompressed_;
  std::vector<Buffer> buffers_;
  int cpu_count_ = 0;
  int version_ = 0;
  uint32_t page_size_ = 0;
  int long_size_ = 8;
  std::string clock_, uname_;
  std::vector<std::string> cpu_stats_;
  std::vector<std::string> warnings_, damage_;
  std::optional<TracepointDecoder> decoder_;
};

// Where a CPU lost events: between the last event it kept before the loss and the first after
// (after == 0: before its first kept event; before == 0: after its last, none followed).
struct TraceLossWindow {
  int cpu = 0;
  uint64_t after = 0, before = 0;
  long long count = -1;  // -1: the page says events were lost, not how many
};

struct TraceReportSummary {
  uint64_t events = 0;
  std::vector<TraceLossWindow> losses;
  // What a reader could not show as the file says; each makes the result incomplete.
  std::string unreadable;       // for_each_event's error: the pages it skipped; empty when none
  uint64_t unknown_events = 0;  // printed as [UNKNOWN EVENT]: the file lacks their format, or vperf left it out
  uint64_t short_records = 0;   // too short to hold their common fields: left out
  // "SYSTEM:EVENT: WHY" -> events printed from their fields (trace-cmd report -R's way) because
  // libtraceevent could not print them safely through their format (print_hazard).
  std::map<std::string, uint64_t> printed_from_fields;
};

// The shortcomings of a read, for stderr, one line each: what the header repaired, the formats
// left out, and what the summary says could not be shown. `incomplete`: some event of the file
// is missing from the result or not shown as its format says, so the command must exit non-zero.
struct TraceShortcomings {
  std::vector<std::string> warnings;
  bool incomplete = false;
};
TraceShortcomings shortcomings(const TraceDat& file, const TraceReportSummary& summary);

// trace-cmd report's output for `file`: "cpus=N", then one entry per event
// ("%16s-%-5d [%03d] %6.1000d: %s: %s", the event name padded to 20; a stack's frames are lines
// of the same entry), with "CPU:N [K EVENTS DROPPED]" before an event that followed lost ones.
// An event libtraceevent cannot print safely through its format shows "[UNSAFE FORMAT]" and its
// fields; a damaged page ends nothing but itself: the summary says what was not shown.
Result<TraceReportSummary> print_trace_report(const TraceDat& file, const std::function<void(std::string_view line)>& out);

// The kernel stacks a trace holds (ftrace:kernel_stack events: stacktrace triggers, -T,
// func_stack_trace), folded as stackcollapse-perf.pl --kernel folds perf's: one line per
// distinct stack, "COMM;OUTERMOST_[k];...;INNERMOST_[k] COUNT", frames named through the
// file's kallsyms ("[unknown]" where it has none), sorted; `stacks` receives how many.
// `walk`, when given, receives what the walk over the events could not read (as a report's).
std::string folded_kernel_stacks(const TraceDat& file, uint64_t* stacks = nullptr, TraceReportSummary* walk = nullptr);

// The function_graph calls of a trace.dat as folded stacks weighted by time: each call's path
// ("comm;outer_[k];...;func_[k]", the task's enclosing calls from their funcgraph_entry events)
// with its self time in nanoseconds (its duration less its children's), so that a flame graph's
// widths are the calls' durations. A call whose entry came before the trace began has its
// known enclosing calls only. `calls` gets how many calls ended (funcgraph_exit events).
std::string folded_function_graph(const TraceDat& file, uint64_t* calls = nullptr, TraceReportSummary* walk = nullptr);

// Whether `head` (a file's first bytes) starts like a trace.dat.
bool looks_like_trace_dat(std::string_view head);

// What the file says was lost, for stderr after a report, one line each: per CPU, the ring
// buffer's count (its stats at the end of the recording) and the time windows of the gaps, so
// that no count over the trace is taken for complete. Empty when nothing was lost.
std::vector<std::string> describe_losses(const TraceDat& file, const TraceReportSummary& summary);

}  // namespace vperf::tracing
