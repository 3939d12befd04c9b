#include "data/perf_record.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/strings.h"
#include "core/byte_writer.h"

namespace vperf::data {
namespace {

constexpr size_t kHeaderBytes = sizeof(perf_event_header);

bool has(uint64_t bits, uint64_t flag) { return (bits & flag) != 0; }

std::string record_name(uint32_t type) { return record_type_name(type); }

// A string in a field that need not be NUL-terminated (comm[16], name[64]).
Result<std::string> fixed_string(ByteReader& r, size_t n, std::string_view what) {
  VPERF_TRY(auto field, r.bytes(n, what));
  auto nul = std::find(field.begin(), field.end(), uint8_t{0});
  return std::string(field.begin(), nul);
}

// A NUL-terminated string that fills the rest of the body (padding after the NUL ignored).
Result<std::string> tail_string(ByteReader& r, std::string_view what) {
  VPERF_TRY(auto s, r.c_string(what));
  (void)r.skip(r.remaining());
  return s;
}

// s + NUL, padded with zeros to a multiple of `alignment`.
void put_string_aligned(ByteWriter& w, std::string_view s, size_t alignment) {
  size_t field = (s.size() + 1 + alignment - 1) / alignment * alignment;
  w.padded_string(s, field);
}

// Into `out`, keeping its capacity: a reader that reuses one Sample allocates nothing per record.
// Reads one field of a record into `field` (its type says how many bytes), or returns the
// truncation error naming `what`: ByteReader::take without a Result per field.
#define VPERF_TAKE(reader, field, what) \
  if (!(reader).take(field)) return (reader).truncated(what, sizeof(field))

Result<void> u64_array_into(ByteReader& r, uint64_t nr, std::vector<uint64_t>& out, std::string_view what) {
  std::span<const uint8_t> span;
  if (nr > r.remaining() / 8 || !r.take_bytes(static_cast<size_t>(nr) * 8, span))
    return r.truncated(what, static_cast<size_t>(std::min<uint64_t>(nr, SIZE_MAX / 8) * 8));
  out.resize(static_cast<size_t>(nr));
  if (nr != 0) std::memcpy(out.data(), span.data(), span.size());
  return {};
}

Result<std::vector<uint64_t>> u64_array(ByteReader& r, uint64_t nr, std::string_view what) {
  std::vector<uint64_t> out;
  VPERF_TRY(u64_array_into(r, nr, out, what));
  return out;
}

Result<void> byte_vector_into(ByteReader& r, uint64_t n, std::vector<uint8_t>& out, std::string_view what) {
  std::span<const uint8_t> span;
  if (n > r.remaining() || !r.take_bytes(static_cast<size_t>(n), span))
    return r.truncated(what, static_cast<size_t>(std::min<uint64_t>(n, SIZE_MAX)));
  out.assign(span.begin(), span.end());
  return {};
}

Result<std::vector<uint8_t>> byte_vector(ByteReader& r, uint64_t n, std::string_view what) {
  std::vector<uint8_t> out;
  VPERF_TRY(byte_vector_into(r, n, out, what));
  return out;
}

// Size in u64 of one read_format block for `nr` group members.
uint64_t read_format_words(uint64_t read_format, uint64_t nr) {
  uint64_t common = (has(read_format, PERF_FORMAT_TOTAL_TIME_ENABLED) ? 1 : 0) +
                    (has(read_format, PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1 : 0);
  uint64_t per_value = 1 + (has(read_format, PERF_FORMAT_ID) ? 1 : 0) + (has(read_format, PERF_FORMAT_LOST) ? 1 : 0);
  if (has(read_format, PERF_FORMAT_GROUP)) return 1 + common + nr * per_value;
  return common + per_value;
}

Result<void> read_block_into(ByteReader& r, uint64_t read_format, std::vector<uint8_t>& out) {
  uint64_t words = 0;
  if (has(read_format, PERF_FORMAT_GROUP)) {
    auto peek = r;
    VPERF_TRY(uint64_t nr, peek.u64("read_format nr"));
    if (nr > r.remaining() / 8) return r.truncated("read_format values", r.remaining() + 1);
    words = read_format_words(read_format, nr);
  } else {
    words = read_format_words(read_format, 1);
  }
  if (words > r.remaining() / 8) return r.truncated("read_format values", r.remaining() + 1);
  return byte_vector_into(r, words * 8, out, "read_format values");
}

Result<void> parse_regs(ByteReader& r, uint64_t mask, uint64_t& abi, std::vector<uint64_t>& regs, std::string_view what) {
  VPERF_TRY(abi, r.u64(what));
  regs.clear();
  if (abi != 0) {
    VPERF_TRY(u64_array_into(r, static_cast<uint64_t>(std::popcount(mask)), regs, what));
  }
  return {};
}

void put_regs(ByteWriter& w, uint64_t mask, uint64_t abi, const std::vector<uint64_t>& regs) {
  w.u64(abi);
  if (abi == 0) return;
  size_t n = static_cast<size_t>(std::popcount(mask));
  for (size_t i = 0; i < n; ++i) w.u64(i < regs.size() ? regs[i] : 0);
}

// Refills `s` (whatever it held) from a SAMPLE's body; its vectors keep their capacity.
Result<void> parse_sample_into(ByteReader& r, const SampleFormat& f, SampleId& sid, Sample& s) {
  for (std::vector<uint8_t>* bytes : {&s.read, &s.raw, &s.branch_stack, &s.stack_user, &s.aux}) bytes->clear();
  for (std::vector<uint64_t>* words : {&s.callchain, &s.regs_user, &s.regs_intr}) words->clear();
  s.ip = s.addr = s.period = s.regs_user_abi = s.stack_user_dyn_size = s.weight = s.data_src = s.transaction = 0;
  s.regs_intr_abi = s.phys_addr = s.cgroup = s.data_page_size = s.code_page_size = 0;
  uint64_t t = f.sample_type;
  if (has(t, PERF_SAMPLE_IDENTIFIER)) { VPERF_TAKE(r, sid.id, "sample identifier"); }
  if (has(t, PERF_SAMPLE_IP)) { VPERF_TAKE(r, s.ip, "sample ip"); }
  if (has(t, PERF_SAMPLE_TID)) {
    VPERF_TAKE(r, sid.pid, "sample pid");
    VPERF_TAKE(r, sid.tid, "sample tid");
  }
  if (has(t, PERF_SAMPLE_TIME)) { VPERF_TAKE(r, sid.time, "sample time"); }
  if (has(t, PERF_SAMPLE_ADDR)) { VPERF_TAKE(r, s.addr, "sample addr"); }
  if (has(t, PERF_SAMPLE_ID)) { VPERF_TAKE(r, sid.id, "sample id"); }
  if (has(t, PERF_SAMPLE_STREAM_ID)) { VPERF_TAKE(r, sid.stream_id, "sample stream_id"); }
  if (has(t, PERF_SAMPLE_CPU)) {
    VPERF_TAKE(r, sid.cpu, "sample cpu");
    VPERF_TAKE(r, sid.cpu_res, "sample cpu");
  }
  if (has(t, PERF_SAMPLE_PERIOD)) { VPERF_TAKE(r, s.period, "sample period"); }
  if (has(t, PERF_SAMPLE_READ)) { VPERF_TRY(read_block_into(r, f.read_format, s.read)); }
  if (has(t, PERF_SAMPLE_CALLCHAIN)) {
    uint64_t nr = 0;
    VPERF_TAKE(r, nr, "callchain nr");
    VPERF_TRY(u64_array_into(r, nr, s.callchain, "callchain"));
  }
  if (has(t, PERF_SAMPLE_RAW)) {
    uint32_t size = 0;
    VPERF_TAKE(r, size, "raw size");
    VPERF_TRY(byte_vector_into(r, size, s.raw, "raw data"));
  }
  if (has(t, PERF_SAMPLE_BRANCH_STACK)) {
    auto peek = r;
    uint64_t nr = 0;
    VPERF_TAKE(peek, nr, "branch stack nr");
    uint64_t fixed = has(f.branch_sample_type, PERF_SAMPLE_BRANCH_HW_INDEX) ? 16 : 8;
    if (nr > r.remaining() / 24) return r.truncated("branch stack", r.remaining() + 1);
    VPERF_TRY(byte_vector_into(r, fixed + nr * 24, s.branch_stack, "branch stack"));
  }
  if (has(t, PERF_SAMPLE_REGS_USER)) {
    VPERF_TRY(parse_regs(r, f.regs_user_mask, s.regs_user_abi, s.regs_user, "user regs"));
  }
  if (has(t, PERF_SAMPLE_STACK_USER)) {
    uint64_t size = 0;
    VPERF_TAKE(r, size, "user stack size");
    VPERF_TRY(byte_vector_into(r, size, s.stack_user, "user stack"));
    if (size != 0) { VPERF_TAKE(r, s.stack_user_dyn_size, "user stack dyn_size"); }
  }
  if (has(t, PERF_SAMPLE_WEIGHT_TYPE)) { VPERF_TAKE(r, s.weight, "sample weight"); }
  if (has(t, PERF_SAMPLE_DATA_SRC)) { VPERF_TAKE(r, s.data_src, "sample data_src"); }
  if (has(t, PERF_SAMPLE_TRANSACTION)) { VPERF_TAKE(r, s.transaction, "sample transaction"); }
  if (has(t, PERF_SAMPLE_REGS_INTR)) {
    VPERF_TRY(parse_regs(r, f.regs_intr_mask, s.regs_intr_abi, s.regs_intr, "intr regs"));
  }
  if (has(t, PERF_SAMPLE_PHYS_ADDR)) { VPERF_TAKE(r, s.phys_addr, "sample phys_addr"); }
  if (has(t, PERF_SAMPLE_CGROUP)) { VPERF_TAKE(r, s.cgroup, "sample cgroup"); }
  if (has(t, PERF_SAMPLE_DATA_PAGE_SIZE)) { VPERF_TAKE(r, s.data_page_size, "sample data_page_size"); }
  if (has(t, PERF_SAMPLE_CODE_PAGE_SIZE)) { VPERF_TAKE(r, s.code_page_size, "sample code_page_size"); }
  if (has(t, PERF_SAMPLE_AUX)) {
    uint64_t size = 0;
    VPERF_TAKE(r, size, "aux size");
    VPERF_TRY(byte_vector_into(r, size, s.aux, "aux data"));
  }
  return {};
}

void put_sample(ByteWriter& w, const Sample& s, const SampleFormat& f, const SampleId& sid) {
  uint64_t t = f.sample_type;
  if (has(t, PERF_SAMPLE_IDENTIFIER)) w.u64(sid.id);
  if (has(t, PERF_SAMPLE_IP)) w.u64(s.ip);
  if (has(t, PERF_SAMPLE_TID)) { w.u32(sid.pid); w.u32(sid.tid); }
  if (has(t, PERF_SAMPLE_TIME)) w.u64(sid.time);
  if (has(t, PERF_SAMPLE_ADDR)) w.u64(s.addr);
  if (has(t, PERF_SAMPLE_ID)) w.u64(sid.id);
  if (has(t, PERF_SAMPLE_STREAM_ID)) w.u64(sid.stream_id);
  if (has(t, PERF_SAMPLE_CPU)) { w.u32(sid.cpu); w.u32(sid.cpu_res); }
  if (has(t, PERF_SAMPLE_PERIOD)) w.u64(s.period);
  if (has(t, PERF_SAMPLE_READ)) {
    if (s.read.empty()) w.zeros(read_format_words(f.read_format, 0) * 8);  // a group of 0
    else w.bytes(s.read);
  }
  if (has(t, PERF_SAMPLE_CALLCHAIN)) {
    w.u64(s.callchain.size());
    for (uint64_t ip : s.callchain) w.u64(ip);
  }
  if (has(t, PERF_SAMPLE_RAW)) {
    w.u32(static_cast<uint32_t>(s.raw.size()));
    w.bytes(s.raw);
  }
  if (has(t, PERF_SAMPLE_BRANCH_STACK)) {
    if (s.branch_stack.empty()) w.zeros(has(f.branch_sample_type, PERF_SAMPLE_BRANCH_HW_INDEX) ? 16 : 8);
    else w.bytes(s.branch_stack);
  }
  if (has(t, PERF_SAMPLE_REGS_USER)) put_regs(w, f.regs_user_mask, s.regs_user_abi, s.regs_user);
  if (has(t, PERF_SAMPLE_STACK_USER)) {
    w.u64(s.stack_user.size());
    w.bytes(s.stack_user);
    if (!s.stack_user.empty()) w.u64(s.stack_user_dyn_size);
  }
  if (has(t, PERF_SAMPLE_WEIGHT_TYPE)) w.u64(s.weight);
  if (has(t, PERF_SAMPLE_DATA_SRC)) w.u64(s.data_src);
  if (has(t, PERF_SAMPLE_TRANSACTION)) w.u64(s.transaction);
  if (has(t, PERF_SAMPLE_REGS_INTR)) put_regs(w, f.regs_intr_mask, s.regs_intr_abi, s.regs_intr);
  if (has(t, PERF_SAMPLE_PHYS_ADDR)) w.u64(s.phys_addr);
  if (has(t, PERF_SAMPLE_CGROUP)) w.u64(s.cgroup);
  if (has(t, PERF_SAMPLE_DATA_PAGE_SIZE)) w.u64(s.data_page_size);
  if (has(t, PERF_SAMPLE_CODE_PAGE_SIZE)) w.u64(s.code_page_size);
  if (has(t, PERF_SAMPLE_AUX)) {
    w.u64(s.aux.size());
    w.bytes(s.aux);
  }
}

Result<void> parse_trailer(ByteReader& r, const SampleFormat& f, SampleId& sid) {
  uint64_t t = f.sample_type;
  if (has(t, PERF_SAMPLE_TID)) {
    VPERF_TRY(sid.pid, r.u32("sample_id pid"));
    VPERF_TRY(sid.tid, r.u32("sample_id tid"));
  }
  if (has(t, PERF_SAMPLE_TIME)) { VPERF_TRY(sid.time, r.u64("sample_id time")); }
  if (has(t, PERF_SAMPLE_ID)) { VPERF_TRY(sid.id, r.u64("sample_id id")); }
  if (has(t, PERF_SAMPLE_STREAM_ID)) { VPERF_TRY(sid.stream_id, r.u64("sample_id stream_id")); }
  if (has(t, PERF_SAMPLE_CPU)) {
    VPERF_TRY(sid.cpu, r.u32("sample_id cpu"));
    VPERF_TRY(sid.cpu_res, r.u32("sample_id cpu"));
  }
  if (has(t, PERF_SAMPLE_IDENTIFIER)) { VPERF_TRY(sid.id, r.u64("sample_id identifier")); }
  return {};
}

void put_trailer(ByteWriter& w, const SampleFormat& f, const SampleId& sid) {
  uint64_t t = f.sample_type;
  if (has(t, PERF_SAMPLE_TID)) { w.u32(sid.pid); w.u32(sid.tid); }
  if (has(t, PERF_SAMPLE_TIME)) w.u64(sid.time);
  if (has(t, PERF_SAMPLE_ID)) w.u64(sid.id);
  if (has(t, PERF_SAMPLE_STREAM_ID)) w.u64(sid.stream_id);
  if (has(t, PERF_SAMPLE_CPU)) { w.u32(sid.cpu); w.u32(sid.cpu_res); }
  if (has(t, PERF_SAMPLE_IDENTIFIER)) w.u64(sid.id);
}

bool is_kernel_type(uint32_t type) { return type < kRecordHeaderAttr; }

// Kernel record bodies (after the header, before the trailer).
// ---- record bodies: each type's decoding and encoding side by side -------------------------
//
// RecordCodec<Body>::decode reads a body from the bytes after the header (a kernel record's
// without its sample_id trailer; `payload` is what follows a record whose header.size leaves
// it out: tracing data, auxtrace), and encode writes the same bytes back. decode_body maps a
// record type to its codec; encode_body goes by the body's type.

// What a body's layout depends on besides its own fields.
struct BodyLayout {
  uint32_t type = 0;
  uint16_t misc = 0;
  std::span<const uint8_t> payload;
};

template <class Body>
struct RecordCodec;

template <>
struct RecordCodec<MmapRecord> {
  static Result<MmapRecord> decode(ByteReader& r, const BodyLayout&) {
    MmapRecord m;
    VPERF_TRY(m.pid, r.u32("mmap pid"));
    VPERF_TRY(m.tid, r.u32("mmap tid"));
    VPERF_TRY(m.addr, r.u64("mmap addr"));
    VPERF_TRY(m.len, r.u64("mmap len"));
    VPERF_TRY(m.pgoff, r.u64("mmap pgoff"));
    VPERF_TRY(m.filename, tail_string(r, "mmap filename"));
    return m;
  }
  static void encode(ByteWriter& w, const MmapRecord& m, const BodyLayout&) {
    w.u32(m.pid); w.u32(m.tid); w.u64(m.addr); w.u64(m.len); w.u64(m.pgoff);
    put_string_aligned(w, m.filename, 8);
  }
};

// With PERF_RECORD_MISC_MMAP_BUILD_ID the device and inode fields hold the build-id instead.
template <>
struct RecordCodec<Mmap2Record> {
  static Result<Mmap2Record> decode(ByteReader& r, const BodyLayout& at) {
    Mmap2Record m;
    VPERF_TRY(m.pid, r.u32("mmap2 pid"));
    VPERF_TRY(m.tid, r.u32("mmap2 tid"));
    VPERF_TRY(m.addr, r.u64("mmap2 addr"));
    VPERF_TRY(m.len, r.u64("mmap2 len"));
    VPERF_TRY(m.pgoff, r.u64("mmap2 pgoff"));
    if (has(at.misc, PERF_RECORD_MISC_MMAP_BUILD_ID)) {
      VPERF_TRY(uint8_t size, r.u8("mmap2 build_id_size"));
      VPERF_TRY(r.bytes(3, "mmap2 reserved"));
      VPERF_TRY(auto id, r.bytes(20, "mmap2 build_id"));
      m.build_id.assign(id.begin(), id.begin() + std::min<size_t>(size, 20));
    } else {
      VPERF_TRY(m.maj, r.u32("mmap2 maj"));
      VPERF_TRY(m.min, r.u32("mmap2 min"));
      VPERF_TRY(m.ino, r.u64("mmap2 ino"));
      VPERF_TRY(m.ino_generation, r.u64("mmap2 ino_generation"));
    }
    VPERF_TRY(m.prot, r.u32("mmap2 prot"));
    VPERF_TRY(m.flags, r.u32("mmap2 flags"));
    VPERF_TRY(m.filename, tail_string(r, "mmap2 filename"));
    return m;
  }
  static void encode(ByteWriter& w, const Mmap2Record& m, const BodyLayout& at) {
    w.u32(m.pid); w.u32(m.tid); w.u64(m.addr); w.u64(m.len); w.u64(m.pgoff);
    if (has(at.misc, PERF_RECORD_MISC_MMAP_BUILD_ID)) {
      size_t n = std::min<size_t>(m.build_id.size(), 20);
      w.u8(static_cast<uint8_t>(n));
      w.zeros(3);
      w.bytes(std::span(m.build_id).first(n));
      w.zeros(20 - n);
    } else {
      w.u32(m.maj); w.u32(m.min); w.u64(m.ino); w.u64(m.ino_generation);
    }
    w.u32(m.prot); w.u32(m.flags);
    put_string_aligned(w, m.filename, 8);
  }
};

template <>
struct RecordCodec<CommRecord> {
  static Result<CommRecord> decode(ByteReader& r, const BodyLayout&) {
    CommRecord c;
    VPERF_TRY(c.pid, r.u32("comm pid"));
    VPERF_TRY(c.tid, r.u32("comm tid"));
    VPERF_TRY(c.comm, tail_string(r, "comm"));
    return c;
  }
  static void encode(ByteWriter& w, const CommRecord& c, const BodyLayout&) {
    w.u32(c.pid); w.u32(c.tid);
    put_string_aligned(w, c.comm, 8);
  }
};

// FORK and EXIT.
template <>
struct RecordCodec<TaskRecord> {
  static Result<TaskRecord> decode(ByteReader& r, const BodyLayout&) {
    TaskRecord t;
    VPERF_TRY(t.pid, r.u32("task pid"));
    VPERF_TRY(t.ppid, r.u32("task ppid"));
    VPERF_TRY(t.tid, r.u32("task tid"));
    VPERF_TRY(t.ptid, r.u32("task ptid"));
    VPERF_TRY(t.time, r.u64("task time"));
    return t;
  }
  static void encode(ByteWriter& w, const TaskRecord& t, const BodyLayout&) {
    w.u32(t.pid); w.u32(t.ppid); w.u32(t.tid); w.u32(t.ptid); w.u64(t.time);
  }
};

template <>
struct RecordCodec<ReadRecord> {
  static Result<ReadRecord> decode(ByteReader& r, const BodyLayout&) {
    ReadRecord read;
    VPERF_TRY(read.pid, r.u32("read pid"));
    VPERF_TRY(read.tid, r.u32("read tid"));
    if (r.remaining() < sizeof(uint64_t)) return Error{"READ record without a count"};
    VPERF_TRY(read.values, byte_vector(r, r.remaining(), "read values"));
    return read;
  }
  static void encode(ByteWriter& w, const ReadRecord& read, const BodyLayout&) {
    w.u32(read.pid); w.u32(read.tid); w.bytes(read.values);
  }
};

template <>
struct RecordCodec<LostRecord> {
  static Result<LostRecord> decode(ByteReader& r, const BodyLayout&) {
    LostRecord l;
    VPERF_TRY(l.id, r.u64("lost id"));
    VPERF_TRY(l.lost, r.u64("lost count"));
    return l;
  }
  static void encode(ByteWriter& w, const LostRecord& l, const BodyLayout&) { w.u64(l.id); w.u64(l.lost); }
};

template <>
struct RecordCodec<LostSamplesRecord> {
  static Result<LostSamplesRecord> decode(ByteReader& r, const BodyLayout&) {
    LostSamplesRecord l;
    VPERF_TRY(l.lost, r.u64("lost samples"));
    return l;
  }
  static void encode(ByteWriter& w, const LostSamplesRecord& l, const BodyLayout&) { w.u64(l.lost); }
};

// THROTTLE and UNTHROTTLE.
template <>
struct RecordCodec<ThrottleRecord> {
  static Result<ThrottleRecord> decode(ByteReader& r, const BodyLayout&) {
    ThrottleRecord t;
    VPERF_TRY(t.time, r.u64("throttle time"));
    VPERF_TRY(t.id, r.u64("throttle id"));
    VPERF_TRY(t.stream_id, r.u64("throttle stream_id"));
    return t;
  }
  static void encode(ByteWriter& w, const ThrottleRecord& t, const BodyLayout&) { w.u64(t.time); w.u64(t.id); w.u64(t.stream_id); }
};

template <>
struct RecordCodec<KsymbolRecord> {
  static Result<KsymbolRecord> decode(ByteReader& r, const BodyLayout&) {
    KsymbolRecord k;
    VPERF_TRY(k.addr, r.u64("ksymbol addr"));
    VPERF_TRY(k.len, r.u32("ksymbol len"));
    VPERF_TRY(k.ksym_type, r.u16("ksymbol type"));
    VPERF_TRY(k.flags, r.u16("ksymbol flags"));
    VPERF_TRY(k.name, tail_string(r, "ksymbol name"));
    return k;
  }
  static void encode(ByteWriter& w, const KsymbolRecord& k, const BodyLayout&) {
    w.u64(k.addr); w.u32(k.len); w.u16(k.ksym_type); w.u16(k.flags);
    put_string_aligned(w, k.name, 8);
  }
};

template <>
struct RecordCodec<BpfEventRecord> {
  static Result<BpfEventRecord> decode(ByteReader& r, const BodyLayout&) {
    BpfEventRecord b;
    VPERF_TRY(b.type, r.u16("bpf_event type"));
    VPERF_TRY(b.flags, r.u16("bpf_event flags"));
    VPERF_TRY(b.id, r.u32("bpf_event id"));
    VPERF_TRY(auto tag, r.bytes(8, "bpf_event tag"));
    std::copy(tag.begin(), tag.end(), b.tag.begin());
    return b;
  }
  static void encode(ByteWriter& w, const BpfEventRecord& b, const BodyLayout&) {
    w.u16(b.type); w.u16(b.flags); w.u32(b.id); w.bytes(b.tag);
  }
};

template <>
struct RecordCodec<TextPokeRecord> {
  static Result<TextPokeRecord> decode(ByteReader& r, const BodyLayout&) {
    TextPokeRecord p;
    VPERF_TRY(p.addr, r.u64("text_poke addr"));
    VPERF_TRY(uint16_t old_len, r.u16("text_poke old_len"));
    VPERF_TRY(uint16_t new_len, r.u16("text_poke new_len"));
    VPERF_TRY(p.old_bytes, byte_vector(r, old_len, "text_poke old bytes"));
    VPERF_TRY(p.new_bytes, byte_vector(r, new_len, "text_poke new bytes"));
    (void)r.skip(r.remaining());  // alignment padding
    return p;
  }
  static void encode(ByteWriter& w, const TextPokeRecord& p, const BodyLayout&) {
    w.u64(p.addr); w.u16(static_cast<uint16_t>(p.old_bytes.size())); w.u16(static_cast<uint16_t>(p.new_bytes.size()));
    w.bytes(p.old_bytes); w.bytes(p.new_bytes);
    w.align(8);  // the 8-byte header keeps the alignment
  }
};

template <>
struct RecordCodec<CgroupRecord> {
  static Result<CgroupRecord> decode(ByteReader& r, const BodyLayout&) {
    CgroupRecord c;
    VPERF_TRY(c.id, r.u64("cgroup id"));
    VPERF_TRY(c.path, tail_string(r, "cgroup path"));
    return c;
  }
  static void encode(ByteWriter& w, const CgroupRecord& c, const BodyLayout&) { w.u64(c.id); put_string_aligned(w, c.path, 8); }
};

// SWITCH has no body; SWITCH_CPU_WIDE names the task switched to or from.
template <>
struct RecordCodec<SwitchRecord> {
  static Result<SwitchRecord> decode(ByteReader& r, const BodyLayout& at) {
    SwitchRecord s;
    if (at.type != PERF_RECORD_SWITCH_CPU_WIDE) return s;
    VPERF_TRY(s.next_prev_pid, r.u32("switch next_prev_pid"));
    VPERF_TRY(s.next_prev_tid, r.u32("switch next_prev_tid"));
    return s;
  }
  static void encode(ByteWriter& w, const SwitchRecord& s, const BodyLayout& at) {
    if (at.type == PERF_RECORD_SWITCH_CPU_WIDE) { w.u32(s.next_prev_pid); w.u32(s.next_prev_tid); }
  }
};

// FINISHED_ROUND and FINISHED_INIT: a header alone.
template <>
struct RecordCodec<FinishedRoundRecord> {
  static Result<FinishedRoundRecord> decode(ByteReader&, const BodyLayout&) { return FinishedRoundRecord{}; }
  static void encode(ByteWriter&, const FinishedRoundRecord&, const BodyLayout&) {}
};

// HEADER_ATTR: the attr as the writer's perf sized it (attr.size), then the event's ids.
template <>
struct RecordCodec<AttrRecord> {
  static Result<AttrRecord> decode(ByteReader& r, const BodyLayout&) {
    AttrRecord a;
    VPERF_TRY(size_t size, attr_size_in(r.rest()));
    VPERF_TRY(auto attr_bytes, r.bytes(size, "attr"));
    VPERF_TRY(a.attr, attr_from_bytes(attr_bytes));
    a.attr_bytes = size;
    VPERF_TRY(a.ids, u64_array(r, r.remaining() / 8, "attr ids"));
    return a;
  }
  static void encode(ByteWriter& w, const AttrRecord& a, const BodyLayout&) {
    size_t n = a.attr_bytes ? a.attr_bytes : sizeof(perf_event_attr);
    size_t copy = std::min(n, sizeof(perf_event_attr));
    w.bytes(std::span(reinterpret_cast<const uint8_t*>(&a.attr), copy));
    w.zeros(n - copy);
    for (uint64_t id : a.ids) w.u64(id);
  }
};

template <>
struct RecordCodec<EventTypeRecord> {
  static Result<EventTypeRecord> decode(ByteReader& r, const BodyLayout&) {
    EventTypeRecord e;
    VPERF_TRY(e.event_id, r.u64("event_type id"));
    VPERF_TRY(e.name, fixed_string(r, 64, "event_type name"));
    return e;
  }
  static void encode(ByteWriter& w, const EventTypeRecord& e, const BodyLayout&) {
    w.u64(e.event_id); w.padded_string(e.name.substr(0, 63), 64);
  }
};

// HEADER_TRACING_DATA: header.size (16, as perf writes it) covers the size field and 4 bytes of
// padding; the tracing data follows as the payload.
template <>
struct RecordCodec<TracingDataRecord> {
  static Result<TracingDataRecord> decode(ByteReader& r, const BodyLayout& at) {
    TracingDataRecord t;
    VPERF_TRY(t.size, r.u32("tracing_data size"));
    (void)r.skip(r.remaining());
    t.data.assign(at.payload.begin(), at.payload.end());
    return t;
  }
  static void encode(ByteWriter& w, const TracingDataRecord& t, const BodyLayout&) { w.u32(t.size); w.u32(0); }
};

// HEADER_BUILD_ID: with kMiscBuildIdSize the build-id's size is in the byte after it.
template <>
struct RecordCodec<BuildIdRecord> {
  static Result<BuildIdRecord> decode(ByteReader& r, const BodyLayout& at) {
    BuildIdRecord b;
    VPERF_TRY(b.pid, r.read_struct<int32_t>("build_id pid"));
    VPERF_TRY(auto id, r.bytes(24, "build_id"));
    size_t n = has(at.misc, kMiscBuildIdSize) ? std::min<size_t>(id[20], 20) : 20;
    b.build_id.assign(id.begin(), id.begin() + static_cast<std::ptrdiff_t>(n));
    b.filename_field = static_cast<uint32_t>(r.remaining());
    VPERF_TRY(b.filename, tail_string(r, "build_id filename"));
    return b;
  }
  static void encode(ByteWriter& w, const BuildIdRecord& b, const BodyLayout& at) {
    w.put<int32_t>(b.pid);
    size_t n = std::min<size_t>(b.build_id.size(), 20);
    w.bytes(std::span(b.build_id).first(n));
    w.zeros(20 - n);
    if (has(at.misc, kMiscBuildIdSize)) { w.u8(static_cast<uint8_t>(n)); w.zeros(3); }
    else w.zeros(4);
    size_t need = b.filename.size() + 1;
    size_t field = b.filename_field >= need ? b.filename_field : (need + kNameAlign - 1) / kNameAlign * kNameAlign;
    w.padded_string(b.filename, field);
  }
};

template <>
struct RecordCodec<IdIndexRecord> {
  static Result<IdIndexRecord> decode(ByteReader& r, const BodyLayout&) {
    IdIndexRecord x;
    VPERF_TRY(uint64_t nr, r.u64("id_index nr"));
    if (nr > r.remaining() / 32) return r.truncated("id_index entries", r.remaining() + 1);
    x.entries.resize(static_cast<size_t>(nr));
    for (auto& e : x.entries) {
      VPERF_TRY(e.id, r.u64("id_index id"));
      VPERF_TRY(e.idx, r.u64("id_index idx"));
      VPERF_TRY(e.cpu, r.u64("id_index cpu"));
      VPERF_TRY(e.tid, r.u64("id_index tid"));
    }
    return x;
  }
  static void encode(ByteWriter& w, const IdIndexRecord& x, const BodyLayout&) {
    w.u64(x.entries.size());
    for (const auto& e : x.entries) { w.u64(e.id); w.u64(e.idx); w.u64(e.cpu); w.u64(e.tid); }
  }
};

template <>
struct RecordCodec<AuxtraceInfoRecord> {
  static Result<AuxtraceInfoRecord> decode(ByteReader& r, const BodyLayout&) {
    AuxtraceInfoRecord a;
    VPERF_TRY(a.type, r.u32("auxtrace_info type"));
    VPERF_TRY(r.u32("auxtrace_info reserved"));
    VPERF_TRY(a.priv, u64_array(r, r.remaining() / 8, "auxtrace_info priv"));
    return a;
  }
  static void encode(ByteWriter& w, const AuxtraceInfoRecord& a, const BodyLayout&) {
    w.u32(a.type); w.u32(0);
    for (uint64_t p : a.priv) w.u64(p);
  }
};

// AUXTRACE: the trace data follows as the payload, its size in the first field.
template <>
struct RecordCodec<AuxtraceRecord> {
  static Result<AuxtraceRecord> decode(ByteReader& r, const BodyLayout& at) {
    AuxtraceRecord a;
    VPERF_TRY(r.u64("auxtrace size"));
    VPERF_TRY(a.offset, r.u64("auxtrace offset"));
    VPERF_TRY(a.reference, r.u64("auxtrace reference"));
    VPERF_TRY(a.idx, r.u32("auxtrace idx"));
    VPERF_TRY(a.tid, r.u32("auxtrace tid"));
    VPERF_TRY(a.cpu, r.u32("auxtrace cpu"));
    VPERF_TRY(r.u32("auxtrace reserved"));
    a.data.assign(at.payload.begin(), at.payload.end());
    return a;
  }
  static void encode(ByteWriter& w, const AuxtraceRecord& a, const BodyLayout&) {
    w.u64(a.data.size()); w.u64(a.offset); w.u64(a.reference);
    w.u32(a.idx); w.u32(a.tid); w.u32(a.cpu); w.u32(0);
  }
};

template <>
struct RecordCodec<ThreadMapRecord> {
  static Result<ThreadMapRecord> decode(ByteReader& r, const BodyLayout&) {
    ThreadMapRecord t;
    VPERF_TRY(uint64_t nr, r.u64("thread_map nr"));
    if (nr > r.remaining() / 24) return r.truncated("thread_map entries", r.remaining() + 1);
    t.entries.resize(static_cast<size_t>(nr));
    for (auto& e : t.entries) {
      VPERF_TRY(e.pid, r.u64("thread_map pid"));
      VPERF_TRY(e.comm, fixed_string(r, 16, "thread_map comm"));
    }
    return t;
  }
  static void encode(ByteWriter& w, const ThreadMapRecord& t, const BodyLayout&) {
    w.u64(t.entries.size());
    for (const auto& e : t.entries) { w.u64(e.pid); w.padded_string(e.comm.substr(0, 15), 16); }
  }
};

template <>
struct RecordCodec<StatConfigRecord> {
  static Result<StatConfigRecord> decode(ByteReader& r, const BodyLayout&) {
    StatConfigRecord s;
    VPERF_TRY(uint64_t nr, r.u64("stat_config nr"));
    if (nr > r.remaining() / 16) return r.truncated("stat_config entries", r.remaining() + 1);
    s.entries.resize(static_cast<size_t>(nr));
    for (auto& [tag, val] : s.entries) {
      VPERF_TRY(tag, r.u64("stat_config tag"));
      VPERF_TRY(val, r.u64("stat_config val"));
    }
    return s;
  }
  static void encode(ByteWriter& w, const StatConfigRecord& s, const BodyLayout&) {
    w.u64(s.entries.size());
    for (const auto& [tag, val] : s.entries) { w.u64(tag); w.u64(val); }
  }
};

template <>
struct RecordCodec<StatRecord> {
  static Result<StatRecord> decode(ByteReader& r, const BodyLayout&) {
    StatRecord s;
    VPERF_TRY(s.id, r.u64("stat id"));
    VPERF_TRY(s.cpu, r.u32("stat cpu"));
    VPERF_TRY(s.thread, r.u32("stat thread"));
    VPERF_TRY(s.val, r.u64("stat val"));
    VPERF_TRY(s.ena, r.u64("stat ena"));
    VPERF_TRY(s.run, r.u64("stat run"));
    return s;
  }
  static void encode(ByteWriter& w, const StatRecord& s, const BodyLayout&) {
    w.u64(s.id); w.u32(s.cpu); w.u32(s.thread); w.u64(s.val); w.u64(s.ena); w.u64(s.run);
  }
};

template <>
struct RecordCodec<StatRoundRecord> {
  static Result<StatRoundRecord> decode(ByteReader& r, const BodyLayout&) {
    StatRoundRecord s;
    VPERF_TRY(s.type, r.u64("stat_round type"));
    VPERF_TRY(s.time, r.u64("stat_round time"));
    return s;
  }
  static void encode(ByteWriter& w, const StatRoundRecord& s, const BodyLayout&) { w.u64(s.type); w.u64(s.time); }
};

template <>
struct RecordCodec<EventUpdateRecord> {
  static Result<EventUpdateRecord> decode(ByteReader& r, const BodyLayout&) {
    EventUpdateRecord e;
    VPERF_TRY(e.type, r.u64("event_update type"));
    VPERF_TRY(e.id, r.u64("event_update id"));
    VPERF_TRY(e.data, byte_vector(r, r.remaining(), "event_update data"));
    return e;
  }
  static void encode(ByteWriter& w, const EventUpdateRecord& e, const BodyLayout&) { w.u64(e.type); w.u64(e.id); w.bytes(e.data); }
};

// TIME_CONV: perf before 5.13 wrote the first three fields only.
template <>
struct RecordCodec<TimeConvRecord> {
  static Result<TimeConvRecord> decode(ByteReader& r, const BodyLayout&) {
    TimeConvRecord t;
    VPERF_TRY(t.time_shift, r.u64("time_conv time_shift"));
    VPERF_TRY(t.time_mult, r.u64("time_conv time_mult"));
    VPERF_TRY(t.time_zero, r.u64("time_conv time_zero"));
    if (r.remaining() >= 24) {
      VPERF_TRY(t.time_cycles, r.u64("time_conv time_cycles"));
      VPERF_TRY(t.time_mask, r.u64("time_conv time_mask"));
      VPERF_TRY(t.cap_user_time_zero, r.u8("time_conv cap_user_time_zero"));
      VPERF_TRY(t.cap_user_time_short, r.u8("time_conv cap_user_time_short"));
      VPERF_TRY(r.bytes(6, "time_conv reserved"));
    }
    return t;
  }
  static void encode(ByteWriter& w, const TimeConvRecord& t, const BodyLayout&) {
    w.u64(t.time_shift); w.u64(t.time_mult); w.u64(t.time_zero);
    if (t.time_cycles || t.time_mask) {
      w.u64(t.time_cycles.value_or(0)); w.u64(t.time_mask.value_or(0));
      w.u8(t.cap_user_time_zero); w.u8(t.cap_user_time_short); w.zeros(6);
    }
  }
};

template <>
struct RecordCodec<FeatureRecord> {
  static Result<FeatureRecord> decode(ByteReader& r, const BodyLayout&) {
    FeatureRecord f;
    VPERF_TRY(f.feature, r.u64("feature id"));
    VPERF_TRY(f.data, byte_vector(r, r.remaining(), "feature data"));
    return f;
  }
  static void encode(ByteWriter& w, const FeatureRecord& f, const BodyLayout&) { w.u64(f.feature); w.bytes(f.data); }
};

// A type vperf does not parse (or a body longer than its type's): its bytes, kept.
template <>
struct RecordCodec<UnparsedRecord> {
  static Result<UnparsedRecord> decode(ByteReader& r, const BodyLayout&) {
    VPERF_TRY(auto body, byte_vector(r, r.remaining(), "record body"));
    return UnparsedRecord{std::move(body)};
  }
  static void encode(ByteWriter& w, const UnparsedRecord& u, const BodyLayout&) { w.bytes(u.body); }
};

template <class Body>
Result<RecordBody> decode_as(ByteReader& r, const BodyLayout& at) {
  VPERF_TRY(Body body, RecordCodec<Body>::decode(r, at));
  return RecordBody(std::move(body));
}

// Every record type but SAMPLE (parse_sample_into), by the codec of its body.
Result<RecordBody> decode_body(ByteReader& r, const BodyLayout& at) {
  switch (at.type) {
    case PERF_RECORD_MMAP: return decode_as<MmapRecord>(r, at);
    case PERF_RECORD_MMAP2: return decode_as<Mmap2Record>(r, at);
    case PERF_RECORD_COMM: return decode_as<CommRecord>(r, at);
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: return decode_as<TaskRecord>(r, at);
    case PERF_RECORD_READ: return decode_as<ReadRecord>(r, at);
    case PERF_RECORD_LOST: return decode_as<LostRecord>(r, at);
    case PERF_RECORD_LOST_SAMPLES: return decode_as<LostSamplesRecord>(r, at);
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: return decode_as<ThrottleRecord>(r, at);
    case PERF_RECORD_KSYMBOL: return decode_as<KsymbolRecord>(r, at);
    case PERF_RECORD_BPF_EVENT: return decode_as<BpfEventRecord>(r, at);
    case PERF_RECORD_TEXT_POKE: return decode_as<TextPokeRecord>(r, at);
    case PERF_RECORD_CGROUP: return decode_as<CgroupRecord>(r, at);
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE: return decode_as<SwitchRecord>(r, at);
    case kRecordHeaderAttr: return decode_as<AttrRecord>(r, at);
    case kRecordHeaderEventType: return decode_as<EventTypeRecord>(r, at);
    case kRecordHeaderTracingData: return decode_as<TracingDataRecord>(r, at);
    case kRecordHeaderBuildId: return decode_as<BuildIdRecord>(r, at);
    case kRecordFinishedRound:
    case kRecordFinishedInit: return decode_as<FinishedRoundRecord>(r, at);
    case kRecordIdIndex: return decode_as<IdIndexRecord>(r, at);
    case kRecordAuxtraceInfo: return decode_as<AuxtraceInfoRecord>(r, at);
    case kRecordAuxtrace: return decode_as<AuxtraceRecord>(r, at);
    case kRecordThreadMap: return decode_as<ThreadMapRecord>(r, at);
    case kRecordStatConfig: return decode_as<StatConfigRecord>(r, at);
    case kRecordStat: return decode_as<StatRecord>(r, at);
    case kRecordStatRound: return decode_as<StatRoundRecord>(r, at);
    case kRecordEventUpdate: return decode_as<EventUpdateRecord>(r, at);
    case kRecordTimeConv: return decode_as<TimeConvRecord>(r, at);
    case kRecordHeaderFeature: return decode_as<FeatureRecord>(r, at);
    case kRecordCompressed:
      return Error{"compressed data (perf record -z) not supported: decompress it with `perf inject -i IN -o OUT`"};
    default: return decode_as<UnparsedRecord>(r, at);
  }
}

struct BodyEncoder {
  ByteWriter& w;
  const Record& rec;
  const SampleFormat* format;

  void operator()(const Sample& s) {
    SampleFormat none;
    put_sample(w, s, format ? *format : none, rec.sample_id);
  }
  template <class Body>
  void operator()(const Body& body) {
    RecordCodec<Body>::encode(w, body, BodyLayout{rec.type, rec.misc, {}});
  }
};

}  // namespace

uint64_t ReadRecord::value() const {
  uint64_t count = 0;
  if (values.size() >= sizeof count) std::memcpy(&count, values.data(), sizeof count);
  return count;
}

std::string feature_name(int feature) {
  static constexpr const char* kNames[] = {
      "RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH", "NRCPUS",
      "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC", "CPU_TOPOLOGY", "NUMA_TOPOLOGY",
      "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC", "AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME",
      "MEM_TOPOLOGY", "CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS",
      "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS"};
  if (feature >= 0 && feature < static_cast<int>(std::size(kNames))) return kNames[feature];
  return "feature " + std::to_string(feature);
}

namespace {
// The record types perf 6.1 knows, by number: kernel types from 0 (0 is none), user types from 64.
constexpr const char* kKernelTypeNames[] = {
    "type 0", "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE", "FORK", "READ", "SAMPLE", "MMAP2", "AUX",
    "ITRACE_START", "LOST_SAMPLES", "SWITCH", "SWITCH_CPU_WIDE", "NAMESPACES", "KSYMBOL", "BPF_EVENT", "CGROUP",
    "TEXT_POKE", "AUX_OUTPUT_HW_ID"};
constexpr const char* kUserTypeNames[] = {
    "HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID", "FINISHED_ROUND", "ID_INDEX",
    "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND",
    "EVENT_UPDATE", "TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT"};
}  // namespace

bool is_known_record_type(uint32_t type) {
  return (type > 0 && type < std::size(kKernelTypeNames)) ||
         (type >= kRecordHeaderAttr && type - kRecordHeaderAttr < std::size(kUserTypeNames));
}

std::string record_type_name(uint32_t type) {
  if (type < std::size(kKernelTypeNames)) return kKernelTypeNames[type];
  if (type >= kRecordHeaderAttr && type - kRecordHeaderAttr < std::size(kUserTypeNames))
    return kUserTypeNames[type - kRecordHeaderAttr];
  return "type " + std::to_string(type);
}

SampleFormat SampleFormat::from_attr(const perf_event_attr& attr) {
  SampleFormat f;
  f.sample_type = attr.sample_type;
  f.read_format = attr.read_format;
  f.regs_user_mask = attr.sample_regs_user;
  f.regs_intr_mask = attr.sample_regs_intr;
  f.branch_sample_type = attr.branch_sample_type;
  f.sample_id_all = attr.sample_id_all != 0;
  return f;
}

size_t SampleFormat::trailer_size() const {
  if (!sample_id_all) return 0;
  size_t n = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                       PERF_SAMPLE_IDENTIFIER})
    if (has(sample_type, bit)) n += 8;
  return n;
}

