#pragma once
// TracepointDecoder: a perf.data's tracing data (tracing/tracing_data.h: the HEADER_TRACING_DATA
// feature section in a file, the payload of the HEADER_TRACING_DATA record in a pipe) loaded
// into libtraceevent, so a tracepoint sample's raw data prints as perf script prints its
// "trace" field: the event's print fmt applied to the record (perf's event_format__fprintf,
// tep_print_event(..., "%s", TEP_PRINT_INFO)).
//
// What is loaded, as perf's trace-event-read.c loads it: the endianness, long size and page
// size; header_page (whose commit field's size then becomes the long size, as the kernel's);
// every ftrace and event format; the printk formats (for bprint events); saved_cmdlines. The
// kallsyms section is skipped as perf 6.1 skips it: addresses (%pS, ksym fields) resolve
// through a KernelSymbolResolver, perf's machine__resolve_kernel_addr. No libtraceevent
// plugins are loaded: perf 6.1 looks for them only in ~/.local/lib/traceevent/plugins, so
// sched_switch and friends print with the kernel's own print fmt.
//
// Malformed tracing data fails parse() with an Error; an event format libtraceevent cannot
// parse is left out (its samples then have no trace text) and noted in warnings().
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"

struct tep_handle;
struct tep_event;
struct tep_format_field;
struct tep_print_arg;

namespace vperf::tracing {

struct KernelSymbol {
  std::string name;
  uint64_t start = 0;   // the symbol's address, so that "+0x.." offsets come out right
  std::string module;   // "[kvm]" for a module's symbol; empty for the kernel image
};
using KernelSymbolResolver = std::function<std::optional<KernelSymbol>(uint64_t address)>;

// One numeric field of one event format, resolved once (TracepointDecoder::numeric_field) for
// every sample of that event: reading it is a bounds check and a load, with no lookup by name.
// It points into its decoder's libtraceevent state, so it is valid while that decoder lives.
class TracepointField {
 public:
  // The field's value in one sample's raw data (PERF_SAMPLE_RAW; libtraceevent's
  // tep_read_number_field); a signed field comes sign-extended (an int errno of -4 reads as
  // (uint64_t)-4). nullopt when the raw data is too short to hold it.
  std::optional<uint64_t> read(std::span<const uint8_t> raw) const;

 private:
  friend class TracepointDecoder;
  explicit TracepointField(tep_format_field* field) : field_(field) {}
  tep_format_field* field_;
};

// What a parse loads beyond perf's needs: trace-cmd report (tracing/trace_dat.h) resolves
// function addresses through the file's kallsyms and prints through libtraceevent's plugins
// (function, sched_switch, kvm...), as trace-cmd does; perf 6.1 does neither.
struct TracingDataOptions {
  bool kallsyms = false;
  bool plugins = false;
  // saved_cmdlines lines as trace-cmd reads them ("7075 CPU 0/TCG": the whole rest of the line,
  // libtraceevent's tep_parse_saved_cmdlines) rather than as perf does (its first word, "CPU").
  bool whole_comms = false;
  // The tracing data's bytes stay valid as long as the decoder does (a trace.dat's mapping, whose
  // owner keeps the decoder): its kallsyms is kept as a view and copied only when an event first
  // needs a symbol (megabytes that most reports never read).
  bool bytes_outlive_decoder = false;
};

class TracepointDecoder {
 public:
  // `consumed`, when given, receives how many bytes the tracing data took (a trace.dat's header
  // goes on after it).
  static Result<TracepointDecoder> parse(std::span<const uint8_t> tracing_data, const TracingDataOptions& options = {},
                                         size_t* consumed = nullptr);

  TracepointDecoder(TracepointDecoder&&) noexcept;
  TracepointDecoder& operator=(TracepointDecoder&&) noexcept;
  ~TracepointDecoder();

  // Used for addresses the print fmts show as symbols; without one they print as numbers.
  void set_kernel_symbol_resolver(KernelSymbolResolver resolver);
  // The file's kallsyms (TracingDataOptions::kallsyms) are parsed on first need, not by
  // parse(): most trace.dat files print no kernel symbol (syscalls, sched, kmem), and the
  // kernel's 100k+ lines cost more than printing their events. load_kernel_symbols() parses
  // them now; load_kernel_symbols_for(event) does so before an event that may print one
  // (ftrace's own events, a plugin's, a print fmt with %pS and the like). Call either before
  // anything that looks a function up through handle().
  void load_kernel_symbols() const;
  void load_kernel_symbols_for(const tep_event* event) const;

