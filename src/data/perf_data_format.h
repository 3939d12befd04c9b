#pragma once
// perf's on-disk format ("perf.data", magic "PERFILE2"), as Linux perf 6.1 writes and reads it.
// Sources: tools/perf/Documentation/perf.data-file-format.txt, tools/perf/util/header.c,
// session.c and event.c in torvalds/linux, include/uapi/linux/perf_event.h; checked against
// files made by `perf record` 6.1 on this machine (tests/fuzz/corpus/perf_data/PROVENANCE.md).
// All integers are in the byte order of the machine that wrote the file; vperf reads only
// native-endian files (a byte-swapped magic is reported as unsupported).
//
// FILE MODE
//   offset 0: struct perf_file_header (104 bytes)
//     u64 magic            "PERFILE2" (0x32454c4946524550 little endian)
//     u64 size             sizeof(perf_file_header) = 104
//     u64 attr_size        size of one perf_file_attr = the writer's sizeof(perf_event_attr) + 16
//     section attrs        {u64 offset, u64 size}: array of perf_file_attr, size / attr_size entries
//     section data         the records; size 0 means "writer killed before it finished"
//     section event_types  unused since perf 3.x (zeros)
//     u64 features[4]      256-bit bitmap of feature sections present (bit numbers below)
//   perf_file_attr: perf_event_attr (attr_size - 16 bytes: may be bigger or smaller than ours;
//     the missing tail is zero, an extra tail must be zero) + section ids (u64 array elsewhere
//     in the file: the sample ids of that event's fds).
//   perf 6.1 lays out: header, ids arrays, attrs array, data; then at data.offset + data.size a
//   table of one section {offset, size} per set feature bit (in bit order), then the sections.
//
// PIPE MODE (`perf record -o -`, `perf report -i -`)
//   u64 magic "PERFILE2", u64 size = 16, then records only. What file mode keeps in the header
//   arrives as user records: HEADER_ATTR (attr + its ids), HEADER_FEATURE (one feature
//   section each, u64 feature id first), HEADER_TRACING_DATA, HEADER_BUILD_ID, EVENT_UPDATE.
//
// RECORDS (the data section, and the whole of a pipe stream)
//   struct perf_event_header { u32 type; u16 misc; u16 size; } then size - 8 bytes of body.
//   Types below 64 come from the kernel (perf_event.h, PERF_RECORD_*); 64 and up are perf's
//   own ("user" types, tools/lib/perf/include/perf/event.h). Kernel records are 8-byte
//   aligned; two user records carry a payload NOT counted in header.size:
//     HEADER_TRACING_DATA {u32 size} is followed by `size` bytes of tracing data (size is
//       already a multiple of 8); AUXTRACE {u64 size, ...} is followed by `size` bytes of AUX data.
//   Non-sample kernel records carry a sample_id trailer when attr.sample_id_all is set:
//     {u32 pid, tid} TID, {u64 time} TIME, {u64 id} ID, {u64 stream_id} STREAM_ID,
//     {u32 cpu, res} CPU, {u64 id} IDENTIFIER — in that order, at the end of the record.
//   Which attr a record belongs to: with PERF_SAMPLE_IDENTIFIER the id is the first u64 of a
//   sample's body and the last u64 of any other record; with only PERF_SAMPLE_ID it is at
//   perf's id_pos (after IP, TID, TIME, ADDR) in a sample and is_pos from the end (before
//   STREAM_ID and CPU) in a trailer. A file with one attr needs no id.
//
// ORDER
//   perf record writes FINISHED_ROUND after each pass over all ring buffers; no record after a
//   FINISHED_ROUND is older than the newest record before the previous one. perf's reader
//   (ordered_events.c) queues timestamped records and at each FINISHED_ROUND delivers those
//   not newer than the largest timestamp seen up to the previous FINISHED_ROUND; the rest at
//   the end. Records without a timestamp and user records are delivered as they are read.
//
// FEATURE SECTIONS (bit number: contents). A "string" is {u32 len; char s[len]} with len
//   counting the NUL and padding up to a multiple of 64; a "string list" is {u32 nr; string[nr]}.
//   1 TRACING_DATA  tracefs formats (perf's trace-event-read.c format); kept as bytes
//   2 BUILD_ID      build_id records back to back: {header{type=HEADER_BUILD_ID, misc=cpumode
//                   (| 1<<15 BUILD_ID_SIZE: build_id[20] holds the length), size}, s32 pid,
//                   u8 build_id[24], char filename[] (NUL, padded to 64)}; 36-byte fixed part,
//                   so records are 4-byte aligned here
//   3 HOSTNAME, 4 OSRELEASE, 5 VERSION, 6 ARCH: string (uname -n, -r, perf version, uname -m)
//   7 NRCPUS        u32 nr_cpus_available, u32 nr_cpus_online (that order in header.c)
//   8 CPUDESC, 9 CPUID: string ("GenuineIntel,6,143,8")
//   10 TOTAL_MEM    u64 MemTotal in kB
//   11 CMDLINE      string list: perf's own path, then its argv
//   12 EVENT_DESC   u32 nr, u32 attr_size, nr x {attr (attr_size bytes), u32 nr_ids,
//                   string name, u64 ids[nr_ids]}
//   13 CPU_TOPOLOGY .. 20 CACHE, 22 MEM_TOPOLOGY, 24.. : kept as bytes, listed as skipped
//   21 SAMPLE_TIME  u64 first, u64 last sample time
//   23 CLOCKID      u64 clock resolution in ns
#include <cstdint>
#include <string>