int SampleFormat::id_pos() const {
  if (has(sample_type, PERF_SAMPLE_IDENTIFIER)) return 0;
  if (!has(sample_type, PERF_SAMPLE_ID)) return -1;
  int idx = 0;
  for (uint64_t bit : {PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR})
    if (has(sample_type, bit)) ++idx;
  return idx;
}

int SampleFormat::is_pos() const {
  if (has(sample_type, PERF_SAMPLE_IDENTIFIER)) return 1;
  if (!has(sample_type, PERF_SAMPLE_ID)) return -1;
  int idx = 1;
  if (has(sample_type, PERF_SAMPLE_CPU)) ++idx;
  if (has(sample_type, PERF_SAMPLE_STREAM_ID)) ++idx;
  return idx;
}

bool AttrRecord::operator==(const AttrRecord& o) const {
  return std::memcmp(&attr, &o.attr, sizeof(attr)) == 0 && attr_bytes == o.attr_bytes && ids == o.ids;
}

Result<size_t> attr_size_in(std::span<const uint8_t> room) {
  ByteReader r(room);
  VPERF_TRY(r.u32("attr type"));
  VPERF_TRY(uint32_t size, r.u32("attr size"));
  if (size == 0) size = PERF_ATTR_SIZE_VER0;  // perf's rule for the oldest writers
  if (size < PERF_ATTR_SIZE_VER0 || size > room.size())
    return Error{"perf_event_attr size field " + std::to_string(size) + " does not fit its " +
                 std::to_string(room.size()) + " bytes (the smallest attr is " + std::to_string(PERF_ATTR_SIZE_VER0) + ")"};
  return size_t{size};
}