  // The tracepoint with this id (attr.config of a PERF_TYPE_TRACEPOINT event) is known.
  bool has_event(uint64_t id) const;
  // "sched:sched_switch", as perf names an event it only knows from its tracepoint id.
  std::optional<std::string> event_name(uint64_t id) const;
  // The event's field names in format order, common_* fields first.
  std::vector<std::string> field_names(uint64_t id) const;
  // Appends the print fmt's text for one sample's raw data (PERF_SAMPLE_RAW); appends
  // nothing for an unknown id. A sample libtraceevent cannot print safely (print_hazard below)
  // comes out as "[UNSAFE FORMAT]" and its fields, and is counted in printed_from_fields().
  void format(uint64_t id, std::span<const uint8_t> raw, uint32_t cpu, std::string& out) const;
  uint64_t printed_from_fields() const;
  // What a reader of samples says when some were printed from their fields (script, report
  // --sort trace): one warning line, or nullopt when every sample printed through its format.
  std::optional<std::string> printed_from_fields_warning() const;
  // The numeric field `name` of the event `id`, to resolve once and read from every sample of
  // the event; nullopt for an unknown id or field, or an array, string or dynamic field.
  std::optional<TracepointField> numeric_field(uint64_t id, std::string_view name) const;

  // libtraceevent's handle, for the trace.dat printer of this module (tracing/trace_dat.h).
  tep_handle* handle() const;

  // Formats that did not parse, one line each.
  const std::vector<std::string>& warnings() const;

 private:
  struct State;
  explicit TracepointDecoder(std::unique_ptr<State> state);
  tep_event* find(uint64_t id) const;
  std::unique_ptr<State> state_;
};

// --- Printing a file's records through a file's formats ---
//
// libtraceevent prints a record through its format's print fmt (or a plugin's handler) trusting
// every offset, length and divisor that the format and the record give: `REC->a / REC->b` with
// b 0 divides by zero, `__print_hex(REC->f, 100000000)` reads 100 MB from a 60-byte record, a
// field declared at offset 100000 is read there. Both come from the file, so before a record is
// printed its format's argument tree is walked and every length, offset and divisor is evaluated
// on that record as libtraceevent would evaluate it (print_hazard); a record that fails is printed
// from its fields instead (append_raw_fields), as `trace-cmd report -R` shows them, and the
// caller says how many were.

// Bytes past a record that print_hazard allows libtraceevent to touch, provided they are zeros
// (padded_copy): NUL-terminated strings stop in them, and a binary printk's word reads (aligned,
// at most 8 bytes, started inside the record) end in them.
inline constexpr size_t kRecordPadding = 64;

// `record` copied into `scratch` with kRecordPadding zeros after it; the copy's span (as long as
// `record`), for libtraceevent to print from.
std::span<const uint8_t> padded_copy(std::span<const uint8_t> record, std::vector<uint8_t>& scratch);

// How many bytes a record must have before libtraceevent may read its type and pid: the end of
// the common_type and common_pid fields of the first format (where libtraceevent finds them).
// SIZE_MAX when that format places them where no record can hold them (a negative offset).
size_t common_fields_end(tep_handle* tep);

// Why libtraceevent must not print `record` (of `event`) through its print fmt or plugin
// handler: a read outside the record, a division by zero, a length it cannot know. nullopt when
// it may. `record` must be a padded_copy.
std::optional<std::string> print_hazard(tep_event* event, std::span<const uint8_t> record);

// The event's own fields (not the common ones) as trace-cmd report -R prints them, " NAME=VALUE"
// each, reading only inside the record ("?" for a field that lies outside it).
void append_raw_fields(tep_event* event, std::span<const uint8_t> record, std::string& out);

// Whether libtraceevent prints the event's records from their bytes alone: through its print
// fmt (with the kernel symbols loaded before), or through the sched plugin's handlers, which only
// read the record. Other plugins' handlers may keep state from one record to the next (the
// function plugin indents by each CPU's call depth so far).
bool prints_from_record_alone(const tep_event* event);

// The texts libtraceevent printed for records (the part after the line's head), by the records'
// bytes: most records repeat one another (a syscall's arguments from one task, switches between
// the same tasks), and printing them is most of a tracepoint report's, script's or trace.dat
// report's time. Only for events prints_from_record_alone, printed through their format (so a
// record found here passed print_hazard). Emptied when full rather than evicted piece by piece:
// bounded, and cheap to refill.
class PrintedTexts {
 public:
  // The text kept for these bytes, or nullptr; the bytes are the ones keep() keeps a text for.
  const std::string* find(std::span<const uint8_t> record);
  void keep(std::string_view text);
  void clear();

 private:
  static constexpr size_t kMaxBytes = 8 << 20;
  std::unordered_map<std::string, std::string> texts_;
  std::string key_;  // the bytes last looked up
  size_t bytes_ = 0;
};

}  // namespace vperf::tracing
