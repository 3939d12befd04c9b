#include "data/synthesize.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>

#include "core/files.h"
#include "support/fake_event_fs.h"

namespace vperf::data {
namespace {

perf_event_header header_of(const RecordBytes& r) {
  perf_event_header h;
  std::memcpy(&h, r.data(), sizeof h);
  return h;
}

std::string string_at(const RecordBytes& r, size_t offset) { return std::string(reinterpret_cast<const char*>(r.data() + offset)); }

// Synthesized records' trailers: none, or sample_id_all's fields of `sample_type`, all zero.
const SampleFormat kNoTrailer{};
SampleFormat trailer_of(uint64_t sample_type) { return SampleFormat{.sample_type = sample_type, .sample_id_all = true}; }

uint64_t u64_at(const RecordBytes& r, size_t offset) {
  uint64_t v;
  std::memcpy(&v, r.data() + offset, 8);
  return v;
}

TEST(Synthesize, CommRecordIsPaddedAndCarriesTheTrailer) {
  RecordBytes r = comm_record(10, 11, "spin", false, trailer_of(PERF_SAMPLE_TID | PERF_SAMPLE_TIME));
  perf_event_header h = header_of(r);
  EXPECT_EQ(h.type, uint32_t{PERF_RECORD_COMM});
  EXPECT_EQ(h.size, 8u + 8u + 8u + 16u) << "header, pid/tid, \"spin\\0\" padded to 8, trailer";
  EXPECT_EQ(h.size, r.size());
  EXPECT_EQ(string_at(r, 16), "spin");
  EXPECT_EQ(header_of(comm_record(1, 1, "12345678", true, kNoTrailer)).size, 8u + 8u + 16u) << "8 chars need a 9th NUL";
  EXPECT_EQ(header_of(comm_record(1, 1, "x", true, kNoTrailer)).misc, uint16_t{PERF_RECORD_MISC_COMM_EXEC});
}

// /proc/PID/comm of a kworker names its workqueue too, past the kernel's TASK_COMM_LEN; the
// record carries what the kernel's own COMM would and what perf synthesizes: 15 bytes.
TEST(Synthesize, CommIsCutToTheKernelsTaskNameLength) {
  RecordBytes r = comm_record(10, 10, "kworker/0:0H-kblockd", false, kNoTrailer);
  EXPECT_EQ(string_at(r, 16), "kworker/0:0H-kb");
  EXPECT_EQ(header_of(r).size, 8u + 8u + 16u);
  EXPECT_EQ(string_at(comm_record(1, 1, "exactly15chars!", false, kNoTrailer), 16), "exactly15chars!");
}

// Synthesized records are made by the one record encoder: the record parser reads them back
// field for field, trailer included.
TEST(Synthesize, RecordsParseBackThroughTheRecordParser) {
  const SampleFormat format = trailer_of(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU);
  MappingLine m{0x1000, 0x3000, 0x200, 8, 1, 77, "r-xs", "/bin/x"};
  Result<Record> parsed = parse_record(mmap2_record(5, 6, m, PERF_RECORD_MISC_USER, format), &format);
  ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
  EXPECT_TRUE(parsed->has_sample_id);
  EXPECT_EQ(parsed->sample_id, SampleId{});
  const auto* mmap2 = std::get_if<Mmap2Record>(&parsed->body);
  ASSERT_NE(mmap2, nullptr);
  EXPECT_EQ(*mmap2, (Mmap2Record{5, 6, 0x1000, 0x2000, 0x200, 8, 1, 77, 0, {}, 5, 1, "/bin/x"}));
  Result<Record> comm = parse_record(comm_record(3, 4, "spin", true, format), &format);
  ASSERT_TRUE(comm.ok()) << comm.error().describe();
  EXPECT_EQ(comm->misc, uint16_t{PERF_RECORD_MISC_COMM_EXEC});
  EXPECT_EQ(std::get<CommRecord>(comm->body), (CommRecord{3, 4, "spin"}));
}

TEST(Synthesize, ParsesMapsLinesWithSpacesAndAnonymousMappings) {
  auto m = parse_maps_line("55820cb7c000-55820cb80000 r-xp 00002000 fe:00 248139                     /usr/bin/my prog");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->start, 0x55820cb7c000u);
  EXPECT_EQ(m->end, 0x55820cb80000u);
  EXPECT_EQ(m->pgoff, 0x2000u);
  EXPECT_EQ(m->major, 0xfeu);
  EXPECT_EQ(m->inode, 248139u);
  EXPECT_EQ(m->path, "/usr/bin/my prog");
  auto anon = parse_maps_line("7f562e3f6000-7f562e3fa000 rw-p 00000000 00:00 0 ");
  ASSERT_TRUE(anon.has_value());
  EXPECT_EQ(anon->path, "");
  EXPECT_FALSE(parse_maps_line("garbage").has_value());
  EXPECT_FALSE(parse_maps_line("20-10 r-xp 0 00:00 0").has_value()) << "end before start";
}

TEST(Synthesize, Mmap2RecordLayoutMatchesTheKernels) {
  MappingLine m{0x1000, 0x3000, 0x200, 8, 1, 77, "r-xp", "/bin/x"};
  RecordBytes r = mmap2_record(5, 6, m, PERF_RECORD_MISC_USER, kNoTrailer);
  EXPECT_EQ(header_of(r).type, uint32_t{PERF_RECORD_MMAP2});
  EXPECT_EQ(u64_at(r, 16), 0x1000u);
  EXPECT_EQ(u64_at(r, 24), 0x2000u) << "length";
  EXPECT_EQ(u64_at(r, 32), 0x200u);
  EXPECT_EQ(u64_at(r, 48), 77u) << "inode after maj/min";
  uint32_t prot;
  std::memcpy(&prot, r.data() + 64, 4);
  EXPECT_EQ(prot, 5u) << "PROT_READ|PROT_EXEC";
  EXPECT_EQ(string_at(r, 72), "/bin/x");
}

TEST(Synthesize, ThisProcessHasItsThreadsAndItsExecutable) {
  Result<std::vector<RecordBytes>> records = synthesize_process(::getpid(), SynthesizedMaps::CodeOnly, kNoTrailer);
  ASSERT_TRUE(records.ok()) << records.error().describe();
  size_t comms = 0;
  bool found_self = false;
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  for (const RecordBytes& r : *records) {
    perf_event_header h = header_of(r);
    if (h.type == PERF_RECORD_COMM) ++comms;
    if (h.type == PERF_RECORD_MMAP2 && string_at(r, 72) == self) found_self = true;
  }
  EXPECT_GE(comms, 1u);
  EXPECT_TRUE(found_self) << "the test binary's code mapping";
  Result<std::vector<RecordBytes>> gone = synthesize_process(0x3ffffff0, SynthesizedMaps::CodeOnly, kNoTrailer);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().errno_value, ESRCH);
}

