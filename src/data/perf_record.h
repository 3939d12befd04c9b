#pragma once
// perf records, parsed and built: every record type `vperf record` and `vperf report` meet in
// a perf.data file or pipe (kernel PERF_RECORD_* types and perf's own user types; layouts in
// data/perf_data_format.h and include/uapi/linux/perf_event.h). Parsing goes through
// ByteReader only: any byte string either parses or yields an Error, never reads out of bounds.
//
// parse_record(bytes, format) and build_record(record, format) are inverses for every type
// they model: build_record(parse_record(b)) == b for a well-formed b (tested per type).
// A record whose type is not modelled (or not known at all) parses as UnparsedRecord and is
// rebuilt from its bytes.
#include <linux/perf_event.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/byte_reader.h"
#include "core/error.h"
#include "data/perf_data_format.h"

namespace vperf::data {

// What decides the layout of a SAMPLE and of the sample_id trailer: the attr's fields.
struct SampleFormat {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t regs_user_mask = 0;
  uint64_t regs_intr_mask = 0;
  uint64_t branch_sample_type = 0;
  bool sample_id_all = false;

  static SampleFormat from_attr(const perf_event_attr& attr);
  // Bytes of the sample_id trailer on non-sample records (0 without sample_id_all).
  size_t trailer_size() const;
  // perf's id_pos: index (in u64 after the header) of the id in a SAMPLE, or -1.
  int id_pos() const;
  // perf's is_pos: index (in u64 counted from the end) of the id in a trailer, or -1.
  int is_pos() const;
};

// The fields shared by samples and sample_id trailers; which are present follows sample_type.
struct SampleId {
  uint32_t pid = 0, tid = 0;  // PERF_SAMPLE_TID
  uint64_t time = 0;          // PERF_SAMPLE_TIME
  uint64_t id = 0;            // PERF_SAMPLE_ID / PERF_SAMPLE_IDENTIFIER
  uint64_t stream_id = 0;     // PERF_SAMPLE_STREAM_ID
  uint32_t cpu = 0, cpu_res = 0;  // PERF_SAMPLE_CPU
  bool operator==(const SampleId&) const = default;
};

// PERF_RECORD_SAMPLE. pid/tid/time/id/stream_id/cpu live in Record::sample_id.
struct Sample {
  uint64_t ip = 0;
  uint64_t addr = 0;
  uint64_t period = 0;
  std::vector<uint8_t> read;  // PERF_SAMPLE_READ: the read_format block as is
  std::vector<uint64_t> callchain;
  std::vector<uint8_t> raw;  // PERF_SAMPLE_RAW payload (size is raw.size())
  std::vector<uint8_t> branch_stack;  // PERF_SAMPLE_BRANCH_STACK: nr, [hw_idx], entries, as is
  uint64_t regs_user_abi = 0;
  std::vector<uint64_t> regs_user;
  std::vector<uint8_t> stack_user;  // the dumped stack (its size field is stack_user.size())
  uint64_t stack_user_dyn_size = 0;
  uint64_t weight = 0;  // PERF_SAMPLE_WEIGHT or WEIGHT_STRUCT (one u64 either way)
  uint64_t data_src = 0, transaction = 0;
  uint64_t regs_intr_abi = 0;
  std::vector<uint64_t> regs_intr;
  uint64_t phys_addr = 0, cgroup = 0, data_page_size = 0, code_page_size = 0;
  std::vector<uint8_t> aux;
  bool operator==(const Sample&) const = default;
};

struct MmapRecord {  // PERF_RECORD_MMAP
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  std::string filename;
  bool operator==(const MmapRecord&) const = default;
};
struct Mmap2Record {  // PERF_RECORD_MMAP2; misc & PERF_RECORD_MISC_MMAP_BUILD_ID selects build_id
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  std::vector<uint8_t> build_id;  // <= 20 bytes, only with the build-id flag
  uint32_t prot = 0, flags = 0;
  std::string filename;
  bool operator==(const Mmap2Record&) const = default;
};
struct CommRecord {  // PERF_RECORD_COMM (misc PERF_RECORD_MISC_COMM_EXEC on exec)
  uint32_t pid = 0, tid = 0;
  std::string comm;
  bool operator==(const CommRecord&) const = default;
};
struct TaskRecord {  // PERF_RECORD_FORK and PERF_RECORD_EXIT
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
  bool operator==(const TaskRecord&) const = default;
};
struct ReadRecord {  // PERF_RECORD_READ: an inherited counter's count as its task exits (inherit_stat)
  uint32_t pid = 0, tid = 0;
  std::vector<uint8_t> values;  // the counter's read_format block as is; the count is its first u64
  uint64_t value() const;
  bool operator==(const ReadRecord&) const = default;
};
struct LostRecord {  // PERF_RECORD_LOST
  uint64_t id = 0, lost = 0;
  bool operator==(const LostRecord&) const = default;
};
struct LostSamplesRecord {  // PERF_RECORD_LOST_SAMPLES
  uint64_t lost = 0;
  bool operator==(const LostSamplesRecord&) const = default;
};
struct ThrottleRecord {  // PERF_RECORD_THROTTLE / UNTHROTTLE
  uint64_t time = 0, id = 0, stream_id = 0;
  bool operator==(const ThrottleRecord&) const = default;
};
struct KsymbolRecord {  // PERF_RECORD_KSYMBOL
  uint64_t addr = 0;
  uint32_t len = 0;
  uint16_t ksym_type = 0, flags = 0;
  std::string name;
  bool operator==(const KsymbolRecord&) const = default;
};
struct BpfEventRecord {  // PERF_RECORD_BPF_EVENT
  uint16_t type = 0, flags = 0;
  uint32_t id = 0;
  std::array<uint8_t, 8> tag{};
  bool operator==(const BpfEventRecord&) const = default;
};
struct TextPokeRecord {  // PERF_RECORD_TEXT_POKE
  uint64_t addr = 0;
  std::vector<uint8_t> old_bytes, new_bytes;
  bool operator==(const TextPokeRecord&) const = default;
};
struct CgroupRecord {  // PERF_RECORD_CGROUP
  uint64_t id = 0;
  std::string path;
  bool operator==(const CgroupRecord&) const = default;
};
struct SwitchRecord {  // PERF_RECORD_SWITCH (no body) / SWITCH_CPU_WIDE (next/prev task)
  uint32_t next_prev_pid = 0, next_prev_tid = 0;
  bool operator==(const SwitchRecord&) const = default;
};
struct FinishedRoundRecord {  // FINISHED_ROUND, FINISHED_INIT: no body
  bool operator==(const FinishedRoundRecord&) const = default;
};
struct AttrRecord {  // HEADER_ATTR: the attr (its own size field says how long) + ids
  perf_event_attr attr{};
  uint32_t attr_bytes = 0;  // bytes the attr took in the record
  std::vector<uint64_t> ids;
  bool operator==(const AttrRecord& o) const;
};
struct EventTypeRecord {  // HEADER_EVENT_TYPE (deprecated)
  uint64_t event_id = 0;
  std::string name;  // char[64]
  bool operator==(const EventTypeRecord&) const = default;
};
struct TracingDataRecord {  // HEADER_TRACING_DATA; payload follows the 12-byte record
  uint32_t size = 0;
  std::vector<uint8_t> data;
  bool operator==(const TracingDataRecord&) const = default;
};
struct BuildIdRecord {  // HEADER_BUILD_ID (same layout as a BUILD_ID feature entry)
  int32_t pid = -1;
  std::vector<uint8_t> build_id;  // with misc BUILD_ID_SIZE: its stated size; else 20 bytes
  std::string filename;
  uint32_t filename_field = 0;  // bytes the filename field took (padding)
  bool operator==(const BuildIdRecord&) const = default;
};
struct IdIndexEntry {
  uint64_t id = 0, idx = 0, cpu = 0, tid = 0;
  bool operator==(const IdIndexEntry&) const = default;
};
struct IdIndexRecord {  // ID_INDEX
  std::vector<IdIndexEntry> entries;
  bool operator==(const IdIndexRecord&) const = default;
};
struct ThreadMapEntry {
  uint64_t pid = 0;
  std::string comm;  // char[16]
  bool operator==(const ThreadMapEntry&) const = default;
};
struct ThreadMapRecord {  // THREAD_MAP
  std::vector<ThreadMapEntry> entries;
  bool operator==(const ThreadMapRecord&) const = default;
};
struct StatConfigRecord {  // STAT_CONFIG: {u64 tag, val}[nr]
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  bool operator==(const StatConfigRecord&) const = default;
};
struct StatRecord {  // STAT
  uint64_t id = 0;
  uint32_t cpu = 0, thread = 0;
  uint64_t val = 0, ena = 0, run = 0;
  bool operator==(const StatRecord&) const = default;
};
struct StatRoundRecord {  // STAT_ROUND
  uint64_t type = 0, time = 0;
  bool operator==(const StatRoundRecord&) const = default;
};
struct EventUpdateRecord {  // EVENT_UPDATE: type (UNIT=0, SCALE=1, NAME=2, CPUS=3), id, data
  uint64_t type = 0, id = 0;
  std::vector<uint8_t> data;
  bool operator==(const EventUpdateRecord&) const = default;
};
struct TimeConvRecord {  // TIME_CONV (the extended fields only when the record is long enough)
  uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  std::optional<uint64_t> time_cycles, time_mask;
  uint8_t cap_user_time_zero = 0, cap_user_time_short = 0;
  bool operator==(const TimeConvRecord&) const = default;
};
struct FeatureRecord {  // HEADER_FEATURE: one feature section in pipe mode
  uint64_t feature = 0;
  std::vector<uint8_t> data;
  bool operator==(const FeatureRecord&) const = default;
};
struct AuxtraceInfoRecord {  // AUXTRACE_INFO
  uint32_t type = 0;
  std::vector<uint64_t> priv;
  bool operator==(const AuxtraceInfoRecord&) const = default;
};
struct AuxtraceRecord {  // AUXTRACE; `size` bytes of AUX data follow the 48-byte record
  uint64_t offset = 0, reference = 0;
  uint32_t idx = 0, tid = 0, cpu = 0;
  std::vector<uint8_t> data;  // the payload (its size is the record's size field)
  bool operator==(const AuxtraceRecord&) const = default;
};
// Every other type (CPU_MAP, AUX, NAMESPACES, AUXTRACE_ERROR, unknown...): body kept as bytes.
struct UnparsedRecord {
  std::vector<uint8_t> body;  // everything after the 8-byte header
  bool operator==(const UnparsedRecord&) const = default;
};

using RecordBody =
    std::variant<UnparsedRecord, Sample, MmapRecord, Mmap2Record, CommRecord, TaskRecord, ReadRecord, LostRecord,
                 LostSamplesRecord, ThrottleRecord, KsymbolRecord, BpfEventRecord, TextPokeRecord, CgroupRecord,
                 SwitchRecord, FinishedRoundRecord, AttrRecord, EventTypeRecord, TracingDataRecord,
                 BuildIdRecord, IdIndexRecord, ThreadMapRecord, StatConfigRecord, StatRecord, StatRoundRecord,
                 EventUpdateRecord, TimeConvRecord, FeatureRecord, AuxtraceInfoRecord, AuxtraceRecord>;

// The records that change a task or its maps (MMAP, MMAP2, COMM, FORK, EXIT): what a reader
// replays into its machine model, and perf script's --show-task/mmap-events print.
constexpr bool is_task_or_map_record(uint32_t type) {
  return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM || type == PERF_RECORD_FORK ||
         type == PERF_RECORD_EXIT;
}

struct Record {
  uint32_t type = 0;
  uint16_t misc = 0;
  RecordBody body;
  // From the sample (SAMPLE) or the trailer (other kernel records with sample_id_all).
  SampleId sample_id;
  bool has_sample_id = false;
};

// Bytes one record takes in the stream starting at `bytes` (header.size, plus the payload of
// HEADER_TRACING_DATA / AUXTRACE; UINT64_MAX if that overflows), or an Error if the header is
// truncated or size < 8. Callers bound it by what can follow (the file, the pipe cap).
Result<uint64_t> record_stream_size(std::span<const uint8_t> bytes);

// Parses one whole record (record_stream_size bytes). `format` is the record's attr's layout;
// nullptr for records of a file with no attrs (kernel records then parse without trailers).
// COMPRESSED fails with "compressed data (perf record -z) not supported".
Result<Record> parse_record(std::span<const uint8_t> bytes, const SampleFormat* format);
// The same into `out`, reusing what it holds: a SAMPLE refills out's Sample in place (its vectors
// keep their capacity), so a reader that parses every record into one Record allocates nothing
// per sample. On an Error, `out` holds a partly parsed record.
Result<void> parse_record_into(std::span<const uint8_t> bytes, const SampleFormat* format, Record& out);
// The inverse: header + body (+ trailer for kernel types when format->sample_id_all).
std::vector<uint8_t> build_record(const Record& record, const SampleFormat* format);

// The sample id of a record without parsing it all (perf's id_pos / is_pos rules), if the
// layout has one. For choosing the attr before parse_record.
std::optional<uint64_t> peek_sample_id(std::span<const uint8_t> record, const SampleFormat& layout);
// The time of a record without parsing it all: SAMPLE with PERF_SAMPLE_TIME, or a kernel record
// with a sample_id_all trailer carrying TIME.
std::optional<uint64_t> peek_time(std::span<const uint8_t> record, const SampleFormat& format);

// Bytes the perf_event_attr at the start of `room` takes by its own size field (0 means
// PERF_ATTR_SIZE_VER0); an Error if that is below VER0 or more than `room` holds.
Result<size_t> attr_size_in(std::span<const uint8_t> room);

// perf_event_attr from `bytes` written by a perf with attr size bytes.size(): a shorter attr
// leaves the tail zero; a longer one fails unless its extra tail is zero (unknown features).
Result<perf_event_attr> attr_from_bytes(std::span<const uint8_t> bytes);

}  // namespace vperf::data