Result<perf_event_attr> attr_from_bytes(std::span<const uint8_t> bytes) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  size_t copy = std::min(bytes.size(), sizeof(attr));
  std::memcpy(&attr, bytes.data(), copy);
  if (bytes.size() > sizeof(attr)) {
    auto tail = bytes.subspan(sizeof(attr));
    if (std::any_of(tail.begin(), tail.end(), [](uint8_t b) { return b != 0; }))
      return Error{"perf_event_attr of " + std::to_string(bytes.size()) + " bytes uses fields this vperf (" +
                   std::to_string(sizeof(attr)) + "-byte attr) does not know"};
  }
  return attr;
}

Result<uint64_t> record_stream_size(std::span<const uint8_t> bytes) {
  ByteReader r(bytes);
  uint32_t type = 0;
  uint16_t misc = 0, size = 0;
  VPERF_TAKE(r, type, "record header");
  VPERF_TAKE(r, misc, "record header");
  VPERF_TAKE(r, size, "record header");
  if (size < kHeaderBytes) return Error{"record of type " + record_name(type) + " has size " + std::to_string(size) + " (< 8)"};
  uint64_t total = size;
  if (type == kRecordHeaderTracingData) {
    uint32_t payload = 0;
    VPERF_TAKE(r, payload, "tracing_data size");
    if (size < 12) return Error{"HEADER_TRACING_DATA record of size " + std::to_string(size)};
    total += payload;
  } else if (type == kRecordAuxtrace) {
    uint64_t payload = 0;
    VPERF_TAKE(r, payload, "auxtrace size");
    if (size < 16) return Error{"AUXTRACE record of size " + std::to_string(size)};
    // The caller bounds the total by what can follow (file size, pipe cap): saturate, not wrap.
    total = payload > UINT64_MAX - total ? UINT64_MAX : total + payload;
  }
  return total;
}