// A process's maps as perf record synthesizes them: the code maps alone, or with data maps
// (attr.mmap_data, --call-graph dwarf) every mapping in /proc/PID/maps order, the non-code ones
// marked MMAP_DATA as the kernel marks its own. The read-only segment before the code holds
// .eh_frame_hdr, which perf's unwinder reads through its map.
TEST(Synthesize, DataMapsComeWithTheCodeMapsWhenTheRecordingAsksForThem) {
  test::TempTree proc;
  proc.write("42/task/42/comm", "spin\n");
  proc.write("42/maps",
             "55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 248139                     /usr/bin/spin\n"
             "55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:00 248139                     /usr/bin/spin\n"
             "55d0c0a07000-55d0c0a09000 r--p 00007000 fe:00 248139                     /usr/bin/spin\n"
             "55d0c0a09000-55d0c0a0a000 rw-p 00009000 fe:00 248139                     /usr/bin/spin\n"
             "7f8d194ac000-7f8d194b9000 rw-p 00000000 00:00 0 \n"
             "7f8d194bd000-7f8d194c4000 r--s 00000000 fe:00 332280                     /usr/lib/gconv.cache\n"
             "7ffd626ec000-7ffd6270d000 rw-p 00000000 00:00 0                          [stack]\n");
  struct Seen {
    uint64_t start;
    uint16_t misc;
    uint32_t prot, flags;
    std::string name;
    bool operator==(const Seen&) const = default;
  };
  auto maps = [&](SynthesizedMaps which) {
    Result<std::vector<RecordBytes>> records = synthesize_process(42, which, kNoTrailer, ProcRoot{proc.root()});
    EXPECT_TRUE(records.ok()) << records.error().describe();
    std::vector<Seen> seen;
    for (const RecordBytes& r : records.value()) {
      if (header_of(r).type != PERF_RECORD_MMAP2) continue;
      uint32_t prot, flags;
      std::memcpy(&prot, r.data() + 64, 4);
      std::memcpy(&flags, r.data() + 68, 4);
      seen.push_back({u64_at(r, 16), header_of(r).misc, prot, flags, string_at(r, 72)});
    }
    return seen;
  };
  constexpr uint16_t user = PERF_RECORD_MISC_USER, data = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA;
  EXPECT_EQ(maps(SynthesizedMaps::CodeOnly), (std::vector<Seen>{{0x55d0c0a02000, user, 5, 2, "/usr/bin/spin"}}));
  EXPECT_EQ(maps(SynthesizedMaps::All), (std::vector<Seen>{{0x55d0c0a00000, data, 1, 2, "/usr/bin/spin"},
                                                           {0x55d0c0a02000, user, 5, 2, "/usr/bin/spin"},
                                                           {0x55d0c0a07000, data, 1, 2, "/usr/bin/spin"},
                                                           {0x55d0c0a09000, data, 3, 2, "/usr/bin/spin"},
                                                           {0x7f8d194ac000, data, 3, 2, "//anon"},
                                                           {0x7f8d194bd000, data, 1, 1, "/usr/lib/gconv.cache"},
                                                           {0x7ffd626ec000, data, 3, 2, "[stack]"}}));
  perf_event_attr attr{};
  EXPECT_EQ(synthesized_maps_for(attr), SynthesizedMaps::CodeOnly);
  attr.mmap_data = 1;
  EXPECT_EQ(synthesized_maps_for(attr), SynthesizedMaps::All);
}

