#include "tracing/trace_dat.h"

#include <traceevent/event-parse.h>
// kbuffer.h, unlike event-parse.h, declares its functions without extern "C".
extern "C" {
#include <traceevent/kbuffer.h>
}
#include <traceevent/trace-seq.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/byte_reader.h"
#include "core/files.h"
#include "core/strings.h"

namespace vperf::tracing {

namespace {

enum TraceDatOption : uint16_t {
  kOptionDone = 0,
  kOptionCpuStat = 2,
  kOptionTraceClock = 4,
  kOptionUname = 5,
  kOptionVersion = 9,
};

class Out {
 public:
  template <typename T>
  void put(T value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof value);
  }
  void put_text(std::string_view text) { bytes.insert(bytes.end(), text.begin(), text.end()); }
  void put_option(uint16_t id, std::string_view text) {
    // Text options end with their NUL, as trace-cmd writes them.
    put(id);
    put(static_cast<uint32_t>(text.size() + 1));
    put_text(text);
    bytes.push_back(0);
  }
  std::vector<uint8_t> bytes;
};

Result<void> write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("writing trace.dat");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

Result<void> copy_range(int from, uint64_t size, int to) {
  std::vector<uint8_t> buffer(1 << 20);
  uint64_t done = 0;
  while (done < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), size - done));
    const ssize_t n = ::pread(from, buffer.data(), want, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::from_errno("reading a CPU's recorded pages", n == 0 ? EIO : errno);
    VPERF_TRY(write_all(to, buffer.data(), static_cast<size_t>(n)));
    done += static_cast<uint64_t>(n);
  }
  return {};
}

// The page header: u64 timestamp, then `commit` (a long): the data size in its low 27 bits, and
// the kernel's flags above (bit 31 missed events, bit 30 missed count stored after the data).
constexpr uint64_t kCommitMask = (1u << 27) - 1;
constexpr uint64_t kMissedStored = 1u << 30;

}  // namespace

Result<void> write_trace_dat(int out_fd, const TraceDatHeader& header, const std::vector<TraceDatCpu>& cpus) {
  Out o;
  o.bytes = header.tracing_data;
  o.put(static_cast<uint32_t>(cpus.size()));
  o.put_text(std::string_view("options  \0", 10));
  if (!header.trace_clock.empty()) o.put_option(kOptionTraceClock, header.trace_clock);
  if (!header.uname.empty()) o.put_option(kOptionUname, header.uname);
  o.put_option(kOptionVersion, std::string("vperf ") + VPERF_VERSION);
  for (const TraceDatCpu& cpu : cpus) o.put_option(kOptionCpuStat, cpu.stats);
  o.put(uint16_t{kOptionDone});
  o.put_text(std::string_view("flyrecord\0", 10));
  // Offsets: the table, then each CPU's data from the next page boundary on.
  uint64_t offset = o.bytes.size() + cpus.size() * 16;
  std::vector<std::pair<uint64_t, uint64_t>> placed;
  for (const TraceDatCpu& cpu : cpus) {
    offset = (offset + header.page_size - 1) / header.page_size * header.page_size;
    placed.emplace_back(offset, cpu.size);
    offset += cpu.size;
  }
  for (const auto& [at, size] : placed) {
    o.put(at);
    o.put(size);
  }
  VPERF_TRY(write_all(out_fd, o.bytes.data(), o.bytes.size()));
  uint64_t written = o.bytes.size();
  for (size_t i = 0; i < cpus.size(); ++i) {
    const std::vector<uint8_t> padding(placed[i].first - written, 0);
    VPERF_TRY(write_all(out_fd, padding.data(), padding.size()));
    VPERF_TRY(copy_range(cpus[i].data_fd, cpus[i].size, out_fd));
    written = placed[i].first + cpus[i].size;
  }
  return {};
}

Result<TraceDat> TraceDat::open(const std::filesystem::path& path) {
  Result<ScopedFd> fd = open_regular_file(path);
  if (!fd) return fd.error();
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd->get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::from_errno("reading " + path.string());
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
  }
  Result<TraceDat> file = parse(std::move(bytes));
  if (!file) return Error{path.string() + ": " + file.error().message, file.error().errno_value, file.error().hint};
  return file;
}