namespace vperf::data {

inline constexpr uint64_t kPerfMagic2 = 0x32454c4946524550ULL;          // "PERFILE2"
inline constexpr uint64_t kPerfMagic2Swapped = 0x50455246494c4532ULL;   // other endianness
inline constexpr uint64_t kPerfMagic1 = 0x454c494646524550ULL;          // "PERFFILE" (v1)
inline constexpr uint64_t kFileHeaderSize = 104;
inline constexpr uint64_t kPipeHeaderSize = 16;
inline constexpr uint64_t kFeatureBits = 256;
inline constexpr uint32_t kNameAlign = 64;
inline constexpr uint16_t kMiscBuildIdSize = 1u << 15;  // PERF_RECORD_MISC_BUILD_ID_SIZE

// Offsets of header fields (file mode).
inline constexpr uint64_t kHeaderAttrsOffset = 24;
inline constexpr uint64_t kHeaderDataOffset = 40;
inline constexpr uint64_t kHeaderFeaturesOffset = 72;

// perf's own record types (PERF_RECORD_USER_TYPE_START and up).
enum UserRecordType : uint32_t {
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,
  kRecordAuxtraceError = 72,
  kRecordThreadMap = 73,
  kRecordCpuMap = 74,
  kRecordStatConfig = 75,
  kRecordStat = 76,
  kRecordStatRound = 77,
  kRecordEventUpdate = 78,
  kRecordTimeConv = 79,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
};

// Feature section bits (tools/perf/util/header.h, enum HEADER_*).
enum Feature : int {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
  kFeatStat = 19,
  kFeatCache = 20,
  kFeatSampleTime = 21,
  kFeatMemTopology = 22,
  kFeatClockId = 23,
  kFeatDirFormat = 24,
  kFeatBpfProgInfo = 25,
  kFeatBpfBtf = 26,
  kFeatCompressed = 27,
  kFeatCpuPmuCaps = 28,
  kFeatClockData = 29,
  kFeatHybridTopology = 30,
  kFeatPmuCaps = 31,
  kFeatLast = 32,  // HEADER_LAST_FEATURE in perf 6.1: ends a pipe's feature records
};

// "HOSTNAME", "feature 45" for unknown bits.
std::string feature_name(int feature);
// "SAMPLE", "MMAP2", "FINISHED_ROUND", "type 99".
std::string record_type_name(uint32_t type);
// A type perf 6.1 defines (kernel 1..21, user 64..82); others come from a newer writer or damage.
bool is_known_record_type(uint32_t type);

}  // namespace vperf::data
