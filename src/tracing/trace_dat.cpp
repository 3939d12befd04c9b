#include "tracing/trace_dat.h"

#include <traceevent/event-parse.h>
// kbuffer.h, unlike event-parse.h, declares its functions without extern "C".
extern "C" {
#include <traceevent/kbuffer.h>
}
#include <traceevent/trace-seq.h>
#include <zlib.h>
#include <zstd.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "core/byte_reader.h"
#include "core/byte_writer.h"
#include "core/shared_library.h"
#include "core/files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "tracing/trace_text.h"

namespace vperf::tracing {

namespace {

enum TraceDatOption : uint16_t {
  kOptionDone = 0,
  kOptionCpuStat = 2,
  kOptionBuffer = 3,
  kOptionTraceClock = 4,
  kOptionUname = 5,
  kOptionCpuCount = 8,
  kOptionVersion = 9,
};

// A text option as trace-cmd writes them: {u16 id, u32 size}, the text and its NUL.
void put_text_option(ByteWriter& out, uint16_t id, std::string_view text) {
  out.put(id);
  out.put(static_cast<uint32_t>(text.size() + 1));
  out.c_string(text);
}

std::string selected_clock(std::string_view trace_clock) {
  const size_t open = trace_clock.find('['), close = trace_clock.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return "";
  return std::string(trace_clock.substr(open + 1, close - open - 1));
}

// The page header: u64 timestamp, then `commit` (a long): the data size in its low 27 bits, and
// the kernel's flags above (bit 31 missed events, bit 30 missed count stored after the data).
constexpr uint64_t kCommitMask = (1u << 27) - 1;
constexpr uint64_t kMissedStored = 1u << 30;

}  // namespace

namespace {

// The pieces of version-6 tracing data that version 7 keeps in sections of their own.
struct TracingDataPieces {
  std::span<const uint8_t> initial;  // magic, version, endianness, long size, page size
  std::span<const uint8_t> header_info, ftrace_formats, event_formats, kallsyms, printk, cmdlines;
};

Result<TracingDataPieces> split_tracing_data(std::span<const uint8_t> data) {
  ByteReader r(data);
  TracingDataPieces p;
  VPERF_TRY(r.skip(10, "magic"));
  VPERF_TRY(std::string version, r.c_string("version"));
  VPERF_TRY(r.skip(6, "endianness, long size, page size"));
  p.initial = data.subspan(0, r.offset());
  auto piece = [&](auto&& walk) -> Result<std::span<const uint8_t>> {
    const size_t from = r.offset();
    VPERF_TRY(walk());
    return data.subspan(from, r.offset() - from);
  };
  auto sized64 = [&]() -> Result<void> {
    VPERF_TRY(uint64_t n, r.u64("size"));
    return r.skip(static_cast<size_t>(n), "text");
  };
  auto sized32 = [&]() -> Result<void> {
    VPERF_TRY(uint32_t n, r.u32("size"));
    return r.skip(n, "text");
  };
  VPERF_TRY(p.header_info, piece([&]() -> Result<void> {
              for (const char* tag : {"header_page", "header_event"}) {
                VPERF_TRY(std::string name, r.c_string("header tag"));
                if (name != tag) return Error{"tracing data: expected " + std::string(tag)};
                VPERF_TRY(sized64());
              }
              return {};
            }));
  VPERF_TRY(p.ftrace_formats, piece([&]() -> Result<void> {
              VPERF_TRY(uint32_t count, r.u32("ftrace format count"));
              for (uint32_t i = 0; i < count; ++i) VPERF_TRY(sized64());
              return {};
            }));
  VPERF_TRY(p.event_formats, piece([&]() -> Result<void> {
              VPERF_TRY(uint32_t systems, r.u32("system count"));
              for (uint32_t s = 0; s < systems; ++s) {
                VPERF_TRY(r.c_string("system"));
                VPERF_TRY(uint32_t count, r.u32("event format count"));
                for (uint32_t i = 0; i < count; ++i) VPERF_TRY(sized64());
              }
              return {};
            }));
  VPERF_TRY(p.kallsyms, piece(sized32));
  VPERF_TRY(p.printk, piece(sized32));
  VPERF_TRY(p.cmdlines, piece(sized64));
  return p;
}

constexpr uint16_t kSectionHeaderInfo = 16;
constexpr uint16_t kSectionFlagCompressed = 1;  // trace-cmd.dat.v7(5): the section's payload is compressed

}  // namespace

// Named (not anonymous): the writer's state, declared in the header, holds one.
namespace trace_dat_writing {

// zstd for version 7's compressed sections, loaded when a file is written compressed (libzstd
// is then the only library that needs, and trace-cmd's default algorithm).
class Compressor {
 public:
  static Result<Compressor> zstd() {
    Compressor c;
    VPERF_TRY(SharedLibrary library, SharedLibrary::open("libzstd.so.1", "install zstd's library: apt-get install libzstd1"));
    VPERF_TRY(library.bind("ZSTD_compress", c.compress_));
    VPERF_TRY(library.bind("ZSTD_compressBound", c.bound_));
    VPERF_TRY(library.bind("ZSTD_isError", c.is_error_));
    VPERF_TRY(library.bind("ZSTD_versionString", c.version_));
    return c;
  }
  std::string version() const { return version_(); }
  // "u32 compressed size, u32 size, the compressed bytes": a section's payload and a data chunk.
  Result<void> append_block(ByteWriter& out, std::span<const uint8_t> in) const {
    std::vector<uint8_t> packed(bound_(in.size()));
    const size_t n = compress_(packed.data(), packed.size(), in.data(), in.size(), 3);
    if (is_error_(n)) return Error{"zstd could not compress a trace.dat block"};
    out.put(static_cast<uint32_t>(n));
    out.put(static_cast<uint32_t>(in.size()));
    out.data().insert(out.data().end(), packed.begin(), packed.begin() + static_cast<ptrdiff_t>(n));
    return {};
  }

 private:
  decltype(&::ZSTD_compress) compress_ = nullptr;
  decltype(&::ZSTD_compressBound) bound_ = nullptr;
  decltype(&::ZSTD_isError) is_error_ = nullptr;
  decltype(&::ZSTD_versionString) version_ = nullptr;
};

}  // namespace trace_dat_writing

using trace_dat_writing::Compressor;

namespace {

// --- the writer ---

constexpr size_t kChunk = 1 << 20;                   // a compressed CPU's pages per chunk, as trace-cmd
constexpr size_t kStatsRoom = 512;                   // per_cpu/cpuN/stats: 8 lines of at most ~60 bytes

Result<void> pwrite_all(int fd, const void* data, size_t size, uint64_t at) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::from_errno("writing trace.dat", n == 0 ? EIO : errno);
    p += n;
    at += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return {};
}

// Bytes [from, from + size) of the file copied to `to` (the ranges do not overlap).
Result<void> copy_within(int fd, uint64_t from, uint64_t size, uint64_t to) {
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min<uint64_t>(size, 1 << 20)));
  for (uint64_t done = 0; done < size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), size - done));
    const ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::from_errno("reading back trace.dat", n == 0 ? EIO : errno);
    VPERF_TRY(pwrite_all(fd, buffer.data(), static_cast<size_t>(n), to + done));
    done += static_cast<uint64_t>(n);
  }
  return {};
}

// Frees the disk behind [at, at + size) where the file system can (a hole reads as zeros).
void punch(int fd, uint64_t at, uint64_t size) {
  if (size > 0) (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at), static_cast<off_t>(size));
}

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// `text` in exactly `room` bytes: cut after its last whole line that fits, then `fill`.
std::string in_room(std::string_view text, size_t room, char fill) {
  if (text.size() > room) {
    text = text.substr(0, room);
    const size_t last_line = text.rfind('\n');
    text = last_line == std::string_view::npos ? std::string_view() : text.substr(0, last_line + 1);
  }
  std::string out(text);
  out.resize(room, fill);
  return out;
}

// Whether an 8-byte field at `at` stays within one page of the file, so that one pwrite of it
// lands whole or not at all when vperf is killed (the kernel copies a write page by page).
bool within_a_page(uint64_t at) { return at % 4096 <= 4096 - 8; }

// A CPU's stats in `room` bytes: the spaces that fill the room go before the text's last newline,
// so that trace-cmd, which turns the option's NUL into a newline, prints them as it prints its
// own (trailing blanks on the last line, then the blank line between CPUs).
std::string stats_in_room(std::string_view text, size_t room) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  std::string out = in_room(text, room - 1, ' ');
  out.push_back('\n');
  return out;
}

// A CPU's stats option, rewritten later: {id, room + 1, the text in its room, NUL}. Returns
// where the text starts in `out`.
size_t put_stats_option(ByteWriter& out, std::string_view text, size_t room) {
  out.put(uint16_t{kOptionCpuStat});
  out.put(static_cast<uint32_t>(room + 1));
  const size_t at = out.size();
  out.c_string(stats_in_room(text, room));
  return at;
}

}  // namespace

struct TraceDatWriter::State {
  struct Cpu {
    int cpu = 0;
    uint64_t offset_field = 0, size_field = 0;  // where the table (or BUFFER option) holds them
    uint64_t stats_at = 0;
    size_t stats_room = 0;
    uint64_t start = 0;    // where its region begins now
    uint64_t room = 0;     // the region's size
    uint64_t bytes = 0;    // committed bytes in the region (compressed: the chunk count and chunks)
    uint32_t chunks = 0;
    uint64_t page_bytes = 0;
    std::vector<uint8_t> waiting;  // compressed: pages not yet in a chunk
  };
  int fd = -1;
  uint32_t page_size = 4096;
  bool splice_works = true;
  std::optional<Compressor> zstd;
  std::vector<Cpu> cpus;
  uint64_t head_end = 0;   // the first byte after the head: the first region's page
  uint64_t tail = 0;       // past every region: where a moving region goes
  uint64_t cmdlines_at = 0;
  size_t cmdlines_room = 0;
  uint64_t flyrecord_size_field = 0;  // version 7: the flyrecord section's size (0: none)
  uint64_t flyrecord_data_at = 0;