Result<void> parse_record_into(std::span<const uint8_t> bytes, const SampleFormat* format, Record& out) {
  perf_event_header header{};
  if (bytes.size() >= kHeaderBytes) std::memcpy(&header, bytes.data(), sizeof header);
  // Only a well-formed SAMPLE takes the in-place path; everything else (and every error text)
  // is parse_record's.
  if (format == nullptr || header.type != PERF_RECORD_SAMPLE || header.size < kHeaderBytes || header.size > bytes.size()) {
    VPERF_TRY(out, parse_record(bytes, format));
    return {};
  }
  out.type = header.type;
  out.misc = header.misc;
  out.sample_id = SampleId{};
  out.has_sample_id = true;
  Sample* sample = std::get_if<Sample>(&out.body);
  if (sample == nullptr) sample = &out.body.emplace<Sample>();
  ByteReader body(bytes.subspan(kHeaderBytes, header.size - kHeaderBytes));
  return parse_sample_into(body, *format, out.sample_id, *sample);
}

Result<Record> parse_record(std::span<const uint8_t> bytes, const SampleFormat* format) {
  ByteReader whole(bytes);
  Record rec;
  VPERF_TRY(rec.type, whole.u32("record header"));
  VPERF_TRY(rec.misc, whole.u16("record header"));
  VPERF_TRY(uint16_t size, whole.u16("record header"));
  if (size < kHeaderBytes || size > bytes.size())
    return Error{record_name(rec.type) + " record: size " + std::to_string(size) + " does not fit in " +
                 std::to_string(bytes.size()) + " bytes"};
  std::span<const uint8_t> payload = bytes.subspan(size);
  VPERF_TRY(ByteReader body, whole.sub(size - kHeaderBytes, "record body"));

  if (rec.type == PERF_RECORD_SAMPLE) {
    if (!format) return Error{"SAMPLE record in a stream without attrs"};
    rec.has_sample_id = true;
    VPERF_TRY(parse_sample_into(body, *format, rec.sample_id, rec.body.emplace<Sample>()));
    return rec;
  }
  if (is_kernel_type(rec.type)) {
    size_t trailer = format ? format->trailer_size() : 0;
    if (trailer > body.size())
      return Error{record_name(rec.type) + " record of " + std::to_string(size) + " bytes is shorter than its " +
                   std::to_string(trailer) + "-byte sample_id trailer"};
    VPERF_TRY(ByteReader fields, body.sub(body.size() - trailer, "record body"));
    if (trailer) {
      VPERF_TRY(parse_trailer(body, *format, rec.sample_id));
      rec.has_sample_id = true;
    }
    VPERF_TRY(rec.body, decode_body(fields, BodyLayout{rec.type, rec.misc, {}}));
    if (!fields.at_end()) {  // more than the type has: keep it all, so nothing is lost
      std::vector<uint8_t> all(bytes.begin() + kHeaderBytes, bytes.begin() + static_cast<std::ptrdiff_t>(size - trailer));
      rec.body = UnparsedRecord{std::move(all)};
    }
    return rec;
  }
  VPERF_TRY(rec.body, decode_body(body, BodyLayout{rec.type, rec.misc, payload}));
  return rec;
}