Result<TraceDat> TraceDat::parse(std::vector<uint8_t> bytes) {
  TraceDat file;
  file.bytes_ = std::move(bytes);
  ByteReader head(file.bytes_);
  if (Result<void> skipped = head.skip(10, "trace.dat magic"); !skipped) return skipped.error();
  Result<std::string> version = head.c_string("trace.dat version");
  if (!version) return version.error();
  if (*version != "6")
    return Error{"trace.dat version " + *version + " is not readable here (version 6 is)", EINVAL,
                 *version == "7" ? "convert it: trace-cmd convert --file-version 6 -i FILE -o FILE6" : ""};
  file.version_ = 6;
  size_t consumed = 0;
  Result<TracepointDecoder> decoder =
      TracepointDecoder::parse(file.bytes_, TracingDataOptions{.kallsyms = true, .plugins = true}, &consumed);
  if (!decoder) return decoder.error();
  file.decoder_.emplace(std::move(decoder).value());
  tep_handle* tep = file.decoder_->handle();
  tep_clear_flag(tep, TEP_NSEC_OUTPUT);  // trace-cmd prints seconds.micros
  file.page_size_ = static_cast<uint32_t>(tep_get_page_size(tep));
  file.long_size_ = tep_get_long_size(tep);
  if (file.page_size_ < 64 || file.page_size_ > (1u << 24)) return Error{"trace.dat: implausible page size " + std::to_string(file.page_size_)};

  ByteReader r(file.bytes_);
  VPERF_TRY(r.seek(consumed));
  Result<uint32_t> cpus = r.u32("CPU count");
  if (!cpus) return cpus.error();
  if (*cpus > 8192) return Error{"trace.dat: implausible CPU count " + std::to_string(*cpus)};
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
      std::string text(reinterpret_cast<const char*>(data->data()), data->size());
      if (!text.empty() && text.back() == '\0') text.pop_back();
      if (*id == kOptionTraceClock) {
        const size_t open = text.find('['), close = text.find(']', open);
        if (open != std::string::npos && close != std::string::npos) file.clock_ = text.substr(open + 1, close - open - 1);
      } else if (*id == kOptionUname) {
        file.uname_ = text;
      } else if (*id == kOptionCpuStat) {
        file.cpu_stats_.push_back(text);
      }
    }
    kind = r.bytes(10, "flyrecord");
    if (!kind) return kind.error();
    tag = std::string_view(reinterpret_cast<const char*>(kind->data()), 10);
  }
  if (tag.starts_with("latency")) return Error{"trace.dat holds a latency trace (text), not per-CPU data: it is not readable here"};
  if (!tag.starts_with("flyrecord")) return Error{"trace.dat: expected the flyrecord section at offset " + std::to_string(r.offset() - 10)};
  for (uint32_t cpu = 0; cpu < *cpus; ++cpu) {
    Result<uint64_t> offset = r.u64("CPU data offset");
    if (!offset) return offset.error();
    Result<uint64_t> size = r.u64("CPU data size");
    if (!size) return size.error();
    if (*size != 0 && (*offset > file.bytes_.size() || *size > file.bytes_.size() - *offset))
      return Error{"trace.dat is truncated: CPU " + std::to_string(cpu) + "'s data ends at " + std::to_string(*offset + *size) +
                       ", the file at " + std::to_string(file.bytes_.size()),
                   EINVAL, "the recording was cut short; record again"};
    file.cpus_.push_back({*offset, *size});
  }
  return file;
}

bool TraceDat::timestamps_in_ns() const { return clock_ != "counter" && clock_ != "x86-tsc"; }

std::vector<uint64_t> TraceDat::lost_by_cpu() const {
  std::vector<uint64_t> lost;
  for (const std::string& stats : cpu_stats_) {
    uint64_t total = 0;
    for (std::string_view line : split(stats, '\n')) {
      for (std::string_view key : {"overrun: ", "dropped events: "})
        if (line.starts_with(key))
          if (std::optional<uint64_t> n = parse_u64(trim(line.substr(key.size())))) total += *n;
    }
    lost.push_back(total);
  }
  return lost;
}

namespace {

struct KbufferDeleter {
  void operator()(kbuffer* k) const { kbuffer_free(k); }
};

// One CPU's events, page by page. Each page is copied into a zeroed buffer with room to spare,
// so kbuffer never reads outside memory vperf owns, whatever the page says.
class CpuCursor {
 public:
  CpuCursor(int cpu, std::span<const uint8_t> data, uint32_t page_size, int long_size)
      : cpu_(cpu), data_(data), page_size_(page_size), long_size_(long_size), page_(2 * static_cast<size_t>(page_size)) {
    kbuf_.reset(kbuffer_alloc(long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4, KBUFFER_ENDIAN_LITTLE));
  }

  // Moves to the next event; false at the end (or at a malformed page: error() says).
  bool advance() {
    if (!kbuf_) return false;
    if (loaded_) {
      current_ = kbuffer_next_event(kbuf_.get(), &timestamp_);
      if (current_ && fill()) return true;
    }
    while (next_page_ * page_size_ + page_size_ <= data_.size()) {
      std::fill(page_.begin(), page_.end(), 0);
      std::memcpy(page_.data(), data_.data() + next_page_ * page_size_, page_size_);
      ++next_page_;
      const size_t header = 8 + static_cast<size_t>(long_size_);
      uint64_t commit = 0;
      std::memcpy(&commit, page_.data() + 8, static_cast<size_t>(long_size_));
      const uint64_t used = commit & kCommitMask;
      if (used + header + ((commit & kMissedStored) ? static_cast<size_t>(long_size_) : 0) > page_size_) {
        error_ = "CPU " + std::to_string(cpu_) + ": page " + std::to_string(next_page_ - 1) + " claims " + std::to_string(used) +
                 " bytes of data in a " + std::to_string(page_size_) + "-byte page";
        return false;
      }
      if (kbuffer_load_subbuffer(kbuf_.get(), page_.data()) < 0) continue;
      loaded_ = true;
      missed_ = kbuffer_missed_events(kbuf_.get());
      current_ = kbuffer_read_event(kbuf_.get(), &timestamp_);
      if (current_ && fill()) return true;
    }
    return false;
  }