  // The size the table states: a compressed CPU's leaves out its chunk count (trace-cmd 3.1).
  uint64_t stated_size(const Cpu& c) const { return zstd && c.bytes >= 4 ? c.bytes - 4 : c.bytes; }

  Result<void> commit_size(const Cpu& c) {
    const uint64_t size = stated_size(c);
    return pwrite_all(fd, &size, sizeof size, c.size_field);
  }

  // The region moved to `to` (the data copied first, then the offset switched, then the old
  // place freed), with `room` there.
  Result<void> move(Cpu& c, uint64_t to, uint64_t room) {
    VPERF_TRY(copy_within(fd, c.start, c.bytes, to));
    VPERF_TRY(pwrite_all(fd, &to, sizeof to, c.offset_field));
    const uint64_t old_start = c.start, old_room = c.room;
    c.start = to;
    c.room = room;
    // Only what no other region now holds: a move down may land on part of its old place.
    if (to >= old_start + old_room || to + room <= old_start) punch(fd, old_start, old_room);
    return {};
  }

  Result<void> make_room(Cpu& c, uint64_t more) {
    if (c.bytes + more <= c.room) return {};
    const uint64_t room = std::max(c.room * 2, round_up(c.bytes + more, page_size));
    const uint64_t to = tail;
    tail = to + room;
    return move(c, to, room);
  }

  Result<void> append(Cpu& c, std::span<const uint8_t> data) {
    VPERF_TRY(make_room(c, data.size()));
    VPERF_TRY(pwrite_all(fd, data.data(), data.size(), c.start + c.bytes));
    c.bytes += data.size();
    return commit_size(c);
  }

  // Compressed: `plain` as one chunk, then the size, then the chunk count: a kill between the
  // two leaves a count the size covers.
  Result<void> append_chunk(Cpu& c, std::span<const uint8_t> plain) {
    ByteWriter chunk;
    VPERF_TRY(zstd->append_block(chunk, plain));
    VPERF_TRY(append(c, chunk.data()));
    ++c.chunks;
    VPERF_TRY(pwrite_all(fd, &c.chunks, sizeof c.chunks, c.start));
    c.page_bytes += plain.size();
    return {};
  }

  // The bytes of every chunk appended leave `waiting` on every path, a failure's too: a later
  // flush must not append them again.
  Result<void> take_whole_chunks(Cpu& c, bool all) {
    size_t used = 0;
    Result<void> appended;
    while (appended && (c.waiting.size() - used >= kChunk || (all && used < c.waiting.size()))) {
      const size_t n = std::min(kChunk, c.waiting.size() - used);
      const uint32_t chunks_before = c.chunks;
      appended = append_chunk(c, std::span<const uint8_t>(c.waiting.data() + used, n));
      if (appended || c.chunks != chunks_before) used += n;
    }
    c.waiting.erase(c.waiting.begin(), c.waiting.begin() + static_cast<ptrdiff_t>(used));
    return appended;
  }
};

namespace {

// The head's bytes and where its fields are, for a given padding (spaces added to the last
// CPU's stats room, which moves the fields after it).
struct Head {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offset_fields, size_fields, stats_at;
  std::vector<size_t> stats_room;
  uint64_t cmdlines_at = 0;
  uint64_t flyrecord_size_field = 0, flyrecord_data_at = 0;
};

bool fields_within_pages(const Head& h) {
  for (const std::vector<uint64_t>* fields : {&h.offset_fields, &h.size_fields})
    for (uint64_t at : *fields)
      if (!within_a_page(at)) return false;
  return h.flyrecord_size_field == 0 || within_a_page(h.flyrecord_size_field);
}

// The saved comms with their room: u64 room, then the text padded with newlines (readers parse
// lines up to the first NUL or the end; blank lines are skipped).
void put_cmdlines(ByteWriter& out, std::span<const uint8_t> piece, size_t room, uint64_t& text_at) {
  std::string_view text;
  if (piece.size() >= 8) text = std::string_view(reinterpret_cast<const char*>(piece.data()) + 8, piece.size() - 8);
  out.put(static_cast<uint64_t>(room));
  text_at = out.size();
  out.text(in_room(text, room, '\n'));
}

// The options both versions carry: clock, uname, vperf's version, and each CPU's stats with
// room to be rewritten (the last CPU's room takes the padding).
void put_common_options(ByteWriter& o, const TraceDatHeader& header, size_t padding, Head& h) {
  if (!header.trace_clock.empty()) put_text_option(o, kOptionTraceClock, header.trace_clock);
  if (!header.uname.empty()) put_text_option(o, kOptionUname, header.uname);
  put_text_option(o, kOptionVersion, std::string("vperf ") + VPERF_VERSION);
  for (size_t i = 0; i < header.cpus.size(); ++i) {
    const size_t room = kStatsRoom + (i + 1 == header.cpus.size() ? padding : 0);
    h.stats_at.push_back(put_stats_option(o, i < header.cpu_stats.size() ? header.cpu_stats[i] : "", room));
    h.stats_room.push_back(room);
  }
}

Result<Head> version_6_head(const TraceDatHeader& header, const TracingDataPieces& pieces, size_t padding) {
  Head h;
  ByteWriter o;
  const size_t before_cmdlines = static_cast<size_t>(pieces.cmdlines.data() - header.tracing_data.data());
  o.data().assign(header.tracing_data.begin(), header.tracing_data.begin() + static_cast<ptrdiff_t>(before_cmdlines));
  put_cmdlines(o, pieces.cmdlines, header.cmdlines_room, h.cmdlines_at);
  o.put(static_cast<uint32_t>(header.cpus.size()));
  o.text(std::string_view("options  \0", 10));
  put_common_options(o, header, padding, h);
  o.put(uint16_t{kOptionDone});
  o.text(std::string_view("flyrecord\0", 10));
  const uint64_t first_region = round_up(o.size() + header.cpus.size() * 16, header.page_size);
  for (size_t i = 0; i < header.cpus.size(); ++i) {
    h.offset_fields.push_back(o.size());
    o.put(first_region + i * header.first_region_room);
    h.size_fields.push_back(o.size());
    o.put(uint64_t{0});
  }
  h.bytes = o.take();
  return h;
}

// Version 7: the metadata sections (built once: `sections`, from the file's start), then the
// options section, then the flyrecord section's header.
struct Version7Start {
  ByteWriter sections;
  size_t first_options_field = 0;
  std::vector<std::pair<uint16_t, uint64_t>> metadata;  // section id, offset
  uint64_t cmdlines_at = 0;
};

Result<Version7Start> version_7_sections(const TraceDatHeader& header, const TracingDataPieces& pieces, const std::optional<Compressor>& zstd) {
  Version7Start v;
  ByteWriter& o = v.sections;
  o.text(std::string_view(reinterpret_cast<const char*>(pieces.initial.data()), 10));
  o.text(std::string_view("7\0", 2));
  o.text(std::string_view(reinterpret_cast<const char*>(pieces.initial.data()) + pieces.initial.size() - 6, 6));
  if (zstd) {
    o.c_string("zstd");
    o.c_string(zstd->version());
  } else {
    o.text(std::string_view("none\0\0", 6));  // no compression, no version of it
  }
  v.first_options_field = o.size();
  o.put(uint64_t{0});
  // A section: id, flags, no description, size, payload. The saved comms stay uncompressed:
  // they are rewritten in place as they grow.
  uint16_t id = kSectionHeaderInfo;
  for (std::span<const uint8_t> payload :
       {pieces.header_info, pieces.ftrace_formats, pieces.event_formats, pieces.kallsyms, pieces.printk, pieces.cmdlines}) {
    const uint64_t at = o.size();
    const bool is_cmdlines = payload.data() == pieces.cmdlines.data();
    ByteWriter body;
    uint64_t text_in_body = 0;
    if (is_cmdlines) {
      put_cmdlines(body, payload, header.cmdlines_room, text_in_body);
    } else if (zstd) {
      VPERF_TRY(zstd->append_block(body, payload));
    } else {
      body.bytes(payload);
    }
    o.put(id);
    o.put(uint16_t{zstd && !is_cmdlines ? kSectionFlagCompressed : uint16_t{0}});
    o.put(uint32_t{0});
    o.put(static_cast<uint64_t>(body.size()));
    if (is_cmdlines) v.cmdlines_at = o.size() + text_in_body;
    o.bytes(body.data());
    v.metadata.emplace_back(id, at);
    ++id;
  }
  return v;
}

Head version_7_head(const TraceDatHeader& header, Version7Start& start, bool compressed, size_t padding) {
  Head h;
  ByteWriter o;
  o.data() = start.sections.data();
  h.cmdlines_at = start.cmdlines_at;
  const uint64_t options_at = o.size();
  o.patch(start.first_options_field, options_at);
  o.put(uint16_t{0});  // the options section: never compressed, its fields are rewritten in place
  o.put(uint16_t{0});
  o.put(uint32_t{0});
  const size_t options_size_field = o.size();
  o.put(uint64_t{0});
  const size_t options_payload = o.size();
  for (const auto& [option, at] : start.metadata) {
    o.put(option);
    o.put(uint32_t{8});
    o.put(at);
  }
  put_common_options(o, header, padding, h);
  o.put(kOptionCpuCount);
  o.put(uint32_t{4});
  o.put(static_cast<uint32_t>(header.cpus.size()));
  const std::string clock = selected_clock(header.trace_clock);
  const size_t buffer_size = 8 + 1 + clock.size() + 1 + 4 + 4 + header.cpus.size() * 20;
  o.put(uint16_t{kOptionBuffer});
  o.put(static_cast<uint32_t>(buffer_size));
  const size_t flyrecord_field = o.size();
  o.put(uint64_t{0});
  o.u8(0);  // "": the top-level buffer
  o.c_string(clock);
  o.put(header.page_size);
  o.put(static_cast<uint32_t>(header.cpus.size()));
  for (int cpu : header.cpus) {
    o.put(static_cast<uint32_t>(cpu));
    h.offset_fields.push_back(o.size());
    o.put(uint64_t{0});
    h.size_fields.push_back(o.size());
    o.put(uint64_t{0});
  }
  o.put(uint16_t{kOptionDone});
  o.put(uint32_t{8});
  o.put(uint64_t{0});  // no further options section
  o.patch(options_size_field, static_cast<uint64_t>(o.size() - options_payload));
  const uint64_t flyrecord_at = o.size();
  o.patch(flyrecord_field, flyrecord_at);
  o.put(uint16_t{kOptionBuffer});
  o.put(uint16_t{compressed ? kSectionFlagCompressed : uint16_t{0}});
  o.put(uint32_t{0});
  h.flyrecord_size_field = o.size();
  o.put(uint64_t{0});
  h.flyrecord_data_at = o.size();
  const uint64_t first_region = round_up(o.size(), header.page_size);
  for (size_t i = 0; i < header.cpus.size(); ++i) o.patch(h.offset_fields[i], first_region + i * header.first_region_room);
  h.bytes = o.take();
  return h;
}

}  // namespace

