// libFuzzer target for the trace.dat reader (versions 6 and 7, compressed or not: the file
// `vperf ftrace report` takes from anywhere) and the report printed from it, event formats and
// all. It must parse or fail with an Error, and every event it yields must print, with no read
// outside memory vperf owns, no division by zero and no allocation the bytes do not back,
// however the pages, sections, chunks, formats and records lie.
//
// Two kinds of input:
//  - a trace.dat (it starts with the \027\010Dtracing magic): read, reported, folded;
//  - otherwise, one event format and its records: "FORMAT TEXT\0", then {u16 size, bytes} per
//    record. The format
//    (as in /sys/kernel/tracing/events/S/E/format) goes into tracing data of its own, and each
//    record, its common_type set to the format's ID, is printed as perf script and ftrace report
//    print it. This reaches libtraceevent's printing with print fmts and records both mutated,
//    which whole files rarely do.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sys/mman.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "tracing/trace_dat.h"
#include "tracing/tracepoint_decoder.h"

// As tracing_data_fuzz: libtraceevent's tep_parse_event leaks on some malformed formats.
extern "C" const char* __lsan_default_suppressions() { return "leak:tep_parse_event\n"; }

namespace {

void trace_dat(const uint8_t* data, size_t size) {
  // Plugins stay out: loading a dozen shared objects per input would be the whole run.
  vperf::Result<vperf::tracing::TraceDat> file = vperf::tracing::TraceDat::parse(std::vector<uint8_t>(data, data + size), false);
  if (!file) return;
  size_t printed = 0;
  vperf::Result<vperf::tracing::TraceReportSummary> summary =
      vperf::tracing::print_trace_report(*file, [&](std::string_view line) { printed += line.size(); });
  if (summary) {
    (void)vperf::tracing::describe_losses(*file, *summary);
    (void)vperf::tracing::shortcomings(*file, *summary);
  }
  // The flame graph folds of the same events: kernel stacks, function_graph durations.
  (void)vperf::tracing::folded_kernel_stacks(*file);
  (void)vperf::tracing::folded_function_graph(*file);
}

template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

void put_text(std::vector<uint8_t>& out, std::string_view text) { out.insert(out.end(), text.begin(), text.end()); }

// Tracing data (version 6, as in a trace.dat or perf.data) holding `format` as the one event of
// system "fuzz", with the header_page of a 64-bit kernel.
std::vector<uint8_t> tracing_data_of(std::string_view format) {
  static constexpr std::string_view kHeaderPage =
      "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
      "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
  std::vector<uint8_t> out;
  put_text(out, std::string_view("\x17\x08\x44tracing6\0", 12));
  out.push_back(0);  // little-endian
  out.push_back(8);  // long size
  put<uint32_t>(out, 4096);
  put_text(out, std::string_view("header_page\0", 12));
  put<uint64_t>(out, kHeaderPage.size());
  put_text(out, kHeaderPage);
  put_text(out, std::string_view("header_event\0", 13));
  put<uint64_t>(out, 0);
  put<uint32_t>(out, 0);  // no ftrace formats
  put<uint32_t>(out, 1);  // one system
  put_text(out, std::string_view("fuzz\0", 5));
  put<uint32_t>(out, 1);
  put<uint64_t>(out, format.size());
  put_text(out, format);
  put<uint32_t>(out, 0);  // kallsyms
  put<uint32_t>(out, 0);  // printk formats
  put<uint64_t>(out, 0);  // saved_cmdlines
  return out;
}

// The oracle for print_hazard: a record it passes is printed again from two copies, one that
// ends, after its kRecordPadding zeros, at an inaccessible page and one that starts right after
// one, so that libtraceevent reading a byte past either end of what print_hazard allows (which
// ASan cannot see: libtraceevent is not instrumented) is a SEGV, a finding.
void print_against_guard_pages(tep_handle* tep, std::span<const uint8_t> record) {
  static constexpr size_t kPage = 4096, kRoom = 16 * kPage;  // records here are at most 65535 bytes
  // [no access][room][no access]
  static uint8_t* region = [] {
    void* map = ::mmap(nullptr, kPage + kRoom + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) std::abort();
    auto* bytes = static_cast<uint8_t*>(map);
    ::mprotect(bytes, kPage, PROT_NONE);
    ::mprotect(bytes + kPage + kRoom, kPage, PROT_NONE);
    return bytes + kPage;
  }();
  const size_t room = record.size() + vperf::tracing::kRecordPadding;
  if (room > kRoom) return;
  for (uint8_t* copy : {region + kRoom - room, region}) {
    if (!record.empty()) std::memcpy(copy, record.data(), record.size());
    std::memset(copy + record.size(), 0, vperf::tracing::kRecordPadding);
    const std::span<const uint8_t> guarded(copy, record.size());
    if (guarded.size() < vperf::tracing::common_fields_end(tep)) return;
    tep_record r{};
    r.size = static_cast<int>(guarded.size());
    r.data = copy;
    tep_event* event = tep_find_event_by_record(tep, &r);
    if (!event || vperf::tracing::print_hazard(event, guarded) || (event->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_PRINTRAW))) return;
    trace_seq s;
    trace_seq_init(&s);
    tep_print_event(tep, &s, &r, "%s", TEP_PRINT_INFO);
    trace_seq_destroy(&s);
  }
}

void format_and_records(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t end = input.find('\0');
  if (end == std::string_view::npos) return;
  vperf::Result<vperf::tracing::TracepointDecoder> decoder = vperf::tracing::TracepointDecoder::parse(tracing_data_of(input.substr(0, end)));
  if (!decoder) return;
  // The format's ID, for the records' common_type.
  const std::string_view text = input.substr(0, end);
  const size_t id_at = text.find("ID: ");
  const uint64_t id = id_at == std::string_view::npos ? 0 : std::strtoull(std::string(text.substr(id_at + 4, 12)).c_str(), nullptr, 10);
  std::string out;
  for (size_t at = end + 1; at + 2 <= size;) {
    uint16_t length = 0;
    std::memcpy(&length, data + at, sizeof length);
    at += 2;
    std::vector<uint8_t> record(data + at, data + std::min(size, at + length));
    at += record.size();
    if (record.size() >= 2) {
      const auto type = static_cast<uint16_t>(id);
      std::memcpy(record.data(), &type, sizeof type);
    }
    out.clear();
    decoder->format(id, record, 0, out);
    print_against_guard_pages(decoder->handle(), record);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 10 && std::memcmp(data, "\x17\x08\x44tracing", 10) == 0)
    trace_dat(data, size);
  else
    format_and_records(data, size);
  return 0;
}