TEST(Synthesize, AGuestsOverlongModuleNameIsCutToFitTheRecordSize) {
  // A guest's /proc/modules is whatever the guest says: a 70,000-character module name once
  // wrapped the 16-bit record size, so the record claimed fewer bytes than it held.
  const std::string name(70000, 'm');
  std::vector<RecordBytes> records =
      kernel_map_records("", name + " 4096 0 - Live 0xffffffffc0000000\n", pid_t{7}, trailer_of(PERF_SAMPLE_TID));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(header_of(records[0]).size, records[0].size());
  EXPECT_EQ(header_of(records[0]).misc, uint16_t{PERF_RECORD_MISC_GUEST_KERNEL});
  const std::string stored = string_at(records[0], 40);
  EXPECT_EQ(stored.size(), size_t{PATH_MAX - 1}) << "cut to PATH_MAX - 1 bytes, as perf cuts";
  EXPECT_EQ(stored.find_first_not_of('m', 1), std::string::npos) << "\"[\" and the name's first bytes";
}

TEST(Synthesize, KernelMapSpansTextToEtextAsPerf) {
  test::TempTree proc;
  proc.write("kallsyms", "ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff82206448 T _etext\n");
  proc.write("modules", "kvm 1118208 1 kvm_intel, Live 0xffffffffc0a00000\n");
  Result<std::vector<RecordBytes>> records = synthesize_kernel_maps(kNoTrailer, ProcRoot{proc.root()});
  ASSERT_TRUE(records.ok()) << records.error().describe();
  ASSERT_EQ(records->size(), 2u);
  const RecordBytes& kernel = (*records)[0];
  EXPECT_EQ(u64_at(kernel, 16), 0xffffffff81000000u);
  EXPECT_EQ(u64_at(kernel, 24), 0x1206448u) << "perf: [0xffffffff81000000(0x1206448) @ 0xffffffff81000000]";
  EXPECT_EQ(u64_at(kernel, 32), 0xffffffff81000000u);
  EXPECT_EQ(string_at(kernel, 40), "[kernel.kallsyms]_text");
  EXPECT_EQ(string_at((*records)[1], 40), "[kvm]");
  test::TempTree restricted;
  restricted.write("kallsyms", "0000000000000000 T _text\n0000000000000000 T _etext\n");
  Result<std::vector<RecordBytes>> none = synthesize_kernel_maps(kNoTrailer, ProcRoot{restricted.root()});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "zeroed addresses give no kernel map";
}

// arm64 (the test guest's Debian 6.1 kernel): no _text, and _etext is a data symbol. perf 6.1
// then records "[kernel.kallsyms]_stext" reaching the top of the address space:
// "[0xffffcfdcdfa10000(0x3023205effff) @ 0xffffcfdcdfa10000]: x [kernel.kallsyms]_stext".
TEST(Synthesize, Arm64KernelMapStartsAtStextAndReachesTheTopAsPerf) {
  test::TempTree proc;
  proc.write("kallsyms", "ffffcfdcdfa10000 T _stext\nffffcfdce0700000 D _etext\nffffcfdce1060000 T _sinittext\n");
  Result<std::vector<RecordBytes>> records = synthesize_kernel_maps(kNoTrailer, ProcRoot{proc.root()});
  ASSERT_TRUE(records.ok()) << records.error().describe();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(u64_at((*records)[0], 16), 0xffffcfdcdfa10000u);
  EXPECT_EQ(u64_at((*records)[0], 24), 0x3023205effffu);
  EXPECT_EQ(u64_at((*records)[0], 32), 0xffffcfdcdfa10000u);
  EXPECT_EQ(string_at((*records)[0], 40), "[kernel.kallsyms]_stext");
}

}  // namespace
}  // namespace vperf::data