std::vector<uint8_t> build_record(const Record& record, const SampleFormat* format) {
  ByteWriter w;
  w.u32(record.type);
  w.u16(record.misc);
  w.u16(0);  // size, patched below
  std::visit(BodyEncoder{w, record, format}, record.body);
  if (is_kernel_type(record.type) && record.type != PERF_RECORD_SAMPLE && format && format->sample_id_all)
    put_trailer(w, *format, record.sample_id);
  size_t size = w.size();
  w.patch<uint16_t>(6, static_cast<uint16_t>(std::min<size_t>(size, 0xffff)));
  if (const auto* t = std::get_if<TracingDataRecord>(&record.body)) w.bytes(t->data);
  if (const auto* a = std::get_if<AuxtraceRecord>(&record.body)) w.bytes(a->data);
  return w.take();
}

namespace {

// The header of a record that holds at least its own header's size, or nothing.
std::optional<perf_event_header> whole_header(std::span<const uint8_t> record) {
  perf_event_header header;
  if (record.size() < sizeof header) return std::nullopt;
  std::memcpy(&header, record.data(), sizeof header);
  if (header.size > record.size()) return std::nullopt;
  return header;
}

uint64_t u64_at(std::span<const uint8_t> record, uint64_t at) {
  uint64_t v;
  std::memcpy(&v, record.data() + at, sizeof v);
  return v;
}

}  // namespace