TraceDatWriter::TraceDatWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
TraceDatWriter::TraceDatWriter(TraceDatWriter&&) noexcept = default;
TraceDatWriter& TraceDatWriter::operator=(TraceDatWriter&&) noexcept = default;
TraceDatWriter::~TraceDatWriter() = default;

Result<TraceDatWriter> TraceDatWriter::begin(int fd, const TraceDatHeader& header) {
  if (header.version != 6 && header.version != 7)
    return Error{"trace.dat version " + std::to_string(header.version) + " cannot be written", 0, "use 6 or 7"};
  if (header.page_size < 64 || header.page_size % 64 != 0) return Error{"page size " + std::to_string(header.page_size) + " cannot be recorded"};
  if (header.first_region_room == 0 || header.first_region_room % header.page_size != 0)
    return Error{"a CPU's room in trace.dat must be a whole number of pages"};
  auto state = std::make_unique<State>();
  State& s = *state;
  s.fd = fd;
  s.page_size = header.page_size;
  if (header.compression == "zstd") {
    if (header.version != 7) return Error{"trace.dat version 6 has no compression", 0, "write version 7"};
    VPERF_TRY(s.zstd, Compressor::zstd());
  } else if (!header.compression.empty() && header.compression != "none") {
    return Error{"trace.dat compression '" + header.compression + "' is not one vperf writes", 0, "use zstd or none"};
  }
  VPERF_TRY(TracingDataPieces pieces, split_tracing_data(header.tracing_data));
  std::optional<Version7Start> v7;
  if (header.version == 7) {
    VPERF_TRY(v7, version_7_sections(header, pieces, s.zstd));
  }
  // The padding that keeps every size and offset field inside one page. Steps of 1: with
  // 8-byte fields a step of 4 never changes the table's offset modulo 4, and a table longer than
  // a page (256 CPUs and more) fits only at some offsets modulo 8.
  std::optional<Head> head;
  for (size_t padding = 0; padding < 4096 && !head; ++padding) {
    Head candidate;
    if (v7) {
      candidate = version_7_head(header, *v7, s.zstd.has_value(), padding);
    } else {
      VPERF_TRY(candidate, version_6_head(header, pieces, padding));
    }
    if (fields_within_pages(candidate)) head = std::move(candidate);
  }
  if (!head) return Error{"no layout of the trace.dat head keeps its fields within pages (too many CPUs?)"};
  VPERF_TRY(pwrite_all(fd, head->bytes.data(), head->bytes.size(), 0));
  s.head_end = head->bytes.size();
  s.cmdlines_at = head->cmdlines_at;
  s.cmdlines_room = header.cmdlines_room;
  s.flyrecord_size_field = head->flyrecord_size_field;
  s.flyrecord_data_at = head->flyrecord_data_at;
  const uint64_t first_region = round_up(s.head_end, s.page_size);
  for (size_t i = 0; i < header.cpus.size(); ++i) {
    State::Cpu c;
    c.cpu = header.cpus[i];
    c.offset_field = head->offset_fields[i];
    c.size_field = head->size_fields[i];
    c.stats_at = head->stats_at[i];
    c.stats_room = head->stats_room[i];
    c.start = first_region + i * header.first_region_room;
    c.room = header.first_region_room;
    if (s.zstd) {
      // The chunk count comes first; the size the table states leaves it out.
      const uint32_t none = 0;
      VPERF_TRY(pwrite_all(fd, &none, sizeof none, c.start));
      c.bytes = 4;
    }
    s.cpus.push_back(std::move(c));
  }
  s.tail = first_region + header.cpus.size() * header.first_region_room;
  return TraceDatWriter(std::move(state));
}

Result<void> TraceDatWriter::add_pages(size_t index, std::span<const uint8_t> pages) {
  State& s = *state_;
  State::Cpu& c = s.cpus.at(index);
  if (!s.zstd) {
    VPERF_TRY(s.append(c, pages));
    c.page_bytes += pages.size();
    return {};
  }
  c.waiting.insert(c.waiting.end(), pages.begin(), pages.end());
  return s.take_whole_chunks(c, false);
}

Result<void> TraceDatWriter::add_pages_from_pipe(size_t index, int pipe_fd, size_t bytes) {
  State& s = *state_;
  State::Cpu& c = s.cpus.at(index);
  if (s.zstd || !s.splice_works) {
    std::vector<uint8_t> pages(bytes);
    for (size_t got = 0; got < bytes;) {
      const ssize_t n = ::read(pipe_fd, pages.data() + got, bytes - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Error::from_errno("reading CPU " + std::to_string(c.cpu) + "'s pages", n == 0 ? EIO : errno);
      got += static_cast<size_t>(n);
    }
    return add_pages(index, pages);
  }
  VPERF_TRY(s.make_room(c, bytes));
  // Spliced straight into the region; only whole pages that landed are committed.
  size_t moved = 0;
  Result<void> done;
  while (moved < bytes) {
    loff_t at = static_cast<loff_t>(c.start + c.bytes + moved);
    const ssize_t n = ::splice(pipe_fd, nullptr, s.fd, &at, bytes - moved, SPLICE_F_MOVE);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EINVAL || errno == ENOSYS) && moved == 0) {
      s.splice_works = false;  // a file system that takes no splice: the pages go through memory
      return add_pages_from_pipe(index, pipe_fd, bytes);
    }
    if (n <= 0) {
      done = Error::from_errno("writing CPU " + std::to_string(c.cpu) + "'s pages to trace.dat", n == 0 ? EIO : errno);
      break;
    }
    moved += static_cast<size_t>(n);
  }
  const size_t whole = moved / s.page_size * s.page_size;
  if (whole > 0) {
    c.bytes += whole;
    c.page_bytes += whole;
    VPERF_TRY(s.commit_size(c));
  }
  return done;
}

Result<void> TraceDatWriter::flush() {
  State& s = *state_;
  if (s.zstd)
    for (State::Cpu& c : s.cpus) VPERF_TRY(s.take_whole_chunks(c, true));
  return {};
}

Result<void> TraceDatWriter::update_cmdlines(std::string_view text) {
  const std::string room = in_room(text, state_->cmdlines_room, '\n');
  return pwrite_all(state_->fd, room.data(), room.size(), state_->cmdlines_at);
}

Result<void> TraceDatWriter::update_stats(size_t index, std::string_view text) {
  const State::Cpu& c = state_->cpus.at(index);
  const std::string room = stats_in_room(text, c.stats_room);
  return pwrite_all(state_->fd, room.data(), room.size(), c.stats_at);
}

uint64_t TraceDatWriter::page_bytes(size_t index) const { return state_->cpus.at(index).page_bytes; }

Result<void> TraceDatWriter::finish() {
  State& s = *state_;
  Result<void> flushed = flush();
  // What a failed write left past each region's committed bytes holds disk and nothing else.
  for (const State::Cpu& c : s.cpus) punch(s.fd, c.start + c.bytes, c.room - std::min(c.room, c.bytes));
  // From here a region is its data: a move down may land in another's unused room.
  for (State::Cpu& c : s.cpus) c.room = c.bytes;
  auto overlaps = [](uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size) { return a < b + b_size && b < a + a_size; };
  Result<void> moved = flushed;
  uint64_t place = round_up(s.head_end, s.page_size);
  for (size_t i = 0; i < s.cpus.size() && moved; ++i) {
    State::Cpu& c = s.cpus[i];
    if (c.start != place) {
      // Whatever is in the way (a later CPU's data, or this one's own) goes past the end first.
      for (size_t j = i; j < s.cpus.size() && moved; ++j) {
        State::Cpu& other = s.cpus[j];
        if (other.bytes > 0 && overlaps(place, c.bytes, other.start, other.bytes)) {
          const uint64_t to = s.tail;
          s.tail = round_up(to + other.bytes, s.page_size);
          moved = s.move(other, to, s.tail - to);
        }
      }
      if (moved) moved = s.move(c, place, c.bytes);
    }
    place = round_up(c.start + c.bytes, s.page_size);
  }
  // The file ends at the end of the data furthest on (the last CPU's, once compacted).
  uint64_t end = s.head_end;
  for (const State::Cpu& c : s.cpus)
    if (c.bytes > 0) end = std::max(end, c.start + c.bytes);
  // A reader maps the file and holds a shared lock on it (TraceDat::open): cutting the file under
  // its mapping would end it with SIGBUS, so then the file keeps its size (the data after `end`
  // is unused, and the pages behind it were punched out above where they were not moved).
  if (::flock(s.fd, LOCK_EX | LOCK_NB) == 0) {
    if (::ftruncate(s.fd, static_cast<off_t>(end)) != 0 && moved) moved = Error::from_errno("truncating trace.dat");
    ::flock(s.fd, LOCK_UN);
  }
  if (s.flyrecord_size_field != 0) {
    const uint64_t size = end > s.flyrecord_data_at ? end - s.flyrecord_data_at : 0;
    if (Result<void> w = pwrite_all(s.fd, &size, sizeof size, s.flyrecord_size_field); !w && moved) moved = w;
  }
  return moved;
}