  const TraceDatEvent& event() const { return event_; }
  const std::string& error() const { return error_; }

 private:
  bool fill() {
    const int size = kbuffer_event_size(kbuf_.get());
    const auto* at = static_cast<const uint8_t*>(current_);
    if (size <= 0 || at < page_.data() || at + size > page_.data() + page_size_) {
      error_ = "CPU " + std::to_string(cpu_) + ": an event overruns page " + std::to_string(next_page_ - 1);
      return false;
    }
    event_.cpu = cpu_;
    event_.timestamp = timestamp_;
    event_.data = std::span<const uint8_t>(at, static_cast<size_t>(size));
    event_.missed_before = missed_;
    missed_ = 0;  // a page's loss is reported before its first event only
    return true;
  }

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
  std::string error_;
};

}  // namespace

Result<void> TraceDat::for_each_event(const std::function<bool(const TraceDatEvent&)>& visit) const {
  std::vector<std::unique_ptr<CpuCursor>> cursors;
  std::vector<bool> live;
  for (size_t cpu = 0; cpu < cpus_.size(); ++cpu) {
    const std::span<const uint8_t> data(bytes_.data() + (cpus_[cpu].size ? cpus_[cpu].offset : 0), cpus_[cpu].size);
    cursors.push_back(std::make_unique<CpuCursor>(static_cast<int>(cpu), data, page_size_, long_size_));
    live.push_back(cursors.back()->advance());
  }
  std::string first_error;
  for (;;) {
    int next = -1;
    for (size_t cpu = 0; cpu < cursors.size(); ++cpu)
      if (live[cpu] && (next < 0 || cursors[cpu]->event().timestamp < cursors[static_cast<size_t>(next)]->event().timestamp))
        next = static_cast<int>(cpu);
    if (next < 0) break;
    if (!visit(cursors[static_cast<size_t>(next)]->event())) return {};
    live[static_cast<size_t>(next)] = cursors[static_cast<size_t>(next)]->advance();
  }
  for (const auto& cursor : cursors)
    if (!cursor->error().empty()) return Error{"trace.dat: " + cursor->error(), EINVAL};
  return {};
}

Result<void> print_trace_report(const TraceDat& file, const std::function<void(std::string_view line)>& out) {
  out("cpus=" + std::to_string(file.cpu_count()));
  tep_handle* tep = file.decoder().handle();
  const char* time_format = file.timestamps_in_ns() ? " %6.1000d:" : "%12d:";
  trace_seq s;
  trace_seq_init(&s);
  static constexpr std::string_view kSpaces = "                    ";  // 20: names are padded to it
  Result<void> walked = file.for_each_event([&](const TraceDatEvent& event) {
    tep_record record{};
    record.ts = event.timestamp;
    record.cpu = event.cpu;
    record.size = static_cast<int>(event.data.size());
    record.data = const_cast<uint8_t*>(event.data.data());  // libtraceevent only reads it
    record.missed_events = event.missed_before;
    trace_seq_reset(&s);
    if (event.missed_before > 0)
      trace_seq_printf(&s, "CPU:%d [%lld EVENTS DROPPED]\n", event.cpu, event.missed_before);
    else if (event.missed_before < 0)
      trace_seq_printf(&s, "CPU:%d [EVENTS DROPPED]\n", event.cpu);
    tep_print_event(tep, &s, &record, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID, TEP_PRINT_CPU);
    tep_print_event(tep, &s, &record, time_format, TEP_PRINT_TIME);
    tep_event* format = tep_find_event_by_record(tep, &record);
    const std::string_view name = format && format->name ? format->name : "(NULL)";
    trace_seq_printf(&s, " %.*s: ", static_cast<int>(name.size()), name.data());
    if (name.size() < kSpaces.size()) trace_seq_printf(&s, "%.*s", static_cast<int>(kSpaces.size() - name.size()), kSpaces.data());
    tep_print_event(tep, &s, &record, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&s);
    std::string_view line(s.buffer, s.len);
    if (line.ends_with('\n')) line.remove_suffix(1);
    out(line);
    return true;
  });
  trace_seq_destroy(&s);
  return walked;
}

}  // namespace vperf::tracing
