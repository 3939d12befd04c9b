#include "data/perf_data_writer.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "core/files.h"
#include "core/strings.h"
#include "core/byte_writer.h"
#include "data/feature_sections.h"
#include "data/perf_data_format.h"
#include "data/topology_features.h"
#include "data/perf_record.h"

namespace vperf::data {
namespace {

constexpr size_t kBufferLimit = 1 << 20;
constexpr uint64_t kFileAttrSize = sizeof(perf_event_attr) + 16;

Result<void> write_all(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("write perf data");
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return {};
}

Result<void> pwrite_all(int fd, std::span<const uint8_t> bytes, uint64_t offset) {
  while (!bytes.empty()) {
    ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("write perf data header");
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return {};
}

void normalize(std::vector<EventAttrEntry>& attrs) {
  for (auto& a : attrs) a.attr.size = sizeof(perf_event_attr);
}

std::vector<uint8_t> file_header(uint64_t attrs_offset, uint64_t attrs_size, uint64_t data_offset, uint64_t data_size,
                                 const uint64_t (&features)[4]) {
  ByteWriter w;
  w.u64(kPerfMagic2);
  w.u64(kFileHeaderSize);
  w.u64(kFileAttrSize);
  w.u64(attrs_offset);
  w.u64(attrs_size);
  w.u64(data_offset);
  w.u64(data_size);
  w.u64(0);  // event_types
  w.u64(0);
  for (uint64_t bits : features) w.u64(bits);
  return w.take();
}

std::string cpuinfo_value(const std::string& cpuinfo, std::string_view key) {
  for (auto line : split(cpuinfo, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (trim(line.substr(0, colon)) == key) return std::string(trim(line.substr(colon + 1)));
  }
  return {};
}

}  // namespace

HeaderFeatures this_machine_features(std::vector<std::string> cmdline) {
  HeaderFeatures f;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) f.hostname = host;
  struct utsname u {};
  if (::uname(&u) == 0) {
    f.osrelease = u.release;
    f.arch = u.machine;
  }
  f.version = std::string(VPERF_VERSION) + " (vperf)";
  if (auto cpuinfo = read_file("/proc/cpuinfo")) {
    // perf squeezes runs of spaces in the model name.
    std::string model = cpuinfo_value(*cpuinfo, "model name");
    std::string squeezed;
    for (char c : model)
      if (!(c == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += c;
    f.cpudesc = squeezed;
    std::string vendor = cpuinfo_value(*cpuinfo, "vendor_id");
    if (!vendor.empty())
      f.cpuid = vendor + "," + cpuinfo_value(*cpuinfo, "cpu family") + "," + cpuinfo_value(*cpuinfo, "model") + "," +
                cpuinfo_value(*cpuinfo, "stepping");
  }
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  f.nr_cpus_online = online > 0 ? static_cast<uint32_t>(online) : 0;
  f.nr_cpus_available = configured > 0 ? static_cast<uint32_t>(configured) : f.nr_cpus_online;
  if (auto meminfo = read_file("/proc/meminfo")) {
    std::string total = cpuinfo_value(*meminfo, "MemTotal");
    if (auto kb = parse_u64(trim(total.substr(0, total.find(' '))))) f.total_mem_kb = *kb;
  }
  f.cmdline = std::move(cmdline);
  for (std::optional<RawFeature> topology : {cpu_topology_feature("/sys/devices/system", f.nr_cpus_available, f.arch),
                                             numa_topology_feature("/sys/devices/system")})
    if (topology) f.other.push_back(std::move(*topology));
  return f;
}

Result<PerfDataWriter> PerfDataWriter::create_file(const std::filesystem::path& path, std::vector<EventAttrEntry> attrs) {
  Result<ScopedFd> created = create_regular_file(path, 0600);
  if (!created) return created.error();
  int fd = created->get();
  PerfDataWriter w;
  w.owned_fd_ = std::move(created).value();
  w.fd_ = fd;
  w.attrs_ = std::move(attrs);
  normalize(w.attrs_);

  // header | ids of attr 0 | ids of attr 1 | ... | perf_file_attr[] | data
  ByteWriter out;
  out.zeros(kFileHeaderSize);
  std::vector<uint64_t> id_offsets;
  for (const auto& a : w.attrs_) {
    id_offsets.push_back(out.size());
    for (uint64_t id : a.ids) out.u64(id);
  }
  w.attrs_offset_ = out.size();
  for (size_t i = 0; i < w.attrs_.size(); ++i) {
    out.put(w.attrs_[i].attr);
    out.u64(id_offsets[i]);
    out.u64(w.attrs_[i].ids.size() * 8);
  }
  w.data_offset_ = out.size();
  const uint64_t no_features[4] = {};
  auto header = file_header(w.attrs_offset_, w.attrs_.size() * kFileAttrSize, w.data_offset_, 0, no_features);
  std::memcpy(out.data().data(), header.data(), header.size());
  VPERF_TRY(write_all(fd, out.data()));
  return w;
}

Result<PerfDataWriter> PerfDataWriter::create_pipe(int fd, std::vector<EventAttrEntry> attrs) {
  PerfDataWriter w;
  w.fd_ = fd;
  w.pipe_ = true;
  w.attrs_ = std::move(attrs);
  normalize(w.attrs_);
  ByteWriter out;
  out.u64(kPerfMagic2);
  out.u64(kPipeHeaderSize);
  for (const auto& a : w.attrs_) {
    Record rec;
    rec.type = kRecordHeaderAttr;
    AttrRecord body;
    body.attr = a.attr;
    body.attr_bytes = sizeof(perf_event_attr);
    body.ids = a.ids;
    rec.body = std::move(body);
    out.bytes(build_record(rec, nullptr));
  }
  VPERF_TRY(write_all(fd, out.data()));
  return w;
}

void PerfDataWriter::note_sample_time(std::span<const uint8_t> record) {
  if (attrs_.empty() || record.size() < 8) return;
  uint32_t type;
  std::memcpy(&type, record.data(), sizeof(type));
  if (type != PERF_RECORD_SAMPLE) return;
  auto time = peek_time(record, SampleFormat::from_attr(attrs_[0].attr));
  if (!time) return;
  if (!first_time_ || *time < *first_time_) first_time_ = *time;
  if (!last_time_ || *time > *last_time_) last_time_ = *time;
}

Result<void> PerfDataWriter::write(std::span<const uint8_t> record) {
  if (finished_) return Error{"write after finish()"};
  note_sample_time(record);
  since_round_ += record.size();
  if (compressor_) {
    // perf compresses the rings' records only: its own (HEADER_TRACING_DATA, whose payload
    // follows the record) go out as they are, after what was compressed before them.
    uint32_t type = 0;
    if (record.size() >= sizeof type) std::memcpy(&type, record.data(), sizeof type);
    if (type < kRecordHeaderAttr) {
      plain_.insert(plain_.end(), record.begin(), record.end());
      plain_total_ += record.size();
      return plain_.size() >= kBufferLimit ? compress_batch() : Result<void>{};
    }
    VPERF_TRY(compress_batch());
  }
  append(record);
  if (buffer_.size() >= kBufferLimit) return flush_buffer();
  return {};
}

void PerfDataWriter::append(std::span<const uint8_t> record) {
  buffer_.insert(buffer_.end(), record.begin(), record.end());
  data_bytes_ += record.size();
}

Result<void> PerfDataWriter::compress(int level, uint32_t mmap_len) {
  VPERF_TRY(RecordCompressor compressor, RecordCompressor::open(level));
  compressor_ = std::move(compressor);
  compression_level_ = level;
  compression_mmap_len_ = mmap_len;
  if (!pipe_) return {};
  // A pipe's reader sizes its decompression buffer from this feature before the first
  // COMPRESSED record (perf fails without it), so it goes now, the ratio not yet known.
  Record feature;
  feature.type = kRecordHeaderFeature;
  feature.body = FeatureRecord{kFeatCompressed, compression_feature(0)};
  append(build_record(feature, nullptr));
  return flush_buffer();
}

// u32 version, type (1: zstd), level, ratio, mmap_len.
std::vector<uint8_t> PerfDataWriter::compression_feature(uint32_t ratio) const {
  ByteWriter feature;
  for (uint32_t word : {1u, 1u, static_cast<uint32_t>(compression_level_), ratio, compression_mmap_len_}) feature.put(word);
  return feature.data();
}

// The batch as COMPRESSED records: a header, then up to kMaxPayload bytes of the stream each
// (header.size is 16 bits; perf leaves the size unaligned too).
Result<void> PerfDataWriter::compress_batch() {
  constexpr size_t kMaxPayload = 0xffff - sizeof(perf_event_header);
  if (plain_.empty()) return {};
  auto write_payload = [this](std::span<const uint8_t> payload) -> Result<void> {
    const perf_event_header header{kRecordCompressed, 0, static_cast<uint16_t>(sizeof(perf_event_header) + payload.size())};
    append(std::span(reinterpret_cast<const uint8_t*>(&header), sizeof header));
    append(payload);
    if (buffer_.size() >= kBufferLimit) return flush_buffer();
    return {};
  };
  // Slices of at most one ring, each flushed: no payload then holds more than a reader sizes
  // its buffer for (perf: the COMPRESSED feature's mmap_len per record).
  const size_t slice = std::max<size_t>(compression_mmap_len_, 4096);
  for (size_t at = 0; at < plain_.size(); at += slice)
    VPERF_TRY(compressor_->compress(std::span<const uint8_t>(plain_).subspan(at, std::min(slice, plain_.size() - at)), kMaxPayload,
                                    write_payload));
  plain_.clear();
  return {};
}

Result<void> PerfDataWriter::flush_buffer() {
  if (buffer_.empty()) return {};
  VPERF_TRY(write_all(fd_, buffer_));
  buffer_.clear();
  return {};
}

Result<void> PerfDataWriter::update_header(uint64_t feature_bits0) {
  if (pipe_) return {};
  const uint64_t features[4] = {feature_bits0, 0, 0, 0};
  auto header = file_header(attrs_offset_, attrs_.size() * kFileAttrSize, data_offset_, data_bytes_, features);
  return pwrite_all(fd_, header, 0);
}

Result<void> PerfDataWriter::flush_round() {
  if (finished_) return Error{"flush_round after finish()"};
  if (compressor_) VPERF_TRY(compress_batch());
  if (since_round_ > 0) {
    perf_event_header round{kRecordFinishedRound, 0, sizeof(perf_event_header)};
    auto bytes = std::span(reinterpret_cast<const uint8_t*>(&round), sizeof(round));
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    data_bytes_ += sizeof(round);
    since_round_ = 0;
  }
  VPERF_TRY(flush_buffer());
  return update_header(0);
}

Result<void> PerfDataWriter::finish(const HeaderFeatures& features) {
  if (finished_) return Error{"finish() called twice"};
  VPERF_TRY(flush_round());
  finished_ = true;
  HeaderFeatures f = features;
  if (compressor_ && !pipe_) {  // a pipe's went ahead of the records (compress())
    const uint64_t packed = std::max<uint64_t>(data_bytes_, 1);
    const auto ratio = static_cast<uint32_t>(static_cast<double>(plain_total_) / static_cast<double>(packed) + 0.5);  // perf rounds it
    f.other.push_back(RawFeature{kFeatCompressed, compression_feature(ratio)});
  }
  if (!f.first_sample_time && first_time_) f.first_sample_time = first_time_;
  if (!f.last_sample_time && last_time_) f.last_sample_time = last_time_;
  auto sections = encode_features(f, attrs_);

  ByteWriter out;
  if (pipe_) {
    for (const auto& s : sections) {
      if (s.feature == kFeatBuildId) {  // perf reads build ids in a pipe only as records
        for (const auto& b : f.build_ids) out.bytes(encode_build_id(b, kRecordHeaderBuildId));
        continue;
      }
      Record rec;
      rec.type = kRecordHeaderFeature;
      rec.body = FeatureRecord{static_cast<uint64_t>(s.feature), s.bytes};
      out.bytes(build_record(rec, nullptr));
    }
    Record last;  // perf's end-of-features mark
    last.type = kRecordHeaderFeature;
    last.body = FeatureRecord{kFeatLast, {}};
    out.bytes(build_record(last, nullptr));
    return write_all(fd_, out.data());
  }

  // Feature table {offset, size}[n] right after the data, then the sections.
  uint64_t table_offset = data_offset_ + data_bytes_;
  uint64_t offset = table_offset + sections.size() * 16;
  for (const auto& s : sections) {
    out.u64(offset);
    out.u64(s.bytes.size());
    offset += s.bytes.size();
  }
  uint64_t words[4] = {};
  for (const auto& s : sections) {
    out.bytes(s.bytes);
    words[s.feature / 64] |= uint64_t{1} << (s.feature % 64);
  }
  VPERF_TRY(pwrite_all(fd_, out.data(), table_offset));
  auto header = file_header(attrs_offset_, attrs_.size() * kFileAttrSize, data_offset_, data_bytes_, words);
  VPERF_TRY(pwrite_all(fd_, header, 0));
  if (::ftruncate(fd_, static_cast<off_t>(table_offset + out.size())) != 0)
    return Error::from_errno("truncate perf data file");
  return {};
}

}  // namespace vperf::data