std::optional<uint64_t> peek_sample_id(std::span<const uint8_t> record, const SampleFormat& layout) {
  const std::optional<perf_event_header> header = whole_header(record);
  if (!header) return std::nullopt;
  uint64_t at = 0;
  if (header->type == PERF_RECORD_SAMPLE) {
    int pos = layout.id_pos();
    if (pos < 0) return std::nullopt;
    at = kHeaderBytes + 8 * static_cast<uint64_t>(pos);
  } else {
    if (!is_kernel_type(header->type) || !layout.sample_id_all) return std::nullopt;
    int pos = layout.is_pos();
    if (pos < 0 || header->size < kHeaderBytes + 8 * static_cast<uint64_t>(pos)) return std::nullopt;
    at = header->size - 8 * static_cast<uint64_t>(pos);
  }
  if (at + 8 > header->size) return std::nullopt;
  return u64_at(record, at);
}

std::optional<uint64_t> peek_time(std::span<const uint8_t> record, const SampleFormat& format) {
  if (!has(format.sample_type, PERF_SAMPLE_TIME)) return std::nullopt;
  const std::optional<perf_event_header> header = whole_header(record);
  if (!header) return std::nullopt;
  uint64_t at = 0;
  if (header->type == PERF_RECORD_SAMPLE) {
    at = kHeaderBytes;
    for (uint64_t bit : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID})
      if (has(format.sample_type, bit)) at += 8;
  } else {
    if (!is_kernel_type(header->type) || !format.sample_id_all) return std::nullopt;
    size_t trailer = format.trailer_size();
    if (header->size < kHeaderBytes + trailer) return std::nullopt;
    at = header->size - trailer + (has(format.sample_type, PERF_SAMPLE_TID) ? 8 : 0);
  }
  if (at + 8 > header->size) return std::nullopt;
  return u64_at(record, at);
}

#undef VPERF_TAKE

}  // namespace vperf::data