Result<TraceDat> TraceDat::open(const std::filesystem::path& path) {
  Result<ScopedFd> fd = open_regular_file(path);
  if (!fd) return fd.error();
  // Mapped, not read: the report walks each CPU's pages once and drops them behind it
  // (CpuCursor), so a large file costs the pages still to be read, not its size.
  // Shared while the mapping lives: a vperf ftrace record finishing this file meanwhile leaves
  // its size (TraceDatWriter::finish), so no page of the mapping is cut from under it.
  while (::flock(fd->get(), LOCK_SH) != 0)
    if (errno != EINTR) return Error::from_errno("lock " + path.string());
  Result<FileMapping> mapping = FileMapping::map(*fd, path.string());
  if (!mapping) return mapping.error();
  TraceDat file;
  file.mapping_ = std::move(mapping).value();
  file.locked_fd_ = std::move(fd).value();
  file.bytes_ = file.mapping_->bytes();
  if (Result<void> parsed = file.parse_bytes(true); !parsed)
    return Error{path.string() + ": " + parsed.error().message, parsed.error().errno_value, parsed.error().hint};
  // What parsing read (formats, kallsyms, cmdlines) is copied out by now: its pages go too.
  file.mapping_->release(0, file.bytes_.size());
  return file;
}

namespace {

constexpr uint16_t kSectionCompressed = 1;

std::string option_text(std::span<const uint8_t> data) {
  std::string text(reinterpret_cast<const char*>(data.data()), data.size());
  if (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}


// A version 7 file's decompressor, loaded the first time a compressed section is met.
//
// A block states its decompressed size, and nothing in the file backs that claim: it is held to
// what the algorithm can make of the block's bytes (zstd expands at most 32768-fold: a 3-byte
// RLE block header and one byte give 128 KiB; zlib's deflate at most 1032-fold), and the output
// is produced in steps as the stream yields it, never allocated at the stated size, so a lie
// costs what the block really holds. Anything else is one error line.
class Decompressor {
 public:
  static Result<Decompressor> for_algorithm(const std::string& name) {
    Decompressor d;
    d.name_ = name;
    if (name == "zstd") {
      VPERF_TRY(SharedLibrary library, SharedLibrary::open("libzstd.so.1", "install zstd's library: apt-get install libzstd1"));
      VPERF_TRY(library.bind("ZSTD_createDStream", d.zstd_create_));
      VPERF_TRY(library.bind("ZSTD_freeDStream", d.zstd_free_));
      VPERF_TRY(library.bind("ZSTD_initDStream", d.zstd_init_));
      VPERF_TRY(library.bind("ZSTD_decompressStream", d.zstd_stream_));
      VPERF_TRY(library.bind("ZSTD_isError", d.zstd_is_error_));
    } else if (name == "zlib") {
      VPERF_TRY(SharedLibrary library, SharedLibrary::open("libz.so.1", "install zlib: apt-get install zlib1g"));
      VPERF_TRY(library.bind("inflateInit_", d.zlib_init_));
      VPERF_TRY(library.bind("inflate", d.zlib_inflate_));
      VPERF_TRY(library.bind("inflateEnd", d.zlib_end_));
      VPERF_TRY(library.bind("zlibVersion", d.zlib_version_));
    } else if (name != "none") {
      return Error{"trace.dat is compressed with '" + name + "', which vperf cannot read", 0,
                   "convert it: trace-cmd convert --compression none -i FILE -o FILE2"};
    }
    return d;
  }

  // The most `packed` bytes can honestly decompress to.
  uint64_t most_from(uint64_t packed) const { return packed * (zstd_stream_ ? 32768 : 1032); }

  // `in` decompressed, appended to `out`; it must give exactly `expected` bytes.
  Result<void> decompress(std::span<const uint8_t> in, uint32_t expected, std::vector<uint8_t>& out) const {
    if (!zstd_stream_ && !zlib_inflate_) return Error{"trace.dat: a section is marked compressed in a file that names no compression"};
    if (expected > most_from(in.size()))
      return Error{"trace.dat: a " + name_ + " block of " + std::to_string(in.size()) + " bytes claims to hold " + std::to_string(expected) +
                       " bytes, more than " + name_ + " can make of it",
                   0, "the file is damaged; record it again"};
    const size_t start = out.size();
    constexpr size_t kStep = size_t{1} << 20;
    // Room is added a step at a time, and never past the stated size plus one byte (to notice
    // a block that holds more than it says).
    auto grow = [&](size_t produced) {
      const size_t want = std::min<size_t>(produced + kStep, size_t{expected} + 1);
      out.resize(start + want);
    };
    bool ended = false;
    size_t produced = 0;
    if (zstd_stream_) {
      std::unique_ptr<ZSTD_DStream, decltype(zstd_free_)> stream(zstd_create_(), zstd_free_);
      if (!stream || zstd_is_error_(zstd_init_(stream.get()))) return Error{"trace.dat: zstd could not start decompressing"};
      ZSTD_inBuffer input{in.data(), in.size(), 0};
      for (;;) {
        grow(produced);
        ZSTD_outBuffer output{out.data() + start, out.size() - start, produced};
        const size_t left = zstd_stream_(stream.get(), &output, &input);
        if (zstd_is_error_(left)) break;
        const bool progressed = output.pos > produced;
        produced = output.pos;
        if (left == 0) {
          ended = true;
          break;
        }
        if (produced > expected || (!progressed && input.pos == input.size)) break;
      }
    } else {
      z_stream stream{};
      if (zlib_init_(&stream, zlib_version_(), static_cast<int>(sizeof stream)) != Z_OK) return Error{"trace.dat: zlib could not start decompressing"};
      stream.next_in = const_cast<Bytef*>(in.data());
      stream.avail_in = static_cast<uInt>(in.size());
      for (;;) {
        grow(produced);
        stream.next_out = out.data() + start + produced;
        stream.avail_out = static_cast<uInt>(out.size() - start - produced);
        const int status = zlib_inflate_(&stream, Z_NO_FLUSH);
        const size_t now = static_cast<size_t>(stream.total_out);
        const bool progressed = now > produced;
        produced = now;
        if (status == Z_STREAM_END) {
          ended = true;
          break;
        }
        if ((status != Z_OK && status != Z_BUF_ERROR) || produced > expected || !progressed) break;
      }
      zlib_end_(&stream);
    }
    if (!ended || produced != expected) {
      out.resize(start);
      return Error{"trace.dat: a " + name_ + " block does not decompress to its stated " + std::to_string(expected) + " bytes", 0,
                   "the file is damaged; record it again"};
    }
    out.resize(start + produced);
    return {};
  }

 private:
  std::string name_;
  decltype(&::ZSTD_createDStream) zstd_create_ = nullptr;
  decltype(&::ZSTD_freeDStream) zstd_free_ = nullptr;
  decltype(&::ZSTD_initDStream) zstd_init_ = nullptr;
  decltype(&::ZSTD_decompressStream) zstd_stream_ = nullptr;
  decltype(&::ZSTD_isError) zstd_is_error_ = nullptr;
  decltype(&::inflateInit_) zlib_init_ = nullptr;
  decltype(&::inflate) zlib_inflate_ = nullptr;
  decltype(&::inflateEnd) zlib_end_ = nullptr;
  decltype(&::zlibVersion) zlib_version_ = nullptr;
};

}  // namespace

Result<TraceDat> TraceDat::parse(std::vector<uint8_t> bytes, bool plugins) {
  TraceDat file;
  file.owned_ = std::move(bytes);
  file.bytes_ = file.owned_;
  VPERF_TRY(file.parse_bytes(plugins));
  return file;
}

Result<void> TraceDat::parse_bytes(bool plugins) {
  TraceDat& file = *this;
  ByteReader head(file.bytes_);
  Result<std::span<const uint8_t>> magic = head.bytes(10, "trace.dat magic");
  if (!magic) return magic.error();
  if (std::memcmp(magic->data(), "\x17\x08\x44tracing", 10) != 0) return Error{"not a trace.dat (no \\027\\010Dtracing magic)"};
  Result<std::string> version = head.c_string("trace.dat version");
  if (!version) return version.error();
  if (*version == "6") {
    file.version_ = 6;
    size_t consumed = 0;
    Result<TracepointDecoder> decoder =
        TracepointDecoder::parse(file.bytes_,
                                 TracingDataOptions{.kallsyms = true, .plugins = plugins, .whole_comms = true, .bytes_outlive_decoder = true},
                                 &consumed);
    if (!decoder) return decoder.error();
    file.decoder_.emplace(std::move(decoder).value());
    VPERF_TRY(file.parse_v6(consumed));
  } else if (*version == "7") {
    file.version_ = 7;
    VPERF_TRY(head.skip(6, "trace.dat endianness, long size and page size"));
    VPERF_TRY(file.parse_v7(head.offset(), plugins));
  } else {
    return Error{"trace.dat version " + *version + " is not readable here (versions 6 and 7 are)"};
  }
  tep_handle* tep = file.decoder_->handle();
  tep_clear_flag(tep, TEP_NSEC_OUTPUT);  // trace-cmd prints seconds.micros
  file.page_size_ = static_cast<uint32_t>(tep_get_page_size(tep));
  file.long_size_ = tep_get_long_size(tep);
  // The kernel's ring-buffer pages (sub-buffers) are a power of two in size; so is what its
  // header_page format describes (the data field's offset + size). Where the stated size is not
  // a power of two and header_page gives one, the file is read with that one and says so
  // (trace-cmd reads a page of the stated size, so it shows each CPU's first page and nothing
  // after it); without one to trust, the file is refused.
  auto power_of_two = [](uint64_t n) { return n >= 64 && n <= (1u << 24) && (n & (n - 1)) == 0; };
  if (!power_of_two(file.page_size_)) {
    const int described = tep_get_sub_buffer_size(tep);
    if (described > 0 && power_of_two(static_cast<uint64_t>(described))) {
      file.warnings_.push_back("the file states a page size of " + std::to_string(file.page_size_) +
                               ", not a power of two; read with " + std::to_string(described) + ", the size its header_page describes");
      file.page_size_ = static_cast<uint32_t>(described);
      tep_set_page_size(tep, described);
    } else {
      return Error{"trace.dat: implausible page size " + std::to_string(file.page_size_) + " (the kernel's are powers of two)", 0,
                   "the file is damaged; record it again"};
    }
  }
  if (file.cpu_count_ == 0)
    for (const Buffer& buffer : file.buffers_)
      for (const CpuData& cpu : buffer.cpus) file.cpu_count_ = std::max(file.cpu_count_, cpu.cpu + 1);
  return {};
}

Result<void> TraceDat::parse_v6(size_t after_preamble) {
  ByteReader r(bytes_);
  VPERF_TRY(r.seek(after_preamble));
  Result<uint32_t> cpus = r.u32("CPU count");
  if (!cpus) return cpus.error();
  if (*cpus > 8192) return Error{"trace.dat: implausible CPU count " + std::to_string(*cpus)};
  cpu_count_ = static_cast<int>(*cpus);
  std::vector<std::pair<std::string, uint64_t>> instance_tables;
  Result<std::span<const uint8_t>> kind = r.bytes(10, "options or flyrecord");
  if (!kind) return kind.error();
  std::string_view tag(reinterpret_cast<const char*>(kind->data()), 10);
  if (tag.starts_with("options")) {
    for (;;) {
      Result<uint16_t> id = r.u16("option id");
      if (!id) return id.error();
      if (*id == kOptionDone) break;
      Result<uint32_t> size = r.u32("option size");
      if (!size) return size.error();
      Result<std::span<const uint8_t>> data = r.bytes(*size, "option");
      if (!data) return data.error();
      if (*id == kOptionTraceClock) clock_ = selected_clock(option_text(*data));
      if (*id == kOptionUname) uname_ = option_text(*data);
      if (*id == kOptionCpuStat) cpu_stats_.push_back(option_text(*data));
      if (*id == kOptionBuffer) {
        // An instance's buffer: u64 offset of its own "flyrecord" table, then its name.
        ByteReader d(*data);
        VPERF_TRY(uint64_t offset, d.u64("buffer offset"));
        VPERF_TRY(std::string name, d.c_string("buffer name"));
        instance_tables.emplace_back(std::move(name), offset);
      }
    }
    kind = r.bytes(10, "flyrecord");
    if (!kind) return kind.error();
    tag = std::string_view(reinterpret_cast<const char*>(kind->data()), 10);
  }
  if (tag.starts_with("latency")) return Error{"trace.dat holds a latency trace (text), not per-CPU data: it is not readable here"};
  if (!tag.starts_with("flyrecord")) return Error{"trace.dat: expected the flyrecord section at offset " + std::to_string(r.offset() - 10)};
  VPERF_TRY(read_flyrecord_table(r, *cpus, ""));
  for (const auto& [name, offset] : instance_tables) {
    ByteReader t(bytes_);
    if (offset > bytes_.size()) return Error{"trace.dat: the buffer '" + name + "' points past the end of the file"};
    VPERF_TRY(t.seek(static_cast<size_t>(offset)));
    VPERF_TRY(std::span<const uint8_t> table_tag, t.bytes(10, "buffer flyrecord"));
    if (std::memcmp(table_tag.data(), "flyrecord", 9) != 0) return Error{"trace.dat: the buffer '" + name + "' has no flyrecord table"};
    VPERF_TRY(read_flyrecord_table(t, *cpus, name));
  }
  return {};
}

Result<void> TraceDat::read_flyrecord_table(ByteReader& r, uint32_t cpus, const std::string& name) {
  Buffer top;
  top.name = name;
  for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
    Result<uint64_t> offset = r.u64("CPU data offset");
    if (!offset) return offset.error();
    Result<uint64_t> size = r.u64("CPU data size");
    if (!size) return size.error();
    if (*size != 0 && (*offset > bytes_.size() || *size > bytes_.size() - *offset))
      return Error{"trace.dat is truncated: CPU " + std::to_string(cpu) + "'s data ends at " + std::to_string(*offset + *size) +
                       ", the file at " + std::to_string(bytes_.size()),
                   0, "the recording was cut short; record again"};
    top.cpus.push_back({static_cast<int>(cpu), std::span<const uint8_t>(bytes_.data() + (*size ? *offset : 0), *size)});
  }
  buffers_.push_back(std::move(top));
  return {};
}

