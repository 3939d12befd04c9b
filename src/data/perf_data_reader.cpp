#include "data/perf_data_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>

#include "core/byte_reader.h"
#include "core/file_mapping.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "core/byte_writer.h"
#include "data/compressed_records.h"
#include "data/feature_sections.h"
#include "data/ordered_records.h"
#include "data/perf_data_format.h"

namespace vperf::data {
namespace {

constexpr size_t kNoAttr = kNoAttrIndex;

// One record's bytes: a view into the mapped input, or a copy read from a pipe.
struct Chunk {
  std::vector<uint8_t> owned;
  std::span<const uint8_t> bytes;
  uint64_t offset = 0;

  Chunk() = default;
  Chunk(Chunk&&) noexcept = default;
  Chunk& operator=(Chunk&&) noexcept = default;
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
};

uint32_t record_type(std::span<const uint8_t> bytes) {
  uint32_t type = 0;
  std::memcpy(&type, bytes.data(), sizeof(type));
  return type;
}

// The user records that change the events or features a reader shows (apply_user).
bool is_applied_user_record(uint32_t type) {
  return type == kRecordHeaderAttr || type == kRecordHeaderFeature || type == kRecordEventUpdate || type == kRecordHeaderBuildId;
}

// A byte range that one part of a perf.data file claims (header, attrs, an event's ids, data,
// feature table, a feature section). perf lays each part out once, so two that share a byte
// mean the file is damaged.
struct Extent {
  uint64_t offset = 0, size = 0;
  std::string what;
  uint64_t end() const { return offset + size; }
  std::string describe() const { return what + " (offset " + hex(offset) + ", " + std::to_string(size) + " bytes)"; }
};

// The first two of `extents` (each already inside the file) that share bytes, as an Error; of
// two at one offset, the one listed later is named as overlapping the other.
std::optional<Error> first_overlap(std::vector<Extent> extents, const std::string& name) {
  std::erase_if(extents, [](const Extent& e) { return e.size == 0; });
  std::stable_sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
  const Extent* reaching_furthest = nullptr;
  for (const Extent& e : extents) {
    if (reaching_furthest && e.offset < reaching_furthest->end())
      return Error{name + ": " + e.describe() + " overlaps " + reaching_furthest->describe() + ": the file is damaged"};
    if (!reaching_furthest || e.end() > reaching_furthest->end()) reaching_furthest = &e;
  }
  return std::nullopt;
}

// Reads up to n bytes; fewer only at EOF.
Result<size_t> read_up_to(int fd, uint8_t* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("read perf data from the pipe");
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

struct PerfDataReader::Impl {
  std::string name = "perf.data";
  // Input: a mapping (file), a vector (from_bytes) or a pipe fd.
  std::optional<FileMapping> mapping;
  // The mapping's pages below this offset were dropped from memory: a file read front to back
  // then holds what the reader still queues, not all of it (a multi-GB perf.data made report's
  // resident size grow by the file's size). Dropped in steps of 8 MiB.
  uint64_t released = 0;
  void release_below(uint64_t offset) {
    if (!mapping || offset < released + (uint64_t{8} << 20)) return;
    mapping->release(released, offset);
    released = offset;
  }
  std::vector<uint8_t> owned;
  std::span<const uint8_t> input;
  int fd = -1;
  bool pipe = false;
  bool consumed = false;   // pipe read() ran
  bool stream_end = false; // no more records (end or a stop condition)

  uint64_t data_offset = 0, data_end = 0, data_size_field = 0;
  uint64_t pos = 0;  // next record's offset
  uint64_t applied_to = 0;  // user records before this offset were applied to attrs/features
  std::vector<EventAttrEntry> attrs;
  std::vector<SampleFormat> formats;  // attrs[i]'s, decoded once: every record needs its own
  std::map<uint64_t, size_t> id_to_attr;
  HeaderFeatures features;
  std::vector<int> present;
  std::vector<std::string> warnings;
  std::deque<Chunk> pending;  // pipe: leading records read by open

  bool warned_bad = false, warned_unknown_id = false;
  // Set when the input is structurally impossible: reading stops and open()/read() fail with it.
  std::optional<Error> fatal;
  // File mode: the parts of the file the header and attrs claim, for first_overlap().
  std::vector<Extent> layout;

  void warn(std::string line) { keep_warning(name + ": " + line); }

  struct ReadPass;  // one read()
  void keep_warning(std::string line) {
    if (std::find(warnings.begin(), warnings.end(), line) == warnings.end()) warnings.push_back(std::move(line));
  }

  // perf record -z's COMPRESSED feature: u32 version, type, level, ratio, mmap_len. What one
  // COMPRESSED record may decompress to: the recording's ring size (perf's decompression
  // buffer), at least 1 MiB where the feature is missing or states less.
  bool compressed() const {
    return std::find(present.begin(), present.end(), kFeatCompressed) != present.end();
  }
  uint64_t decompressed_limit() const {
    uint64_t mmap_len = 0;
    for (const RawFeature& raw : features.other)
      if (raw.feature == kFeatCompressed && raw.bytes.size() >= 20) {
        uint32_t v = 0;
        std::memcpy(&v, raw.bytes.data() + 16, sizeof v);
        mmap_len = v;
      }
    // At most 256 MiB whatever the file says: a stated ring of 4 GiB is a bomb, not a buffer.
    return std::clamp<uint64_t>(mmap_len, uint64_t{1} << 20, uint64_t{256} << 20);
  }

  void index_attr(size_t i) {
    for (uint64_t id : attrs[i].ids) id_to_attr.emplace(id, i);
    formats.push_back(SampleFormat::from_attr(attrs[i].attr));
  }

  // How far ahead of the record being read its successors' bytes are asked into the cache: a
  // mapped file's 4 KB pages stop the hardware's own prefetching at every page.
  static constexpr size_t kPrefetchAhead = 2048;

  // Next record of the data, or nullopt at the end. A record that does not fit stops the
  // stream with one warning.
  std::optional<Chunk> next_chunk(ReadStats* stats) {
    if (stream_end) return std::nullopt;
    Chunk c;
    c.offset = pos;
    if (fd >= 0) {
      c.owned.resize(8);
      auto got = read_up_to(fd, c.owned.data(), 8);
      if (!got) return stop(stats, got.error().describe());
      if (*got == 0) return end();
      if (*got < 8) return stop(stats, "stream truncated at offset " + hex(pos) + " inside a record header");
      uint16_t size;
      std::memcpy(&size, c.owned.data() + 6, sizeof(size));
      if (size < 8) return stop(stats, "corrupt record at offset " + hex(pos) + ": size " + std::to_string(size));
      if (!read_more(c, size, stats)) return std::nullopt;
      auto total = record_stream_size(c.owned);
      if (!total) return stop(stats, "corrupt record at offset " + hex(pos) + ": " + total.error().describe());
      if (*total > kMaxPipeRecordBytes)
        return fail(record_type_name(record_type(c.owned)) + " record at offset " + hex(pos) + " claims " +
                    std::to_string(*total) + " bytes, more than the " + std::to_string(kMaxPipeRecordBytes >> 20) +
                    " MiB vperf reads per pipe record");
      if (*total > size && !read_more(c, *total, stats)) return std::nullopt;
      c.bytes = c.owned;
    } else {
      if (pos >= data_end) return end();
      auto rest = input.subspan(static_cast<size_t>(pos), static_cast<size_t>(data_end - pos));
      if (rest.size() > kPrefetchAhead) __builtin_prefetch(rest.data() + kPrefetchAhead);
      auto total = record_stream_size(rest);
      if (!total) {
        if (rest.size() < 8)
          return stop(stats, "data truncated at offset " + hex(pos) + " inside a record header (" +
                                 std::to_string(rest.size()) + " bytes left)");
        return stop(stats, "corrupt record at offset " + hex(pos) + ": " + total.error().describe());
      }
      if (*total > rest.size())
        return stop(stats, "data truncated at offset " + hex(pos) + ": " + record_type_name(record_type(rest)) +
                               " record of " + std::to_string(*total) + " bytes, " + std::to_string(rest.size()) +
                               " left");
      c.bytes = rest.first(static_cast<size_t>(*total));
    }
    pos += c.bytes.size();
    return c;
  }

  // Reads the record on to `total` bytes (at most kMaxPipeRecordBytes), growing the buffer only
  // as bytes arrive: a size that lies costs what the stream holds, not what the record claims.
  bool read_more(Chunk& c, uint64_t total, ReadStats* stats) {
    constexpr size_t kFirstStep = size_t{1} << 20;
    while (c.owned.size() < total) {
      size_t have = c.owned.size();
      size_t step = static_cast<size_t>(std::min<uint64_t>(total - have, std::max(kFirstStep, have)));
      c.owned.resize(have + step);
      auto got = read_up_to(fd, c.owned.data() + have, step);
      if (!got) {
        stop(stats, got.error().describe());
        return false;
      }
      if (*got < step) {
        stop(stats, "stream truncated at offset " + hex(pos) + ": " + record_type_name(record_type(c.owned)) +
                        " record of " + std::to_string(total) + " bytes, " + std::to_string(have + *got) + " read");
        return false;
      }
    }
    return true;
  }

  std::optional<Chunk> end() {
    stream_end = true;
    return std::nullopt;
  }
  std::optional<Chunk> stop(ReadStats* stats, std::string why) {
    stream_end = true;
    if (stats) stats->truncated = true;
    warn(std::move(why) + "; the records before it were read");
    return std::nullopt;
  }
  // A structural impossibility: no record after it can be trusted.
  std::optional<Chunk> fail(std::string why) {
    stream_end = true;
    if (!fatal) fatal = Error{name + ": " + std::move(why)};
    return std::nullopt;
  }

  // Applies a user record to attrs/features (pipe mode, and build ids / names in any mode).
  void apply_user(const Chunk& c) {
    uint32_t type = record_type(c.bytes);
    if (!is_applied_user_record(type)) return;
    if (type == kRecordHeaderAttr && !pipe) return;  // file mode has the attr section
    auto rec = parse_record(c.bytes, nullptr);
    if (!rec) {
      std::string why = "bad " + record_type_name(type) + " record at offset " + hex(c.offset) + ": " + rec.error().describe();
      // Without its attr no sample of that event can be read: that ends the stream.
      if (type == kRecordHeaderAttr) fail(std::move(why));
      else warn(std::move(why));
      return;
    }
    if (const auto* a = std::get_if<AttrRecord>(&rec->body)) {
      attrs.push_back({a->attr, "", a->ids});
      index_attr(attrs.size() - 1);
    } else if (const auto* f = std::get_if<FeatureRecord>(&rec->body)) {
      if (f->feature == 0 || f->feature >= kFeatLast) return;
      int feat = static_cast<int>(f->feature);
      if (std::find(present.begin(), present.end(), feat) == present.end()) present.push_back(feat);
      auto ok = decode_feature(feat, f->data, features);
      if (!ok) warn("bad " + feature_name(feat) + " feature record: " + ok.error().describe());
      if (feat == kFeatEventDesc) apply_event_desc();
    } else if (const auto* u = std::get_if<EventUpdateRecord>(&rec->body)) {
      if (u->type != 2) return;  // PERF_EVENT_UPDATE__NAME
      auto it = id_to_attr.find(u->id);
      if (it == id_to_attr.end()) return;
      auto nul = std::find(u->data.begin(), u->data.end(), uint8_t{0});
      attrs[it->second].name.assign(u->data.begin(), nul);
    } else if (const auto* b = std::get_if<BuildIdRecord>(&rec->body)) {
      BuildIdEntry e;
      e.pid = b->pid;
      e.misc = static_cast<uint16_t>(rec->misc & ~kMiscBuildIdSize);
      e.build_id = b->build_id;
      e.filename = b->filename;
      features.build_ids.push_back(std::move(e));
    }
  }

  // Names from EVENT_DESC: by position when the counts agree, else by a shared id.
  void apply_event_desc() {
    const auto& desc = features.event_desc;
    if (desc.size() == attrs.size()) {
      for (size_t i = 0; i < attrs.size(); ++i)
        if (attrs[i].name.empty()) attrs[i].name = desc[i].name;
      return;
    }
    for (const auto& d : desc)
      for (uint64_t id : d.ids)
        if (auto it = id_to_attr.find(id); it != id_to_attr.end() && attrs[it->second].name.empty())
          attrs[it->second].name = d.name;
  }

  size_t attr_index_of(std::span<const uint8_t> bytes, bool& unknown) const {
    unknown = false;
    if (attrs.empty()) return kNoAttr;
    if (attrs.size() == 1) return 0;
    auto id = peek_sample_id(bytes, formats[0]);
    if (id) {
      if (auto it = id_to_attr.find(*id); it != id_to_attr.end()) return it->second;
      unknown = true;
    }
    return 0;
  }

  Result<void> parse_file_header();
  Result<void> read_attrs(uint64_t attr_size, uint64_t attrs_offset, uint64_t attrs_size);
  Result<void> read_features(const uint64_t (&bits)[4]);
  void scan_pipe_start();
};

Result<void> PerfDataReader::Impl::parse_file_header() {
  ByteReader r(input);
  VPERF_TRY(uint64_t magic, r.u64("perf.data magic"));
  if (magic == kPerfMagic2Swapped) return Error{name + " was written on a machine of the other byte order; not supported"};
  if (magic == kPerfMagic1) return Error{name + " is in perf's old version 1 format (PERFFILE); not supported"};
  if (magic != kPerfMagic2) return Error{name + " is not a perf.data file (no PERFILE2 magic)"};
  VPERF_TRY(uint64_t header_size, r.u64("perf.data header size"));
  if (header_size == kPipeHeaderSize) {
    pipe = true;
    data_offset = pos = kPipeHeaderSize;
    data_end = input.size();
    scan_pipe_start();
    if (fatal) return *fatal;
    return {};
  }
  if (header_size != kFileHeaderSize && header_size != kHeaderFeaturesOffset)
    return Error{name + ": unknown perf.data header size " + std::to_string(header_size)};
  VPERF_TRY(uint64_t attr_size, r.u64("attr_size"));
  VPERF_TRY(uint64_t attrs_offset, r.u64("attrs section"));
  VPERF_TRY(uint64_t attrs_size, r.u64("attrs section"));
  VPERF_TRY(uint64_t data_off, r.u64("data section"));
  VPERF_TRY(uint64_t data_sz, r.u64("data section"));
  VPERF_TRY(r.bytes(16, "event_types section"));
  uint64_t bits[4] = {};
  if (header_size == kFileHeaderSize)
    for (auto& b : bits) { VPERF_TRY(b, r.u64("feature bitmap")); }

  layout.push_back({0, header_size, "the file header"});
  // The data as far as the file holds it (to the end when the header says 0: perf was killed).
  uint64_t data_in_file_end = data_sz == 0 || data_off > input.size() || data_sz > input.size() - data_off
                                  ? input.size()
                                  : data_off + data_sz;
  if (data_off < data_in_file_end) layout.push_back({data_off, data_in_file_end - data_off, "the data section"});
  VPERF_TRY(read_attrs(attr_size, attrs_offset, attrs_size));
  if (auto overlap = first_overlap(layout, name)) return *overlap;

  data_size_field = data_sz;
  data_offset = std::min<uint64_t>(data_off, input.size());
  pos = data_offset;
  if (data_sz == 0) {
    data_end = input.size();
    warn("the header's data size is 0 (was perf record killed?); reading records to the end of the file");
  } else if (data_off > input.size() || data_sz > input.size() - data_off) {
    data_end = input.size();
    warn("the file is shorter than its header says (data ends at " + hex(data_off + data_sz) + ", file has " +
         hex(input.size()) + " bytes): truncated");
  } else {
    data_end = data_off + data_sz;
    VPERF_TRY(read_features(bits));
  }
  apply_event_desc();
  return {};
}

// The attrs section: attrs_size / attr_size perf_file_attr entries, each an attr and the range
// of its ids. Every range must lie in the file, clear of the others (added to `layout`).
Result<void> PerfDataReader::Impl::read_attrs(uint64_t attr_size, uint64_t attrs_offset, uint64_t attrs_size) {
  if (attrs_size == 0) return {};
  if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
    return Error{name + ": implausible attr size " + std::to_string(attr_size) + " in the header: the file is damaged"};
  if (attrs_size % attr_size != 0)
    return Error{name + ": the attrs section's " + std::to_string(attrs_size) + " bytes are not a whole number of " +
                 std::to_string(attr_size) + "-byte attrs: the file is damaged"};
  auto attrs_r = ByteReader(input).sub_at(attrs_offset, attrs_size, "attrs section");
  if (!attrs_r) return Error{name + ": " + attrs_r.error().describe() + " (the file is truncated or damaged)"};
  layout.push_back({attrs_offset, attrs_size, "the attrs section"});
  // Before decoding: attrs read from the header's or the data's bytes would be garbage.
  if (auto overlap = first_overlap(layout, name)) return *overlap;
  while (!attrs_r->at_end()) {
    std::string event = "event " + std::to_string(attrs.size());
    VPERF_TRY(auto slot, attrs_r->bytes(attr_size - 16, "attr"));
    auto own_size = attr_size_in(slot);
    if (!own_size) return Error{name + ": attr of " + event + ": " + own_size.error().message};
    EventAttrEntry e;
    auto attr = attr_from_bytes(slot.first(*own_size));
    if (!attr) return Error{name + ": attr of " + event + ": " + attr.error().message};
    e.attr = *attr;
    VPERF_TRY(uint64_t ids_offset, attrs_r->u64("attr ids section"));
    VPERF_TRY(uint64_t ids_size, attrs_r->u64("attr ids section"));
    if (ids_size % 8 != 0)
      return Error{name + ": the ids of " + event + " take " + std::to_string(ids_size) +
                   " bytes, not a whole number of u64: the file is damaged"};
    auto ids_r = ByteReader(input).sub_at(ids_offset, ids_size, "attr ids");
    if (!ids_r)
      return Error{name + ": the ids of " + event + " (offset " + hex(ids_offset) + ", " + std::to_string(ids_size) +
                   " bytes) lie outside the file's " + std::to_string(input.size()) + " bytes: the file is damaged"};
    layout.push_back({ids_offset, ids_size, "the ids of " + event});
    e.ids.reserve(static_cast<size_t>(ids_size / 8));
    while (!ids_r->at_end()) e.ids.push_back(*ids_r->u64());
    attrs.push_back(std::move(e));
    index_attr(attrs.size() - 1);
  }
  return {};
}

// The feature table after the data and the sections it points to. A section that does not fit
// in the file is left out with a warning (truncation); one that overlaps another part is damage.
Result<void> PerfDataReader::Impl::read_features(const uint64_t (&bits)[4]) {
  std::vector<int> set;
  for (int f = 1; f < static_cast<int>(kFeatureBits); ++f)
    if (bits[f / 64] & (uint64_t{1} << (f % 64))) set.push_back(f);
  if (set.empty()) return {};
  auto table = ByteReader(input).sub_at(data_end, set.size() * 16, "feature table");
  if (!table) {
    warn("feature sections missing (file truncated after the data): " + table.error().describe());
    return {};
  }
  std::vector<Extent> claimed = layout;
  claimed.push_back({data_end, set.size() * 16, "the feature table"});
  std::vector<std::pair<int, std::span<const uint8_t>>> sections;
  for (int f : set) {
    uint64_t off = *table->u64(), size = *table->u64();
    present.push_back(f);
    auto section = ByteReader(input).sub_at(off, size, feature_name(f) + " section");
    if (!section) {
      warn(section.error().describe());
      continue;
    }
    claimed.push_back({off, size, "the " + feature_name(f) + " section"});
    sections.emplace_back(f, section->bytes());
  }
  if (auto overlap = first_overlap(std::move(claimed), name)) return *overlap;
  for (const auto& [f, bytes] : sections) {
    auto ok = decode_feature(f, bytes, features);
    if (!ok) warn("bad " + feature_name(f) + " section: " + ok.error().describe());
  }
  return {};
}

void PerfDataReader::Impl::scan_pipe_start() {
  // perf writes attrs and features first; read user records up to the first kernel record so
  // attrs() is complete after open. They are delivered by read() like the rest.
  while (auto c = next_chunk(nullptr)) {
    bool user = record_type(c->bytes) >= kRecordHeaderAttr;
    if (user) {
      apply_user(*c);
      applied_to = c->offset + c->bytes.size();
    }
    uint32_t type = record_type(c->bytes);
    pending.push_back(std::move(*c));
    if (!user || type == kRecordFinishedRound) break;
  }
}

PerfDataReader::PerfDataReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PerfDataReader::PerfDataReader(PerfDataReader&&) noexcept = default;
PerfDataReader& PerfDataReader::operator=(PerfDataReader&&) noexcept = default;
PerfDataReader::~PerfDataReader() = default;

Result<PerfDataReader> PerfDataReader::open_file(const std::filesystem::path& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Error::from_errno("open " + path.string());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::from_errno("stat " + path.string());
  auto impl = std::make_unique<Impl>();
  impl->name = path.string();
  if (S_ISFIFO(st.st_mode)) {  // a named pipe holds pipe-mode data
    return Error{path.string() + " is a FIFO: open it and use PerfDataReader::open_pipe"};
  }
  VPERF_TRY(FileMapping mapping, FileMapping::map(fd, path.string()));
  impl->mapping = std::move(mapping);
  impl->input = impl->mapping->bytes();
  VPERF_TRY(impl->parse_file_header());
  return PerfDataReader(std::move(impl));
}

Result<PerfDataReader> PerfDataReader::from_bytes(std::vector<uint8_t> bytes) {
  auto impl = std::make_unique<Impl>();
  impl->name = "input";
  impl->owned = std::move(bytes);
  impl->input = impl->owned;
  VPERF_TRY(impl->parse_file_header());
  return PerfDataReader(std::move(impl));
}

Result<PerfDataReader> PerfDataReader::open_pipe(int fd) {
  auto impl = std::make_unique<Impl>();
  impl->name = "pipe";
  uint8_t header[16];
  VPERF_TRY(size_t got, read_up_to(fd, header, sizeof(header)));
  ByteReader r(std::span<const uint8_t>(header, got));
  VPERF_TRY(uint64_t magic, r.u64("pipe header magic"));
  if (magic != kPerfMagic2) return Error{"the pipe does not carry perf data (no PERFILE2 magic)"};
  VPERF_TRY(uint64_t size, r.u64("pipe header size"));
  if (size != kPipeHeaderSize)
    return Error{"the pipe carries a perf.data file header (size " + std::to_string(size) +
                 "), not pipe-mode data: read the file instead"};
  impl->fd = fd;
  impl->pipe = true;
  impl->data_offset = impl->pos = kPipeHeaderSize;
  impl->scan_pipe_start();
  if (impl->fatal) return *impl->fatal;
  return PerfDataReader(std::move(impl));
}

bool PerfDataReader::is_pipe() const { return impl_->pipe; }
const std::vector<EventAttrEntry>& PerfDataReader::attrs() const { return impl_->attrs; }
const HeaderFeatures& PerfDataReader::features() const { return impl_->features; }
std::vector<int> PerfDataReader::features_present() const { return impl_->present; }
const std::vector<std::string>& PerfDataReader::warnings() const { return impl_->warnings; }
uint64_t PerfDataReader::data_offset() const { return impl_->data_offset; }
uint64_t PerfDataReader::data_size() const { return impl_->data_end - impl_->data_offset; }

const EventAttrEntry* PerfDataReader::attr_for_id(uint64_t id) const {
  if (impl_->attrs.size() == 1) return &impl_->attrs[0];
  auto it = impl_->id_to_attr.find(id);
  return it == impl_->id_to_attr.end() ? nullptr : &impl_->attrs[it->second];
}

std::vector<std::string> PerfDataReader::skipped_features() const {
  std::vector<std::string> names;
  for (const auto& raw : impl_->features.other) names.push_back(feature_name(raw.feature));
  return names;
}

// One read(): each record parsed into one Record (a sample refills the last one's vectors) and
// handed to the callback in perf's order: user records as they come, kernel records through
// OrderedRecords per round (FINISHED_ROUND first, then what it releases).
struct PerfDataReader::Impl::ReadPass {
  ReadPass(Impl& impl, const RecordCallback& on_record, ReadOptions read_options)
      : d(impl), callback(on_record), options(read_options), holding(impl.fd >= 0 || impl.compressed()), queue(holding) {}

  Result<ReadStats> run() {
    if (d.fd < 0 && d.pipe) d.pending.clear();  // memory pipe data: the open scan's records are re-read from the start
    while (!d.pending.empty() && !stopped) {
      Chunk c = std::move(d.pending.front());
      d.pending.pop_front();
      handle(std::move(c));
    }
    while (!stopped && !d.fatal) {
      std::optional<Chunk> c = d.next_chunk(&stats);
      if (!c) break;
      handle(std::move(*c));
    }
    if (d.fatal) return *d.fatal;
    queue.finish([this](const OrderedRecords::Entry& e, std::span<const uint8_t> held) { return deliver_queued(e, held); });
    stats.unordered = queue.unordered();
    if (stats.unknown_types)
      d.warn("skipped " + std::to_string(stats.unknown_types) + " record" + (stats.unknown_types == 1 ? "" : "s") +
             " of unknown type (the first: " + record_type_name(first_unknown_type) + " at offset " +
             hex(first_unknown_offset) + "): is this from a newer perf than vperf knows (6.1)?");
    return stats;
  }

 private:
  // Parses a record and hands it to the callback.
  void deliver(std::span<const uint8_t> bytes, uint64_t offset, size_t attr_index) {
    if (stopped) return;
    const EventAttrEntry* attr = attr_index == kNoAttr ? nullptr : &d.attrs[attr_index];
    uint32_t type = record_type(bytes);
    Result<void> parsed = parse_record_into(bytes, attr ? &d.formats[attr_index] : nullptr, record);
    if (!parsed) {
      ++stats.bad_records;
      if (!d.warned_bad) {
        d.warned_bad = true;
        d.keep_warning(d.name + ": skipped a " + record_type_name(type) + " record at offset " + hex(offset) +
                       " that does not match its event: " + parsed.error().describe());
      }
      return;
    }
    ++stats.records;
    ++stats.by_type[type];
    if (type == PERF_RECORD_SAMPLE) ++stats.samples;
    if (const auto* lost = std::get_if<LostRecord>(&record.body)) stats.lost += lost->lost;
    if (!callback(RecordView{record, bytes, attr, offset, attr_index})) stopped = true;
  }

  // A mapped file's queued records stay where they are; a pipe's wait in the queue.
  bool deliver_queued(const OrderedRecords::Entry& e, std::span<const uint8_t> held) {
    deliver(holding ? held : d.input.subspan(static_cast<size_t>(e.offset), e.size), e.offset, e.attr);
    return !stopped;
  }

  void handle(Chunk c) {
    const uint32_t type = record_type(c.bytes);
    if (!is_known_record_type(type)) {  // a newer perf's, or damage: perf counts them too
      if (stats.unknown_types++ == 0) {
        first_unknown_type = type;
        first_unknown_offset = c.offset;
      }
      return;
    }
    if (type >= kRecordHeaderAttr) return handle_user_record(type, c);
    handle_kernel_record(type, std::move(c));
  }

  // perf's own records: applied to the events and features when first read, delivered at once;
  // a FINISHED_ROUND then releases the queue's round.
  void handle_user_record(uint32_t type, const Chunk& c) {
    if (type == kRecordCompressed) {
      ++stats.compressed;
      ++stats.by_type[type];  // counted as perf counts it; the records it holds are delivered
      decompress(c);
      return;
    }
    if (c.offset >= d.applied_to) {
      d.apply_user(c);
      d.applied_to = c.offset + c.bytes.size();
    }
    deliver(c.bytes, c.offset, kNoAttr);  // as perf: the FINISHED_ROUND itself first, then what it releases
    if (type != kRecordFinishedRound) return;
    ++stats.rounds;
    if (options.ordered)
      queue.finish_round([this](const OrderedRecords::Entry& e, std::span<const uint8_t> held) { return deliver_queued(e, held); });
    if (d.mapping) d.release_below(queue.lowest_offset(c.offset));  // what the queue holds stays in memory
  }

  // perf record -z: the records a COMPRESSED record completes, handled as if read in its place
  // (they keep its offset). A stream that cannot be read is skipped from there on, with a warning.
  void decompress(const Chunk& c) {
    if (decompression_failed) return;
    if (!decompressor) {
      Result<CompressedRecords> opened = CompressedRecords::open();
      if (!opened) return give_up_decompressing(opened.error().describe());
      decompressor = std::move(opened).value();
      decompressed_limit = d.decompressed_limit();  // a pipe's feature came before its first COMPRESSED
    }
    Result<void> fed = decompressor->feed(c.bytes.subspan(8), decompressed_limit, [&](std::span<const uint8_t> bytes) {
      if (record_type(bytes) == kRecordCompressed) return;  // perf never nests them; ignored as damage
      Chunk inner;
      inner.owned.assign(bytes.begin(), bytes.end());
      inner.bytes = inner.owned;
      inner.offset = c.offset;
      handle(std::move(inner));
    });
    if (!fed) give_up_decompressing(fed.error().describe() + " at offset " + hex(c.offset));
  }
  void give_up_decompressing(const std::string& why) {
    decompression_failed = true;
    ++stats.bad_records;
    d.warn("compressed data (perf record -z) skipped from here: " + why);
  }

  // The kernel's records: of a known event, queued by time when ordering; else delivered.
  void handle_kernel_record(uint32_t type, Chunk c) {
    bool unknown = false;
    const size_t attr_index = d.attr_index_of(c.bytes, unknown);
    if (unknown && type == PERF_RECORD_SAMPLE) {  // perf drops these too (nr_unknown_id)
      ++stats.bad_records;
      if (!d.warned_unknown_id) {
        d.warned_unknown_id = true;
        d.warn("skipped a SAMPLE at offset " + hex(c.offset) + " whose id matches no event");
      }
      return;
    }
    // A record with bytes of its own (decompressed) can wait in the queue only when the queue
    // holds bytes: a file whose COMPRESSED feature was not read (a killed perf, data size 0)
    // delivers those records where they stand instead.
    if (options.ordered && attr_index != kNoAttr && (holding || c.owned.empty())) {
      std::optional<uint64_t> time = peek_time(c.bytes, d.formats[attr_index]);
      if (time && *time != 0 && *time != ~uint64_t{0}) {
        if (holding && c.owned.empty()) c.owned.assign(c.bytes.begin(), c.bytes.end());
        queue.push({*time, c.offset, static_cast<uint32_t>(c.bytes.size()), static_cast<uint32_t>(attr_index)},
                   std::move(c.owned));
        return;
      }
    }
    deliver(c.bytes, c.offset, attr_index);
  }

  Impl& d;
  const RecordCallback& callback;
  const ReadOptions options;
  // The queue keeps the bytes of what it holds: a pipe's, and a compressed file's (the records
  // decompressed from it are nowhere else).
  const bool holding;
  OrderedRecords queue;
  std::optional<CompressedRecords> decompressor;
  uint64_t decompressed_limit = 0;  // set with the decompressor
  bool decompression_failed = false;
  ReadStats stats;
  bool stopped = false;
  Record record;
  uint32_t first_unknown_type = 0;
  uint64_t first_unknown_offset = 0;
};

Result<ReadStats> PerfDataReader::read(const RecordCallback& callback, ReadOptions options) {
  Impl& d = *impl_;
  if (d.fd >= 0) {
    if (d.consumed) return Error{"the pipe was already read"};
    d.consumed = true;
  } else {
    if (d.fatal) return *d.fatal;
    d.pos = d.data_offset;  // memory: every read() starts over
    d.stream_end = false;
    d.released = 0;
  }
  return Impl::ReadPass(d, callback, options).run();
}

}  // namespace vperf::data
