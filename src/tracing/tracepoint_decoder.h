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
#include <vector>

#include "core/error.h"

struct tep_handle;
struct tep_event;
struct tep_format_field;

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

  // The tracepoint with this id (attr.config of a PERF_TYPE_TRACEPOINT event) is known.
  bool has_event(uint64_t id) const;
  // "sched:sched_switch", as perf names an event it only knows from its tracepoint id.
  std::optional<std::string> event_name(uint64_t id) const;
  // The event's field names in format order, common_* fields first.
  std::vector<std::string> field_names(uint64_t id) const;
  // Appends the print fmt's text for one sample's raw data (PERF_SAMPLE_RAW); appends
  // nothing for an unknown id.
  void format(uint64_t id, std::span<const uint8_t> raw, uint32_t cpu, std::string& out) const;
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

}  // namespace vperf::tracing