// Version 7: sections found through a chain of options sections (each may be compressed); the
// metadata sections they point at, laid end to end, are a version 6 preamble's body; each
// buffer's per-CPU data is raw pages or zstd chunks.
struct TraceDat::V7Parse {
  struct BufferOption {
    std::string name;
    uint64_t section = 0;
    std::vector<std::tuple<int, uint64_t, uint64_t>> cpus;  // cpu, offset, size
  };

  TraceDat& file;
  std::string algorithm;
  std::optional<Decompressor> decompressor;
  std::vector<BufferOption> buffers;
  std::map<uint16_t, uint64_t> metadata;  // section id -> offset

  Result<Decompressor*> decompressor_of_file() {
    if (!decompressor) {
      VPERF_TRY(decompressor, Decompressor::for_algorithm(algorithm));
    }
    return &*decompressor;
  }

  // A section's payload at `offset`: its header read, its data decompressed if it says so.
  Result<std::span<const uint8_t>> section(uint64_t offset, uint16_t& id) {
    ByteReader s(file.bytes_);
    if (offset > file.bytes_.size()) return Error{"trace.dat: a section offset points past the end of the file"};
    VPERF_TRY(s.seek(static_cast<size_t>(offset)));
    VPERF_TRY(id, s.u16("section id"));
    VPERF_TRY(uint16_t flags, s.u16("section flags"));
    VPERF_TRY(s.skip(4, "section description"));
    VPERF_TRY(uint64_t size, s.u64("section size"));
    if (size > s.remaining()) return Error{"trace.dat is truncated: a section runs past the end of the file"};
    if (!(flags & kSectionCompressed)) return s.bytes(static_cast<size_t>(size), "section");
    VPERF_TRY(uint32_t packed, s.u32("compressed size"));
    VPERF_TRY(uint32_t unpacked, s.u32("uncompressed size"));
    VPERF_TRY(std::span<const uint8_t> data, s.bytes(packed, "compressed section"));
    VPERF_TRY(Decompressor * d, decompressor_of_file());
    std::vector<uint8_t> plain;
    VPERF_TRY(d->decompress(data, unpacked, plain));
    file.decompressed_.push_back(std::move(plain));
    return std::span<const uint8_t>(file.decompressed_.back());
  }

  // The chain of options sections from `first`: each option kept where it belongs.
  Result<void> read_options(uint64_t first) {
    std::set<uint64_t> seen;
    for (uint64_t at = first; at != 0;) {
      if (!seen.insert(at).second) return Error{"trace.dat: its options sections form a loop"};
      uint16_t id = 0;
      VPERF_TRY(std::span<const uint8_t> payload, section(at, id));
      if (id != 0) return Error{"trace.dat: expected an options section at offset " + std::to_string(at)};
      ByteReader o(payload);
      at = 0;
      while (o.remaining() > 0) {
        VPERF_TRY(uint16_t option, o.u16("option id"));
        VPERF_TRY(uint32_t size, o.u32("option size"));
        VPERF_TRY(std::span<const uint8_t> data, o.bytes(size, "option"));
        if (option == kOptionDone) {
          ByteReader d(data);
          VPERF_TRY(at, d.u64("next options offset"));
          break;
        }
        VPERF_TRY(read_option(option, data));
      }
    }
    return {};
  }

  Result<void> read_option(uint16_t option, std::span<const uint8_t> data) {
    ByteReader d(data);
    if (option == kOptionTraceClock) file.clock_ = selected_clock(option_text(data));
    if (option == kOptionUname) file.uname_ = option_text(data);
    if (option == kOptionCpuStat) file.cpu_stats_.push_back(option_text(data));
    if (option == kOptionCpuCount) {
      VPERF_TRY(uint32_t count, d.u32("CPU count"));
      file.cpu_count_ = static_cast<int>(std::min<uint32_t>(count, 8192));
    }
    if (option >= 16 && option <= 21) {
      VPERF_TRY(uint64_t offset, d.u64("section offset"));
      metadata[option] = offset;
    }
    if (option != kOptionBuffer) return {};
    BufferOption b;
    VPERF_TRY(b.section, d.u64("buffer section offset"));
    VPERF_TRY(b.name, d.c_string("buffer name"));
    VPERF_TRY(std::string clock, d.c_string("buffer clock"));
    if (b.name.empty() && !clock.empty()) file.clock_ = clock;
    VPERF_TRY(d.skip(4, "buffer page size"));
    VPERF_TRY(uint32_t count, d.u32("buffer CPU count"));
    for (uint32_t i = 0; i < count; ++i) {
      VPERF_TRY(uint32_t cpu, d.u32("buffer CPU"));
      VPERF_TRY(uint64_t offset, d.u64("buffer CPU offset"));
      VPERF_TRY(uint64_t cpu_size, d.u64("buffer CPU size"));
      if (cpu > 8192) return Error{"trace.dat: implausible CPU number " + std::to_string(cpu)};
      b.cpus.emplace_back(static_cast<int>(cpu), offset, cpu_size);
    }
    buffers.push_back(std::move(b));
    return {};
  }

