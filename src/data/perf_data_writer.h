#pragma once
// PerfDataWriter: writes perf's own on-disk format (perf.data, "PERFILE2"), in file mode or in
// pipe mode (`perf record -o -`), so that Linux perf 6.1 and PerfDataReader read it.
// The byte layout is documented in data/perf_data_format.h.
//
// File mode, as written here:
//   [0, 104)            perf_file_header (data.size rewritten after every flush_round())
//   [104, ...)          each attr's ids (u64 arrays), then the perf_file_attr array
//   data.offset ...     records, exactly as given to write(), with FINISHED_ROUND after batches
//   after the data      feature section table + feature sections (finish() only)
// Invariant: after flush_round() returns, header.data.size covers every byte written so far,
// so a recorder killed at any later point leaves a file that perf and vperf read up to the last
// complete round (the feature bitmap stays empty until finish(), so no reader looks past the
// data). A record that is half written when the process dies lies beyond data.size.
//
// Pipe mode: the 16-byte pipe header, one HEADER_ATTR record per attr, the records as written,
// and at finish() one HEADER_FEATURE record per feature (perf's reader accepts them anywhere).
#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"
#include "data/compressed_records.h"

namespace vperf::data {

// One event of the file: its attr (any attr.size; written as this build's sizeof), the name
// perf report shows (EVENT_DESC), and the sample ids the kernel gave its fds (PERF_FORMAT_ID /
// PERF_SAMPLE_ID|IDENTIFIER), which map a sample back to its event in multi-event files.
struct EventAttrEntry {
  perf_event_attr attr;
  std::string name;
  std::vector<uint64_t> ids;
};

// One HEADER_BUILD_ID entry: misc carries the cpumode (PERF_RECORD_MISC_KERNEL/USER/GUEST_*).
struct BuildIdEntry {
  pid_t pid = -1;
  uint16_t misc = 0;
  std::vector<uint8_t> build_id;  // up to 20 bytes
  std::string filename;
  bool operator==(const BuildIdEntry&) const = default;
};

// A feature section kept as bytes (one vperf does not model: CPU_TOPOLOGY, TRACING_DATA, ...).
// The reader fills these, so reading a file and writing it again keeps what perf put there.
struct RawFeature {
  int feature = 0;  // HEADER_* feature bit (data/perf_data_format.h)
  std::vector<uint8_t> bytes;
  bool operator==(const RawFeature&) const = default;
};

// The feature sections (file mode) or HEADER_FEATURE records (pipe mode) finish() writes.
// Empty strings and zero counts are left out.
// A GROUP_DESC entry: a {group} of events, by the index of its leader among the attrs.
struct EventGroupDesc {
  std::string name;  // perf's "{anon_group}" for an unnamed group
  uint32_t leader = 0, members = 0;
  // A group of several events that lie within a file's `events` attrs (GROUP_DESC comes from
  // the file: its indexes are checked before use).
  bool spans_events(size_t events) const { return members > 1 && leader < events && members <= events - leader; }
  bool operator==(const EventGroupDesc&) const = default;
};

struct HeaderFeatures {
  std::string hostname, osrelease, version, arch, cpudesc, cpuid;
  uint32_t nr_cpus_online = 0, nr_cpus_available = 0;
  uint64_t total_mem_kb = 0;
  std::vector<std::string> cmdline;  // perf stores the perf binary's path first, then argv
  std::vector<BuildIdEntry> build_ids;
  std::optional<uint64_t> clockid_res_ns;  // CLOCKID: resolution of the sampling clock
  // SAMPLE_TIME: first and last sample time. When unset, the writer uses what it saw in write().
  std::optional<uint64_t> first_sample_time, last_sample_time;
  // EVENT_DESC as read from a file (PerfDataReader fills it). The writer ignores it and
  // writes EVENT_DESC from its own attrs, so names and ids always agree with the attr section.
  std::vector<EventAttrEntry> event_desc;
  // GROUP_DESC: the recording's event groups (none: every event alone).
  std::vector<EventGroupDesc> groups;
  // Sections written back verbatim (ordered by feature id; duplicates of the above are ignored).
  std::vector<RawFeature> other;
};

// hostname, uname (osrelease, arch), perf-style version, /proc/cpuinfo (cpudesc, cpuid),
// CPU counts, MemTotal; cmdline as given.
HeaderFeatures this_machine_features(std::vector<std::string> cmdline);

class PerfDataWriter {
 public:
  // Creates (truncates) `path` and writes the header and attrs; the file is readable (empty)
  // from the moment this returns.
  static Result<PerfDataWriter> create_file(const std::filesystem::path& path, std::vector<EventAttrEntry> attrs);
  // perf's pipe mode (-o -): `fd` is not owned (stays open after finish()).
  static Result<PerfDataWriter> create_pipe(int fd, std::vector<EventAttrEntry> attrs);

  PerfDataWriter(PerfDataWriter&&) noexcept = default;
  PerfDataWriter& operator=(PerfDataWriter&&) noexcept = default;
  ~PerfDataWriter() = default;  // does not finish(): a dropped writer is a killed recorder

  // One whole record, perf_event_header first (header.size == record.size(), a multiple of 8
  // except for perf's own user records). Buffered; errors are the write(2) errors.
  Result<void> write(std::span<const uint8_t> record);
  // After a batch: writes FINISHED_ROUND, writes out the buffer and (file mode) updates the
  // header's data size, so what is written so far is readable if vperf is killed.
  Result<void> flush_round();
  // Feature sections (file) or feature records (pipe), then the final header. Call once.
  Result<void> finish(const HeaderFeatures& features);
  // perf record -z: from here on, what write() is given goes out in COMPRESSED records (zstd at
  // `level`, one stream flushed at each round, as perf writes it), and finish() adds the
  // COMPRESSED feature with `mmap_len`, the bytes of one ring buffer (a reader's bound on what
  // one record decompresses to). An Error when libzstd cannot be loaded.
  Result<void> compress(int level, uint32_t mmap_len);
  // Bytes of records written so far (the data section's size), including buffered ones.
  uint64_t data_bytes() const { return data_bytes_; }
  // With compress(): the bytes of records given to write(), before compression.
  uint64_t uncompressed_bytes() const { return plain_total_; }
  const std::vector<EventAttrEntry>& attrs() const { return attrs_; }

 private:
  PerfDataWriter() = default;
  Result<void> flush_buffer();
  void append(std::span<const uint8_t> record);
  Result<void> compress_batch();
  std::vector<uint8_t> compression_feature(uint32_t ratio) const;
  Result<void> update_header(uint64_t feature_bits0);
  void note_sample_time(std::span<const uint8_t> record);

  ScopedFd owned_fd_;  // file mode only
  int fd_ = -1;
  bool pipe_ = false;
  bool finished_ = false;
  std::vector<EventAttrEntry> attrs_;
  std::vector<uint8_t> buffer_;
  uint64_t data_offset_ = 0;
  uint64_t data_bytes_ = 0;
  uint64_t since_round_ = 0;  // bytes written since the last FINISHED_ROUND
  uint64_t attrs_offset_ = 0;
  std::optional<uint64_t> first_time_, last_time_;
  // perf record -z (compress()).
  std::optional<RecordCompressor> compressor_;
  std::vector<uint8_t> plain_;  // records given to write() since the last compressed batch
  uint64_t plain_total_ = 0;
  int compression_level_ = 0;
  uint32_t compression_mmap_len_ = 0;
};

}  // namespace vperf::data
