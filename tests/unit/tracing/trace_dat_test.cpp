#include "tracing/trace_dat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/files.h"

namespace vperf::tracing {
namespace {

// The fuzz seeds are real files: vperf's own version 6, and trace-cmd convert's version 7 of it
// (zstd-compressed and not); see tests/fuzz/corpus/README.md.
std::vector<uint8_t> seed(const std::string& name) {
  std::ifstream in(std::string(VPERF_SOURCE_DIR) + "/tests/fuzz/corpus/trace_dat/" + name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> report_of(const std::vector<uint8_t>& bytes) {
  Result<TraceDat> file = TraceDat::parse(bytes, false);
  EXPECT_TRUE(file.ok()) << file.error().describe();
  std::vector<std::string> lines;
  if (file) {
    EXPECT_TRUE(print_trace_report(*file, [&](std::string_view line) { lines.emplace_back(line); }).ok());
  }
  return lines;
}

TEST(TraceDat, VersionsSixAndSevenOfOneTraceReadTheSame) {
  const std::vector<std::string> v6 = report_of(seed("v6-getppid-stacktrace"));
  ASSERT_EQ(v6.size(), 1u + 3 * 2);  // cpus=, then 3 syscalls and their 3 stacks (one entry each, frames on lines of their own)
  EXPECT_EQ(v6[0], "cpus=2");
  EXPECT_NE(v6[1].find(" sys_enter_getppid: "), std::string::npos) << v6[1];
  EXPECT_NE(v6[2].find(" kernel_stack: "), std::string::npos) << v6[2];
  size_t frames = 0;
  for (size_t at = v6[2].find("=> 0xffffffff8"); at != std::string::npos; at = v6[2].find("=> 0xffffffff8", at + 1)) ++frames;
  EXPECT_EQ(frames, 4u) << "4 frames, as addresses (no kallsyms in the seed, the kernel print fmt without plugins): " << v6[2];
  EXPECT_EQ(report_of(seed("v7-zstd-getppid-stacktrace")), v6);  // libzstd1 is part of every Debian 12
  EXPECT_EQ(report_of(seed("v7-none-getppid-stacktrace")), v6);
  Result<TraceDat> file = TraceDat::parse(seed("v6-getppid-stacktrace"), false);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->version(), 6);
  EXPECT_EQ(file->clock(), "local");
  EXPECT_TRUE(file->timestamps_in_ns());
  EXPECT_EQ(file->lost_by_cpu(), (std::vector<uint64_t>{0, 0}));
}

// The line head (comm-pid [cpu] seconds.micros:) is vperf's own, no longer libtraceevent's
// tep_print_event: the times below, with CPU 0's page timestamp moved, are what libtraceevent
// 1.7.1 printed for them (and trace-cmd 3.1 for 0): rounded to the microsecond, seconds.micros
// even under a second, seconds as wide as they need beyond five digits.
TEST(TraceDat, TheLineHeadRoundsTimesAsLibtraceeventDoes) {
  const std::vector<uint8_t> original = seed("v6-getppid-stacktrace");
  const size_t table = std::search(original.begin(), original.end(), "flyrecord", "flyrecord" + 9) - original.begin() + 10;
  uint64_t offset = 0;
  std::memcpy(&offset, original.data() + table, 8);
  for (const auto& [page_time, shown] : std::vector<std::pair<uint64_t, std::string>>{
           {0, "    0.000000:"},
           {999499, "    0.000999:"},
           {999999500, "    1.000000:"},
           {100000000000000, "100000.000000:"},
           {18446744073709551000ULL, "18446744073.709551:"}}) {
    std::vector<uint8_t> bytes = original;
    std::memcpy(bytes.data() + offset, &page_time, 8);
    const std::vector<std::string> lines = report_of(bytes);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[1], "  vperf-workload-13598 [000] " + shown + " sys_enter_getppid:    ")
        << page_time;
  }
}

// The kernel flags a page that follows lost events and stores how many after its data; the
// report says so before that page's first event, as trace-cmd does.
TEST(TraceDat, LostEventsArePrintedWhereTheyHappened) {
  std::vector<uint8_t> bytes = seed("v6-getppid-stacktrace");
  // CPU 0's data is the first page-aligned block after the flyrecord table.
  const size_t table = std::search(bytes.begin(), bytes.end(), "flyrecord", "flyrecord" + 9) - bytes.begin() + 10;
  uint64_t offset = 0;
  std::memcpy(&offset, bytes.data() + table, 8);
  uint64_t commit = 0;
  std::memcpy(&commit, bytes.data() + offset + 8, 8);
  const uint64_t used = commit & ((1u << 27) - 1);
  commit |= (1ull << 31) | (1ull << 30);
  std::memcpy(bytes.data() + offset + 8, &commit, 8);
  const uint64_t lost = 7;
  std::memcpy(bytes.data() + offset + 16 + used, &lost, 8);
  const std::vector<std::string> lines = report_of(bytes);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(lines[1].starts_with("CPU:0 [7 EVENTS DROPPED]\n  vperf-workload-")) << lines[1];
  Result<TraceDat> file = TraceDat::parse(bytes, false);
  ASSERT_TRUE(file.ok());
  Result<TraceReportSummary> summary = print_trace_report(*file, [](std::string_view) {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(describe_losses(*file, *summary),
            (std::vector<std::string>{"CPU 0 lost events; gaps start-25093.011001: counts over this CPU's trace are lower bounds"}));
}

// The seed with a page that follows lost events but holds none itself (the kernel flags it all
// the same: 5 lost, the count stored after no data) put first or last among CPU 0's pages.
std::vector<uint8_t> seed_with_an_empty_page_after_a_loss(bool last) {
  std::vector<uint8_t> bytes = seed("v6-getppid-stacktrace");
  const size_t table = std::search(bytes.begin(), bytes.end(), "flyrecord", "flyrecord" + 9) - bytes.begin() + 10;
  uint64_t offset = 0, size = 0, cpu1_size = 0;
  std::memcpy(&offset, bytes.data() + table, 8);
  std::memcpy(&size, bytes.data() + table + 8, 8);
  std::memcpy(&cpu1_size, bytes.data() + table + 24, 8);
  EXPECT_EQ(cpu1_size, 0u);  // CPU 1 recorded nothing: CPU 0's data can grow in place
  std::vector<uint8_t> empty(4096, 0);
  std::memcpy(empty.data(), bytes.data() + offset, 8);  // the first page's timestamp
  const uint64_t commit = (1ull << 31) | (1ull << 30), lost = 5;
  std::memcpy(empty.data() + 8, &commit, 8);
  std::memcpy(empty.data() + 16, &lost, 8);
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(last ? offset + size : offset), empty.begin(), empty.end());
  size += empty.size();
  std::memcpy(bytes.data() + table + 8, &size, 8);
  return bytes;
}

// Such a page first: the loss is reported before the next page's first event (it was dropped;
// a hostile-run find).
TEST(TraceDat, ALossOnAPageWithoutEventsIsReportedBeforeTheNextEvent) {
  const std::vector<std::string> lines = report_of(seed_with_an_empty_page_after_a_loss(false));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(lines[1].starts_with("CPU:0 [5 EVENTS DROPPED]\n  vperf-workload-")) << lines[1];
}

// Such a page last: no event follows to carry the loss, so the report's stdout has nothing to
// print it before (trace-cmd prints nothing either), and the loss is told on stderr, from the
// CPU's last event to the end.
TEST(TraceDat, ALossOnACpusLastPageWithoutEventsIsToldAsAGapToTheEnd) {
  const std::vector<uint8_t> bytes = seed_with_an_empty_page_after_a_loss(true);
  EXPECT_EQ(report_of(bytes), report_of(seed("v6-getppid-stacktrace")));
  Result<TraceDat> file = TraceDat::parse(bytes, false);
  ASSERT_TRUE(file.ok());
  Result<TraceReportSummary> summary = print_trace_report(*file, [](std::string_view) {});
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->losses.size(), 1u);
  EXPECT_EQ(summary->losses[0].count, 5);
  EXPECT_EQ(describe_losses(*file, *summary),
            (std::vector<std::string>{"CPU 0 lost events; gaps 25093.011021-end: counts over this CPU's trace are lower bounds"}));
}

TEST(TraceDat, DamagedFilesAreOneErrorNeverAWildRead) {
  const std::vector<uint8_t> whole = seed("v6-getppid-stacktrace");
  std::vector<uint8_t> truncated(whole.begin(), whole.end() - 100);
  Result<TraceDat> cut = TraceDat::parse(truncated, false);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().describe().find("truncated"), std::string::npos) << cut.error().describe();
  // A page whose header claims more data than a page holds.
  std::vector<uint8_t> bad = whole;
  const size_t table = std::search(bad.begin(), bad.end(), "flyrecord", "flyrecord" + 9) - bad.begin() + 10;
  uint64_t offset = 0;
  std::memcpy(&offset, bad.data() + table, 8);
  const uint64_t huge = 100000;
  std::memcpy(bad.data() + offset + 8, &huge, 8);
  Result<TraceDat> file = TraceDat::parse(bad, false);
  ASSERT_TRUE(file.ok());
  Result<void> walked = file->for_each_event([](const TraceDatEvent&) { return true; });
  ASSERT_FALSE(walked.ok());
  EXPECT_NE(walked.error().describe().find("claims 100000 bytes"), std::string::npos) << walked.error().describe();
  EXPECT_FALSE(TraceDat::parse(std::vector<uint8_t>{'x'}, false).ok());
}

// Issue 30: print fmts that make libtraceevent divide by zero (SIGFPE before) or read far past a
// 12-byte record (__print_hex of 100 MB: SIGSEGV; __print_array of 8 MB: vperf's heap on
// stdout), or a field declared outside the record. Every event is still printed, the unsafe
// ones from their fields, and the summary makes the report incomplete.
TEST(TraceDat, CraftedPrintFormatsPrintFieldsInsteadOfCrashing) {
  const std::vector<std::string> plain = report_of(seed("v6-getppid-stacktrace"));
  for (const char* name : {"fmt-div-zero", "fmt-mod-zero", "fmt-div-record-zero", "fmt-print-hex-huge", "fmt-print-array-huge",
                           "fmt-field-outside"}) {
    SCOPED_TRACE(name);
    Result<TraceDat> file = TraceDat::parse(seed(name), false);
    ASSERT_TRUE(file.ok()) << file.error().describe();
    std::vector<std::string> lines;
    Result<TraceReportSummary> summary = print_trace_report(*file, [&](std::string_view line) { lines.emplace_back(line); });
    ASSERT_TRUE(summary.ok());
    ASSERT_EQ(lines.size(), plain.size());
    const bool field_outside = std::string_view(name) == "fmt-field-outside";
    for (size_t i = 0; i < lines.size(); ++i) {
      if (plain[i].find("sys_enter_getppid:") == std::string::npos) {
        EXPECT_EQ(lines[i], plain[i]);  // the other events print as before
        continue;
      }
      // The same line up to the event's text, then its fields (110: getppid's number on x86-64).
      const size_t text = plain[i].find("sys_enter_getppid:") + std::string_view("sys_enter_getppid:    ").size();
      EXPECT_EQ(lines[i], plain[i].substr(0, text) + (field_outside ? "[UNSAFE FORMAT] __syscall_nr=?" : "[UNSAFE FORMAT] __syscall_nr=110"));
    }
    ASSERT_EQ(summary->printed_from_fields.size(), 1u);
    EXPECT_EQ(summary->printed_from_fields.begin()->second, 3u);
    EXPECT_TRUE(summary->printed_from_fields.begin()->first.starts_with("syscalls:sys_enter_getppid: ")) << summary->printed_from_fields.begin()->first;
    const TraceShortcomings missing = shortcomings(*file, *summary);
    EXPECT_TRUE(missing.incomplete);
    ASSERT_EQ(missing.warnings.size(), 1u);
    EXPECT_NE(missing.warnings[0].find("3 events printed from their fields ([UNSAFE FORMAT])"), std::string::npos) << missing.warnings[0];
  }
  // What each says, for the warning.
  auto why = [&](const char* name) {
    Result<TraceDat> file = TraceDat::parse(seed(name), false);
    Result<TraceReportSummary> summary = print_trace_report(*file, [](std::string_view) {});
    return summary->printed_from_fields.begin()->first;
  };
  EXPECT_EQ(why("fmt-div-zero"), "syscalls:sys_enter_getppid: its print fmt divides by zero ('/' by a value that is 0 in this record)");
  EXPECT_EQ(why("fmt-print-hex-huge"),
            "syscalls:sys_enter_getppid: its __print_hex claims 100000000 bytes of '__syscall_nr' in a 16-byte record");
  EXPECT_EQ(why("fmt-print-array-huge"),
            "syscalls:sys_enter_getppid: its __print_array claims 1000000 elements of 8 bytes of '__syscall_nr' in a 16-byte record");
  EXPECT_EQ(why("fmt-field-outside"), "syscalls:sys_enter_getppid: it reads 4 bytes of '__syscall_nr' at offset 100000 of a 16-byte record");
}

// A format whose common_pid lies past every record: libtraceevent would read the pid there for
// every event. No record is typed; each is left out and counted.
TEST(TraceDat, RecordsTooShortForTheirCommonFieldsAreLeftOutAndCounted) {
  Result<TraceDat> file = TraceDat::parse(seed("fmt-common-outside"), false);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  std::vector<std::string> lines;
  Result<TraceReportSummary> summary = print_trace_report(*file, [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(lines, std::vector<std::string>{"cpus=2"});
  EXPECT_EQ(summary->events, 6u);
  EXPECT_EQ(summary->short_records, 6u);
  EXPECT_TRUE(shortcomings(*file, *summary).incomplete);
}

// A format vperf leaves out (its print fmt names a field it lacks) makes its events
// [UNKNOWN EVENT]: the warning names the format, and the report is incomplete.
TEST(TraceDat, EventsOfALeftOutFormatAreWarnedAbout) {
  Result<TraceDat> file = TraceDat::parse(seed("fmt-left-out"), false);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  std::vector<std::string> lines;
  Result<TraceReportSummary> summary = print_trace_report(*file, [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->unknown_events, 3u);
  const TraceShortcomings missing = shortcomings(*file, *summary);
  EXPECT_TRUE(missing.incomplete);
  ASSERT_EQ(missing.warnings.size(), 2u);
  EXPECT_EQ(missing.warnings[0],
            "cannot parse the format of syscalls:sys_enter_getppid: its print fmt names field 'no_such_field', which it does not declare");
  EXPECT_EQ(missing.warnings[1], "3 events have no format in the file that vperf could use ([UNKNOWN EVENT]; see the formats above)");
  // An intact file has nothing to say.
  Result<TraceDat> intact = TraceDat::parse(seed("v6-getppid-stacktrace"), false);
  Result<TraceReportSummary> whole = print_trace_report(*intact, [](std::string_view) {});
  EXPECT_FALSE(shortcomings(*intact, *whole).incomplete);
  EXPECT_TRUE(shortcomings(*intact, *whole).warnings.empty());
}

// A page size of 0x530001 (not a power of two, as no kernel's is): trace-cmd reads one page of
// that size per CPU; vperf reads with the size header_page describes (4096) and says so. Every
// event is there.
TEST(TraceDat, APageSizeThatIsNotAPowerOfTwoIsReadAsHeaderPageDescribesIt) {
  Result<TraceDat> file = TraceDat::parse(seed("page-size-530001"), false);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  EXPECT_EQ(file->page_size(), 4096u);
  EXPECT_EQ(file->warnings(),
            std::vector<std::string>{"the file states a page size of 5439489, not a power of two; read with 4096, the size its header_page describes"});
  EXPECT_EQ(report_of(seed("page-size-530001")), report_of(seed("v6-getppid-stacktrace")));
  // Without a header_page to trust, such a file is refused.
  std::vector<uint8_t> bytes = seed("page-size-530001");
  const std::string_view data_field = "\tfield: char data;\toffset:16;\tsize:4080;";
  auto at = std::search(bytes.begin(), bytes.end(), data_field.begin(), data_field.end());
  ASSERT_NE(at, bytes.end());
  std::memcpy(&*at + data_field.size() - 5, "4079", 4);  // 16 + 4079: not a power of two either
  Result<TraceDat> refused = TraceDat::parse(bytes, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "trace.dat: implausible page size 5439489 (the kernel's are powers of two)");
}

// A damaged page in the middle of a CPU's data: the events of the pages around it are still read,
// and the walk ends with an error naming it; the kernel stacks folded for a flame graph say the same.
TEST(TraceDat, ADamagedPageIsSkippedAndNamed) {
  Result<TraceDat> file = TraceDat::parse(seed("v6-second-page-damaged"), false);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  std::vector<std::string> lines;
  Result<TraceReportSummary> summary = print_trace_report(*file, [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(lines, report_of(seed("v6-getppid-stacktrace")));
  EXPECT_EQ(summary->unreadable,
            "trace.dat: damaged pages were skipped: CPU 0: page 1 claims 100000 bytes of data in a 4096-byte page");
  EXPECT_TRUE(shortcomings(*file, *summary).incomplete);
  uint64_t stacks = 0;
  TraceReportSummary walk;
  EXPECT_FALSE(folded_kernel_stacks(*file, &stacks, &walk).empty());
  EXPECT_EQ(stacks, 3u);
  EXPECT_EQ(walk.unreadable, summary->unreadable);
  EXPECT_TRUE(shortcomings(*file, walk).incomplete);
}

// Issue 30: a v7 chunk or section claiming 0x7fffffff decompressed bytes made vperf allocate
// them (4.2 GB for a 1.1 MB file, or std::bad_alloc). The claim is held to what zstd can make
// of the block's bytes, and the output is produced as the stream yields it. A metadata section
// that lies is the file's end; a CPU's data chunk that lies ends that CPU's data, the chunks
// before it kept, and the read is incomplete.
TEST(TraceDat, DecompressionClaimsAreHeldToWhatTheBytesCanHold) {
  Result<TraceDat> section = TraceDat::parse(seed("v7-zstd-section-claims-2g"), false);
  ASSERT_FALSE(section.ok());
  EXPECT_NE(section.error().message.find("bytes claims to hold 2147483647 bytes, more than zstd can make of it"), std::string::npos)
      << section.error().describe();

  Result<TraceDat> chunk = TraceDat::parse(seed("v7-zstd-chunk-claims-2g"), false);
  ASSERT_TRUE(chunk.ok()) << chunk.error().describe();
  ASSERT_EQ(chunk->damage().size(), 1u);
  EXPECT_EQ(chunk->damage()[0],
            "CPU 0: chunk 1 of 1 is unreadable (trace.dat: a zstd block of 99 bytes claims to hold 2147483647 bytes, more than zstd "
            "can make of it); its events from there on are left out");
  Result<TraceReportSummary> summary = print_trace_report(*chunk, [](std::string_view) {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->events, 0u);  // the seed's CPU 0 has one chunk
  EXPECT_TRUE(shortcomings(*chunk, *summary).incomplete);

  // A claim zstd could honour but the block does not: one byte more than it holds.
  std::vector<uint8_t> bytes = seed("v7-zstd-getppid-stacktrace");
  std::vector<uint8_t> lying = seed("v7-zstd-chunk-claims-2g");
  static constexpr uint8_t kClaim[] = {0xff, 0xff, 0xff, 0x7f};  // 0x7fffffff, where make-hostile-seeds.py put it
  const size_t at = static_cast<size_t>(std::search(lying.begin(), lying.end(), std::begin(kClaim), std::end(kClaim)) - lying.begin());
  ASSERT_LT(at, lying.size());
  uint32_t claim = 0;
  std::memcpy(&claim, bytes.data() + at, 4);
  ++claim;
  std::memcpy(bytes.data() + at, &claim, 4);
  Result<TraceDat> longer = TraceDat::parse(bytes, false);
  ASSERT_TRUE(longer.ok());
  ASSERT_EQ(longer->damage().size(), 1u);
  EXPECT_NE(longer->damage()[0].find("block does not decompress to its stated " + std::to_string(claim) + " bytes"), std::string::npos)
      << longer->damage()[0];
}

}  // namespace
}  // namespace vperf::tracing