  // The metadata sections, laid end to end, are a version 6 preamble's body: the decoder reads
  // it as it reads version 6's.
  Result<void> load_metadata(size_t after_page_size, bool plugins) {
    std::vector<uint8_t> preamble(file.bytes_.begin(), file.bytes_.begin() + static_cast<std::ptrdiff_t>(after_page_size));
    preamble[10] = '6';  // "7\0" -> "6\0": the same length
    auto append_section = [&](uint16_t id, std::span<const uint8_t> empty) -> Result<void> {
      auto it = metadata.find(id);
      if (it == metadata.end()) {
        preamble.insert(preamble.end(), empty.begin(), empty.end());
        return {};
      }
      uint16_t found = 0;
      VPERF_TRY(std::span<const uint8_t> payload, section(it->second, found));
      if (found != id) return Error{"trace.dat: option " + std::to_string(id) + " points at a section of another kind"};
      preamble.insert(preamble.end(), payload.begin(), payload.end());
      return {};
    };
    static constexpr uint8_t kNone32[4] = {}, kNone64[8] = {};
    static constexpr uint8_t kNoHeaders[] = "header_page\0\0\0\0\0\0\0\0\0header_event\0\0\0\0\0\0\0\0";
    VPERF_TRY(append_section(16, std::span<const uint8_t>(kNoHeaders, sizeof kNoHeaders - 1)));
    VPERF_TRY(append_section(17, kNone32));
    VPERF_TRY(append_section(18, kNone32));
    VPERF_TRY(append_section(19, kNone32));
    VPERF_TRY(append_section(20, kNone32));
    VPERF_TRY(append_section(21, kNone64));
    VPERF_TRY(TracepointDecoder decoder,
              TracepointDecoder::parse(preamble, TracingDataOptions{.kallsyms = true, .plugins = plugins, .whole_comms = true}));
    file.decoder_.emplace(std::move(decoder));
    return {};
  }

  Result<void> load_buffer(const BufferOption& b) {
    ByteReader s(file.bytes_);
    if (b.section > file.bytes_.size()) return Error{"trace.dat: a buffer section offset points past the end of the file"};
    VPERF_TRY(s.seek(static_cast<size_t>(b.section)));
    VPERF_TRY(s.skip(2, "buffer section id"));
    VPERF_TRY(uint16_t flags, s.u16("buffer section flags"));
    Buffer buffer;
    buffer.name = b.name;
    for (const auto& [cpu, offset, size] : b.cpus) {
      if (size == 0) continue;
      if (offset > file.bytes_.size() || size > file.bytes_.size() - offset)
        return Error{"trace.dat is truncated: CPU " + std::to_string(cpu) + "'s data runs past the end of the file", 0,
                     "the recording was cut short; record again"};
      std::span<const uint8_t> data(file.bytes_.data() + offset, static_cast<size_t>(size));
      if (flags & kSectionCompressed) {
        // The stated size leaves out the chunk count in front (trace-cmd 3.1 writes it so).
        data = file.bytes_.subspan(static_cast<size_t>(offset), static_cast<size_t>(std::min<uint64_t>(size + 4, file.bytes_.size() - offset)));
        VPERF_TRY(data, decompress_chunks(data, cpu, b.name));
      }
      buffer.cpus.push_back({cpu, data});
    }
    file.buffers_.push_back(std::move(buffer));
    return {};
  }

  // Chunks: u32 count, then {u32 packed, u32 unpacked, data} each, unpacked end to end. A chunk
  // that cannot be read ends its CPU's data there: the chunks before it are kept, and the file
  // is incomplete (trace-cmd likewise shows what came before).
  Result<std::span<const uint8_t>> decompress_chunks(std::span<const uint8_t> data, int cpu, const std::string& buffer) {
    ByteReader c(data);
    VPERF_TRY(uint32_t chunks, c.u32("chunk count"));
    VPERF_TRY(Decompressor * d, decompressor_of_file());
    std::vector<uint8_t> pages;
    for (uint32_t i = 0; i < chunks; ++i) {
      Result<void> chunk = [&]() -> Result<void> {
        VPERF_TRY(uint32_t packed, c.u32("chunk compressed size"));
        VPERF_TRY(uint32_t unpacked, c.u32("chunk size"));
        VPERF_TRY(std::span<const uint8_t> bytes, c.bytes(packed, "chunk"));
        return d->decompress(bytes, unpacked, pages);
      }();
      if (!chunk) {
        file.damage_.push_back("CPU " + std::to_string(cpu) + (buffer.empty() ? "" : " of buffer '" + buffer + "'") + ": chunk " +
                               std::to_string(i + 1) + " of " + std::to_string(chunks) + " is unreadable (" + chunk.error().message +
                               "); its events from there on are left out");
        break;
      }
    }
    // decompressed_ grows while spans into it are held; a vector of vectors keeps each inner
    // vector's storage in place when it reallocates (the inner vectors are moved, not copied).
    file.decompressed_.push_back(std::move(pages));
    return std::span<const uint8_t>(file.decompressed_.back());
  }
};

Result<void> TraceDat::parse_v7(size_t after_page_size, bool plugins) {
  ByteReader r(bytes_);
  VPERF_TRY(r.seek(after_page_size));
  V7Parse parse{*this, {}, {}, {}, {}};
  VPERF_TRY(parse.algorithm, r.c_string("compression name"));
  VPERF_TRY(r.c_string("compression version"));
  VPERF_TRY(uint64_t options_at, r.u64("first options section offset"));
  VPERF_TRY(parse.read_options(options_at));
  VPERF_TRY(parse.load_metadata(after_page_size, plugins));
  for (const V7Parse::BufferOption& b : parse.buffers) VPERF_TRY(parse.load_buffer(b));
  return {};
}

std::vector<std::string> TraceDat::buffer_names() const {
  std::vector<std::string> names;
  for (const Buffer& buffer : buffers_) names.push_back(buffer.name);
  return names;
}

bool TraceDat::timestamps_in_ns() const { return clock_ != "counter" && clock_ != "x86-tsc"; }

std::vector<uint64_t> TraceDat::lost_by_cpu() const {
  std::vector<uint64_t> lost;
  for (const std::string& stats : cpu_stats_) lost.push_back(events_lost_in_cpu_stats(stats));
  return lost;
}

namespace {

struct KbufferDeleter {
  void operator()(kbuffer* k) const { kbuffer_free(k); }
};

// One CPU's events, page by page. Each page is copied into a zeroed buffer with room to spare,
// so kbuffer never reads outside memory vperf owns, whatever the page says. A page that cannot
// be read is skipped, counted and named (the first one), and reading goes on at the next.
class CpuCursor {
 public:
  // `mapping`: the file's mapping when `data` lies in it (the pages read are then dropped from
  // memory behind the cursor), else nullptr.
  CpuCursor(int buffer, int cpu, std::span<const uint8_t> data, uint32_t page_size, int long_size, const FileMapping* mapping)
      : buffer_(buffer),
        cpu_(cpu), data_(data), page_size_(page_size), long_size_(long_size), page_(2 * static_cast<size_t>(page_size)),
        mapping_(mapping), data_offset_(mapping ? static_cast<uint64_t>(data.data() - mapping->bytes().data()) : 0) {
    kbuf_.reset(kbuffer_alloc(long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4, KBUFFER_ENDIAN_LITTLE));
    if (const size_t tail = data_.size() % page_size_; tail != 0)
      damaged("its last " + std::to_string(tail) + " bytes are not a whole " + std::to_string(page_size_) + "-byte page");
  }

  // Moves to the next event; false at the end.
  bool advance() {
    if (!kbuf_) return false;
    if (loaded_) {
      current_ = kbuffer_next_event(kbuf_.get(), &timestamp_);
      if (current_) {
        if (fill()) return true;
        loaded_ = false;  // the rest of this page is not to be trusted
      }
    }
    while (next_page_ * page_size_ + page_size_ <= data_.size()) {
      std::fill(page_.begin(), page_.end(), 0);
      std::memcpy(page_.data(), data_.data() + next_page_ * page_size_, page_size_);
      ++next_page_;
      release_read_pages();
      loaded_ = false;
      const size_t header = 8 + static_cast<size_t>(long_size_);
      uint64_t commit = 0;
      std::memcpy(&commit, page_.data() + 8, static_cast<size_t>(long_size_));
      const uint64_t used = commit & kCommitMask;
      if (used + header + ((commit & kMissedStored) ? static_cast<size_t>(long_size_) : 0) > page_size_) {
        damaged("page " + std::to_string(next_page_ - 1) + " claims " + std::to_string(used) + " bytes of data in a " +
                std::to_string(page_size_) + "-byte page");
        continue;
      }
      if (kbuffer_load_subbuffer(kbuf_.get(), page_.data()) < 0) {
        damaged("page " + std::to_string(next_page_ - 1) + " does not load");
        continue;
      }
      loaded_ = true;
      // A page with no events can follow a loss too: the loss waits for the next event.
      if (const long long missed = kbuffer_missed_events(kbuf_.get()); missed != 0)
        missed_ = missed_ < 0 || missed < 0 ? -1 : missed_ + missed;
      current_ = kbuffer_read_event(kbuf_.get(), &timestamp_);
      if (current_ && fill()) return true;
      loaded_ = false;
    }
    return false;
  }

  const TraceDatEvent& event() const { return event_; }
  // Once advance() returned false: the loss its last pages reported after its last event (no
  // event followed to carry it); 0 when none.
  long long lost_after_last_event() const { return missed_; }
  int buffer() const { return buffer_; }
  int cpu() const { return cpu_; }
  // The first damaged page, and how many there were; empty when none.
  std::string error() const {
    if (damaged_ == 0) return "";
    return "CPU " + std::to_string(cpu_) + ": " + first_damage_ + (damaged_ > 1 ? " (and " + std::to_string(damaged_ - 1) + " more damaged pages)" : "");
  }

 private:
  void damaged(std::string what) {
    if (damaged_++ == 0) first_damage_ = std::move(what);
  }

  // The file's pages this cursor has copied out are dropped from memory, 1 MiB at a time.
  void release_read_pages() {
    const uint64_t read = next_page_ * page_size_;
    if (!mapping_ || read < released_ + (uint64_t{1} << 20)) return;
    mapping_->release(data_offset_ + released_, data_offset_ + read);
    released_ = read;
  }

  bool fill() {
    const int size = kbuffer_event_size(kbuf_.get());
    const auto* at = static_cast<const uint8_t*>(current_);
    if (size <= 0 || at < page_.data() || at + size > page_.data() + page_size_) {
      damaged("an event overruns page " + std::to_string(next_page_ - 1));
      return false;
    }
    event_.buffer = buffer_;
    event_.cpu = cpu_;
    event_.timestamp = timestamp_;
    event_.data = std::span<const uint8_t>(at, static_cast<size_t>(size));
    event_.missed_before = missed_;
    missed_ = 0;  // a page's loss is reported before its first event only
    return true;
  }

  int buffer_;
  int cpu_;
  std::span<const uint8_t> data_;
  uint32_t page_size_;
  int long_size_;
  std::vector<uint8_t> page_;
  std::unique_ptr<kbuffer, KbufferDeleter> kbuf_;
  size_t next_page_ = 0;
  bool loaded_ = false;
  void* current_ = nullptr;
  unsigned long long timestamp_ = 0;
  long long missed_ = 0;
  TraceDatEvent event_;
  uint64_t damaged_ = 0;
  std::string first_damage_;
  const FileMapping* mapping_;
  uint64_t data_offset_;    // of data_ in the mapping
  uint64_t released_ = 0;  // data_'s bytes below this were dropped from memory
};

}  // namespace

Result<void> TraceDat::for_each_event(const std::function<bool(const TraceDatEvent&)>& visit,
                                      const std::function<void(int buffer, int cpu, long long lost)>& lost_at_end) const {
  std::vector<std::unique_ptr<CpuCursor>> cursors;
  std::vector<bool> live;
  for (size_t b = 0; b < buffers_.size(); ++b)
    for (const CpuData& cpu : buffers_[b].cpus) {
      const bool mapped = mapping_ && cpu.pages.data() >= bytes_.data() && cpu.pages.data() < bytes_.data() + bytes_.size();
      cursors.push_back(std::make_unique<CpuCursor>(static_cast<int>(b), cpu.cpu, cpu.pages, page_size_, long_size_,
                                                    mapped ? &*mapping_ : nullptr));
      live.push_back(cursors.back()->advance());
    }
  for (;;) {
    int next = -1;
    for (size_t i = 0; i < cursors.size(); ++i)
      if (live[i] && (next < 0 || cursors[i]->event().timestamp < cursors[static_cast<size_t>(next)]->event().timestamp))
        next = static_cast<int>(i);
    if (next < 0) break;
    if (!visit(cursors[static_cast<size_t>(next)]->event())) return {};
    live[static_cast<size_t>(next)] = cursors[static_cast<size_t>(next)]->advance();
  }
  if (lost_at_end)
    for (const auto& cursor : cursors)
      if (const long long lost = cursor->lost_after_last_event(); lost != 0) lost_at_end(cursor->buffer(), cursor->cpu(), lost);
  std::string damage;
  for (const auto& cursor : cursors)
    if (const std::string error = cursor->error(); !error.empty()) damage += (damage.empty() ? "" : "; ") + error;
  if (!damage.empty()) return Error{"trace.dat: damaged pages were skipped: " + damage, 0, "the file is damaged; record it again"};
  return {};
}


namespace {
// Records made ready for libtraceevent: each copied with zeros after it (padded_copy), checked to
// hold the common fields it reads the type and pid from, and its event found.
class RecordPreparer {
 public:
  explicit RecordPreparer(tep_handle* tep) : common_end_(common_fields_end(tep)) {}

  // The record to print, or nullptr when it is too short to be typed (counted in `summary`).
  tep_record* prepare(const TraceDatEvent& event, TraceReportSummary& summary) {
    bytes_ = padded_copy(event.data, scratch_);
    if (bytes_.size() < common_end_) {
      ++summary.short_records;
      return nullptr;
    }
    record_ = tep_record{};
    record_.ts = event.timestamp;
    record_.cpu = event.cpu;
    record_.size = static_cast<int>(bytes_.size());
    record_.data = const_cast<uint8_t*>(bytes_.data());  // libtraceevent only reads it
    record_.missed_events = event.missed_before;
    return &record_;
  }
  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  size_t common_end_;
  std::vector<uint8_t> scratch_;
  std::span<const uint8_t> bytes_;
  tep_record record_{};
};

std::string event_label(const tep_event* format) {
  return std::string(format->system ? format->system : "?") + ":" + (format->name ? format->name : "?");
}
}  // namespace

namespace {

// printf's %*d and %-*d (and %0*d with zero_padded) into `out`, without parsing a format.
void append_int(std::string& out, long long value, int width, bool left = false, bool zero_padded = false) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;  // 24 bytes hold any long long
  std::string_view text(digits, static_cast<size_t>(end - digits));
  const size_t pad = static_cast<size_t>(width) > text.size() ? static_cast<size_t>(width) - text.size() : 0;
  if (zero_padded) {
    if (text.starts_with('-')) {
      out += '-';
      text.remove_prefix(1);
    }
    out.append(pad, '0');
    out += text;
  } else if (left) {
    out += text;
    out.append(pad, ' ');
  } else {
    out.append(pad, ' ');
    out += text;
  }
}

void append_unsigned(std::string& out, unsigned long long value, int width, bool zero_padded = false) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;
  const size_t length = static_cast<size_t>(end - digits);
  if (static_cast<size_t>(width) > length) out.append(static_cast<size_t>(width) - length, zero_padded ? '0' : ' ');
  out.append(digits, length);
}

// A line's head as libtraceevent 1.7 prints trace-cmd's "%16s-%-5d [%03d] %6.1000d:" (or, for
// counter clocks, "%16s-%-5d [%03d]%12d:"): comm, pid, CPU, then the time rounded to the
// microsecond as seconds.micros, even under a second (or the clock's raw ticks).
// Written here rather than through tep_print_event, which parses its format on every call: that
// was half of a report's time.
void append_line_head(std::string& out, tep_handle* tep, const tep_record& record, bool in_ns) {
  const int pid = tep_data_pid(tep, const_cast<tep_record*>(&record));
  const char* comm = tep_data_comm_from_pid(tep, pid);
  const size_t comm_length = std::strlen(comm);
  if (comm_length < 16) out.append(16 - comm_length, ' ');
  out.append(comm, comm_length);
  out += '-';
  append_int(out, pid, 5, true);
  out += " [";
  append_int(out, record.cpu, 3, false, true);
  out += ']';
  if (in_ns) {
    out += ' ';
    const unsigned long long micros = (record.ts + 500) / 1000;
    append_unsigned(out, micros / 1000000, 5);
    out += '.';
    append_unsigned(out, micros % 1000000, 6, true);
  } else {
    append_unsigned(out, record.ts, 12);
  }
  out += ':';
}

}  // namespace

Result<TraceReportSummary> print_trace_report(const TraceDat& file, const std::function<void(std::string_view line)>& out) {
  TraceReportSummary summary;
  std::map<std::pair<int, int>, uint64_t> last_kept;  // (buffer, cpu) -> timestamp
  out("cpus=" + std::to_string(file.cpu_count()));
  tep_handle* tep = file.decoder().handle();
  // With instance buffers, trace-cmd puts each line's buffer name first, padded to the longest
  // ("tx: "), and blanks for the top level's.
  const std::vector<std::string> names = file.buffer_names();
  size_t widest = 0;
  bool instances = false;
  for (const std::string& name : names) {
    widest = std::max(widest, name.size());
    instances = instances || !name.empty();
  }
  const bool in_ns = file.timestamps_in_ns();
  trace_seq s;
  trace_seq_init(&s);
  RecordPreparer preparer(tep);
  // A record's kernel symbols are loaded before its event's first text, and the texts of events
  // that print none do not change when they are: kept texts stay right.
  PrintedTexts printed;
  std::string line;
  static constexpr size_t kNameWidth = 20;  // event names are padded to it
  Result<void> walked = file.for_each_event([&](const TraceDatEvent& event) {
    ++summary.events;
    uint64_t& last = last_kept[{event.buffer, event.cpu}];
    if (event.missed_before != 0) summary.losses.push_back({event.cpu, last, event.timestamp, event.missed_before});
    last = event.timestamp;
    tep_record* record = preparer.prepare(event, summary);
    if (!record) return true;
    line.clear();
    if (instances) {
      const std::string& name = names[static_cast<size_t>(event.buffer)];
      line.append(widest - std::min(widest, name.size()), ' ');
      line += name;
      line += name.empty() ? "  " : ": ";
    }
    if (event.missed_before != 0) {
      line += "CPU:";
      append_int(line, event.cpu, 0);
      if (event.missed_before > 0) {
        line += " [";
        append_int(line, event.missed_before, 0);
        line += " EVENTS DROPPED]\n";
      } else {
        line += " [EVENTS DROPPED]\n";
      }
    }
    append_line_head(line, tep, *record, in_ns);
    tep_event* format = tep_find_event_by_record(tep, record);
    const std::string_view name = format && format->name ? format->name : "(NULL)";
    line += ' ';
    line += name;
    line += ": ";
    if (name.size() < kNameWidth) line.append(kNameWidth - name.size(), ' ');
    // A text kept for the same bytes passed print_hazard then, and reads as it did.
    const bool repeatable = format && prints_from_record_alone(format);
    const std::string* known = repeatable ? printed.find(preparer.bytes()) : nullptr;
    if (!format) {
      ++summary.unknown_events;
      line += "[UNKNOWN EVENT]";
    } else if (known) {
      line += *known;
    } else if (std::optional<std::string> hazard = print_hazard(format, preparer.bytes())) {
      ++summary.printed_from_fields[event_label(format) + ": " + *hazard];
      line += "[UNSAFE FORMAT]";
      append_raw_fields(format, preparer.bytes(), line);
    } else if (format->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_PRINTRAW)) {
      // libtraceevent's own field printer trusts the offsets; vperf's reads inside the record.
      if (format->flags & TEP_EVENT_FL_FAILED) line += "[FAILED TO PARSE]";
      append_raw_fields(format, preparer.bytes(), line);
    } else {
      file.decoder().load_kernel_symbols_for(format);
      trace_seq_reset(&s);
      tep_print_event(tep, &s, record, "%s", TEP_PRINT_INFO);
      trace_seq_terminate(&s);
      const std::string_view text(s.buffer, s.len);
      line += text;
      if (repeatable) printed.keep(text);
    }
    std::string_view shown(line);
    if (shown.ends_with('\n')) shown.remove_suffix(1);
    out(shown);
    return true;
  }, [&](int buffer, int cpu, long long lost) { summary.losses.push_back({cpu, last_kept[{buffer, cpu}], 0, lost}); });
  trace_seq_destroy(&s);
  if (!walked) summary.unreadable = walked.error().describe();
  return summary;
}

TraceShortcomings shortcomings(const TraceDat& file, const TraceReportSummary& summary) {
  TraceShortcomings result;
  for (const std::string& warning : file.warnings()) result.warnings.push_back(warning);
  for (const std::string& warning : file.decoder().warnings()) result.warnings.push_back(warning);
  for (const std::string& damage : file.damage()) {
    result.warnings.push_back(damage);
    result.incomplete = true;
  }
  if (!summary.unreadable.empty()) {
    result.warnings.push_back(summary.unreadable);
    result.incomplete = true;
  }
  if (summary.unknown_events) {
    result.warnings.push_back(std::to_string(summary.unknown_events) +
                              " events have no format in the file that vperf could use ([UNKNOWN EVENT]; see the formats above)");
    result.incomplete = true;
  }
  if (summary.short_records) {
    result.warnings.push_back(std::to_string(summary.short_records) + " records too short to hold their common fields were left out");
    result.incomplete = true;
  }
  for (const auto& [why, count] : summary.printed_from_fields) {
    result.warnings.push_back(std::to_string(count) + " events printed from their fields ([UNSAFE FORMAT]) as libtraceevent cannot print them safely: " + why);
    result.incomplete = true;
  }
  return result;
}

bool looks_like_trace_dat(std::string_view head) { return head.starts_with(std::string_view("\x17\x08\x44tracing", 10)); }

namespace {
// Folded stacks' text, "PATH VALUE" per line in the map's (sorted) order.
std::string folded_lines(const std::map<std::string, uint64_t>& values) {
  std::string folded;
  for (const auto& [path, value] : values) folded += path + " " + std::to_string(value) + "\n";
  return folded;
}

// The comm libtraceevent knows for `pid`, the root frame of a folded stack.
std::string comm_of(tep_handle* tep, int pid) {
  const char* comm = tep_data_comm_from_pid(tep, pid);
  return comm ? comm : "[unknown]";
}
}  // namespace

// The walk both folds share: every event counted in `seen`, a record too short to be typed left
// out (and counted), an event of no known format counted; `visit` gets each typed record.
TraceReportSummary walk_typed_records(const TraceDat& file,
                                      const std::function<void(const TraceDatEvent& event, tep_record& record, int type)>& visit) {
  tep_handle* tep = file.decoder().handle();
  RecordPreparer preparer(tep);
  TraceReportSummary seen;
  Result<void> walked = file.for_each_event([&](const TraceDatEvent& event) {
    ++seen.events;
    tep_record* prepared = preparer.prepare(event, seen);
    if (!prepared) return true;
    const int type = tep_data_type(tep, prepared);
    if (!tep_find_event(tep, type)) ++seen.unknown_events;
    visit(event, *prepared, type);
    return true;
  });
  if (!walked) seen.unreadable = walked.error().describe();
  return seen;
}

std::string folded_kernel_stacks(const TraceDat& file, uint64_t* stacks, TraceReportSummary* walk) {
  tep_handle* tep = file.decoder().handle();
  file.decoder().load_kernel_symbols();
  tep_event* kernel_stack = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
  std::map<std::string, uint64_t> counts;
  uint64_t total = 0;
  if (kernel_stack) {
    tep_format_field* size_field = tep_find_field(kernel_stack, "size");
    tep_format_field* caller_field = tep_find_field(kernel_stack, "caller");
    const int long_size = tep_get_long_size(tep);
    TraceReportSummary seen = walk_typed_records(file, [&](const TraceDatEvent& event, tep_record& record, int type) {
      if (!caller_field || type != kernel_stack->id) return;
      unsigned long long entries = ~0ull;
      if (size_field && size_field->offset >= 0 && size_field->size >= 0 &&
          int64_t{size_field->offset} + size_field->size <= record.size)
        (void)tep_read_number_field(size_field, record.data, &entries);
      const size_t offset = static_cast<size_t>(std::max(caller_field->offset, 0));
      std::vector<std::string> frames;  // innermost first, as the kernel stores them
      for (size_t at = offset; at + static_cast<size_t>(long_size) <= event.data.size() && frames.size() < entries; at += long_size) {
        uint64_t address = 0;
        std::memcpy(&address, event.data.data() + at, static_cast<size_t>(long_size));
        if (address == 0 || address == ~0ull) break;
        const char* name = tep_find_function(tep, address);
        frames.push_back(std::string(name ? name : "[unknown]") + "_[k]");
      }
      std::string line = comm_of(tep, tep_data_pid(tep, &record));
      for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame) line += ";" + *frame;
      ++counts[line];
      ++total;
    });
    if (walk) *walk = std::move(seen);
  }
  if (stacks) *stacks = total;
  return folded_lines(counts);
}

std::string folded_function_graph(const TraceDat& file, uint64_t* calls, TraceReportSummary* walk) {
  tep_handle* tep = file.decoder().handle();
  file.decoder().load_kernel_symbols();
  tep_event* entry = tep_find_event_by_name(tep, "ftrace", "funcgraph_entry");
  tep_event* exit = tep_find_event_by_name(tep, "ftrace", "funcgraph_exit");
  std::map<std::string, uint64_t> self_time;
  uint64_t ended = 0;
  if (entry && exit) {
    // Per task: the open calls by depth, and the time their finished children took.
    struct OpenCalls {
      std::vector<std::string> names;
      std::vector<uint64_t> children;
    };
    std::map<int, OpenCalls> tasks;
    // The fields, looked up once (each lookup walks the format's field list).
    struct Fields {
      tep_format_field *func, *depth, *calltime, *rettime;
    };
    const Fields entry_fields{tep_find_field(entry, "func"), tep_find_field(entry, "depth"), nullptr, nullptr};
    const Fields exit_fields{tep_find_field(exit, "func"), tep_find_field(exit, "depth"), tep_find_field(exit, "calltime"),
                             tep_find_field(exit, "rettime")};
    // A field the record does not hold reads as 0.
    auto number = [](tep_format_field* field, const tep_record& record) {
      unsigned long long value = 0;
      if (field && field->offset >= 0 && field->size >= 0 && int64_t{field->offset} + field->size <= record.size)
        (void)tep_read_number_field(field, record.data, &value);
      return static_cast<uint64_t>(value);
    };
    TraceReportSummary seen = walk_typed_records(file, [&](const TraceDatEvent&, tep_record& record, int type) {
      if (type != entry->id && type != exit->id) return;
      const Fields& fields = type == entry->id ? entry_fields : exit_fields;
      const int pid = tep_data_pid(tep, &record);
      const uint64_t depth = number(fields.depth, record);
      if (depth > 4096) return;  // no kernel nests that deep: a damaged record
      const char* function = tep_find_function(tep, number(fields.func, record));
      const std::string name = std::string(function ? function : "[unknown]") + "_[k]";
      OpenCalls& open = tasks[pid];
      if (open.names.size() < depth + 1) {
        open.names.resize(depth + 1);
        open.children.resize(depth + 1, 0);
      }
      if (type == entry->id) {
        open.names[depth] = name;
        open.children[depth] = 0;
        return;
      }
      const uint64_t start = number(fields.calltime, record), end = number(fields.rettime, record);
      const uint64_t duration = end > start ? end - start : 0;
      std::string path = comm_of(tep, pid);
      for (uint64_t d = 0; d < depth; ++d)
        if (!open.names[d].empty()) path += ";" + open.names[d];
      path += ";" + name;
      self_time[path] += duration > open.children[depth] ? duration - open.children[depth] : 0;
      open.names[depth].clear();
      open.children[depth] = 0;
      if (depth > 0) open.children[depth - 1] += duration;
      ++ended;
    });
    if (walk) *walk = std::move(seen);
  }
  if (calls) *calls = ended;
  return folded_lines(self_time);
}

std::vector<std::string> describe_losses(const TraceDat& file, const TraceReportSummary& summary) {
  std::vector<std::string> lines;
  const std::vector<uint64_t> lost = file.lost_by_cpu();
  auto seconds = [&](uint64_t ts) {
    char text[40];
    // Rounded to the microsecond, as the report's own timestamps are.
    const uint64_t us = (ts + 500) / 1000;
    if (file.timestamps_in_ns())
      std::snprintf(text, sizeof text, "%llu.%06llu", static_cast<unsigned long long>(us / 1000000),
                    static_cast<unsigned long long>(us % 1000000));
    else
      std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(ts));
    return std::string(text);
  };
  for (size_t cpu = 0; cpu < std::max<size_t>(lost.size(), static_cast<size_t>(file.cpu_count())); ++cpu) {
    std::vector<const TraceLossWindow*> windows;
    for (const TraceLossWindow& w : summary.losses)
      if (w.cpu == static_cast<int>(cpu)) windows.push_back(&w);
    const uint64_t count = cpu < lost.size() ? lost[cpu] : 0;
    if (count == 0 && windows.empty()) continue;
    std::string line = "CPU " + std::to_string(cpu) + " lost " + (count ? std::to_string(count) + " events" : "events");
    if (count) line += " (its ring buffer's overrun and drops)";
    if (!windows.empty()) {
      line += "; gaps";
      for (size_t i = 0; i < windows.size() && i < 5; ++i)
        line += std::string(i ? "," : "") + " " + (windows[i]->after ? seconds(windows[i]->after) : std::string("start")) + "-" +
                (windows[i]->before ? seconds(windows[i]->before) : std::string("end"));
      if (windows.size() > 5) line += " and " + std::to_string(windows.size() - 5) + " more";
    }
    line += ": counts over this CPU's trace are lower bounds";
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace vperf::tracing
