// TraceDatWriter: the file it writes is a readable trace.dat at every moment, for each version,
// with exactly the pages committed so far, whatever moves its regions made; finished, it is
// compact. Pages here are synthetic ring-buffer pages whose events carry a sequence number, so
// that any page lost, doubled or misplaced by a move shows.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include "core/scoped_fd.h"
#include "tracing/trace_dat.h"
#include "support/processes.h"

namespace vperf::tracing {
namespace {

constexpr uint32_t kPage = 4096;
constexpr int kEventsPerPage = 8;

// The tracing data of a real vperf file (the fuzz seed): everything before its CPU count.
std::vector<uint8_t> seed_tracing_data() {
  std::ifstream in(std::string(VPERF_SOURCE_DIR) + "/tests/fuzz/corpus/trace_dat/v6-getppid-stacktrace", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const char tag[] = "options  ";
  const auto at = std::search(bytes.begin(), bytes.end(), tag, tag + sizeof tag - 1);
  EXPECT_NE(at, bytes.end());
  return std::vector<uint8_t>(bytes.begin(), at - 4);
}

// A ring-buffer page: u64 timestamp, u64 commit, then kEventsPerPage events of 8 bytes each
// ({u32 cpu, u32 sequence number}, type_len 2, time delta 1).
std::vector<uint8_t> page(int cpu, uint32_t first) {
  std::vector<uint8_t> p(kPage, 0);
  const uint64_t timestamp = 1000000 + uint64_t{first} * 100;
  const uint64_t commit = kEventsPerPage * 12;
  std::memcpy(p.data(), &timestamp, 8);
  std::memcpy(p.data() + 8, &commit, 8);
  for (int i = 0; i < kEventsPerPage; ++i) {
    uint8_t* e = p.data() + 16 + i * 12;
    const uint32_t header = (1u << 5) | 2u;
    const uint32_t cpu_number = static_cast<uint32_t>(cpu), sequence = first + static_cast<uint32_t>(i);
    std::memcpy(e, &header, 4);
    std::memcpy(e + 4, &cpu_number, 4);
    std::memcpy(e + 8, &sequence, 4);
  }
  return p;
}

std::vector<uint8_t> file_bytes(int fd) {
  struct stat st{};
  EXPECT_EQ(::fstat(fd, &st), 0);
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  EXPECT_EQ(::pread(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  return bytes;
}

// Each CPU's sequence numbers as the reader gives them, or an error.
Result<std::map<int, std::vector<uint32_t>>> sequences(int fd) {
  VPERF_TRY(TraceDat file, TraceDat::parse(file_bytes(fd), false));
  std::map<int, std::vector<uint32_t>> seen;
  VPERF_TRY(file.for_each_event([&](const TraceDatEvent& e) {
    uint32_t cpu = 0, sequence = 0;
    if (e.data.size() >= 8) {
      std::memcpy(&cpu, e.data.data(), 4);
      std::memcpy(&sequence, e.data.data() + 4, 4);
    }
    EXPECT_EQ(static_cast<int>(cpu), e.cpu);
    seen[e.cpu].push_back(sequence);
    return true;
  }));
  return seen;
}

std::vector<uint32_t> first_n(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
  return v;
}

struct Layout {
  int version;
  std::string compression;
};

class TraceDatWriterTest : public ::testing::TestWithParam<Layout> {};

// Regions of two pages, batches of 1 to 5 pages dealt unevenly to three CPUs: every CPU's
// region moves several times, out of order. After every batch the file, read as it stands (as
// a kill would leave it), holds exactly the events committed; finished, it holds them all and
// is compact (head, then each CPU's data, nothing after the last).
TEST_P(TraceDatWriterTest, EveryMomentIsAReadableFileWithTheCommittedPages) {
  ScopedFd fd(::memfd_create("trace-dat-writer-test", MFD_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  TraceDatHeader header;
  header.tracing_data = seed_tracing_data();
  header.version = GetParam().version;
  header.compression = GetParam().compression;
  header.page_size = kPage;
  header.first_region_room = 2 * kPage;
  header.cpus = {0, 1, 2};  // version 6's table has no CPU numbers: CPUs 0 to N-1
  header.cpu_stats = {"entries: 0\n", "entries: 0\n", "entries: 0\n"};
  Result<TraceDatWriter> begun = TraceDatWriter::begin(fd.get(), header);
  ASSERT_TRUE(begun.ok()) << begun.error().describe();
  TraceDatWriter writer = std::move(begun).value();
  Result<std::map<int, std::vector<uint32_t>>> empty = sequences(fd.get());
  ASSERT_TRUE(empty.ok()) << empty.error().describe();
  EXPECT_TRUE(empty->empty());

  std::map<int, uint32_t> pages_of;
  const std::vector<std::pair<size_t, int>> batches = {{0, 1}, {1, 3}, {0, 2}, {2, 5}, {0, 4}, {1, 1}, {0, 5}, {2, 2}, {1, 4}, {0, 1}, {2, 5}, {0, 3}};
  for (const auto& [index, count] : batches) {
    const int cpu = header.cpus[index];
    std::vector<uint8_t> pages;
    for (int i = 0; i < count; ++i) {
      const std::vector<uint8_t> p = page(cpu, (pages_of[cpu] + static_cast<uint32_t>(i)) * kEventsPerPage);
      pages.insert(pages.end(), p.begin(), p.end());
    }
    if (count % 2) {
      ASSERT_TRUE(writer.add_pages(index, pages).ok());
    } else {
      int ends[2];
      ASSERT_EQ(::pipe(ends), 0);
      ScopedFd read_end(ends[0]), write_end(ends[1]);
      ASSERT_EQ(::write(write_end.get(), pages.data(), pages.size()), static_cast<ssize_t>(pages.size()));
      ASSERT_TRUE(writer.add_pages_from_pipe(index, read_end.get(), pages.size()).ok());
    }
    ASSERT_TRUE(writer.flush().ok());
    pages_of[cpu] += static_cast<uint32_t>(count);
    Result<std::map<int, std::vector<uint32_t>>> now = sequences(fd.get());
    ASSERT_TRUE(now.ok()) << now.error().describe();
    std::map<int, std::vector<uint32_t>> read = *now;
    for (const auto& [c, n] : pages_of) EXPECT_EQ(read[c], first_n(n * kEventsPerPage)) << "CPU " << c;
    EXPECT_EQ(writer.page_bytes(index), uint64_t{pages_of[cpu]} * kPage);
  }
  ASSERT_TRUE(writer.update_cmdlines("42 vperf-workload\n").ok());
  ASSERT_TRUE(writer.finish().ok());
  Result<std::map<int, std::vector<uint32_t>>> done = sequences(fd.get());
  ASSERT_TRUE(done.ok()) << done.error().describe();
  std::map<int, std::vector<uint32_t>> read = *done;
  for (const auto& [c, n] : pages_of) EXPECT_EQ(read[c], first_n(n * kEventsPerPage)) << "CPU " << c;
  const size_t size = file_bytes(fd.get()).size();
  if (header.compression.empty()) {
    // Compact: the head (under the first region's page boundary) and the pages, each CPU from
    // a page boundary.
    const uint64_t pages = pages_of[0] + pages_of[1] + pages_of[2];
    EXPECT_LE(size, header.tracing_data.size() + header.cmdlines_room + 2 * kPage + pages * kPage);
    EXPECT_GT(size, pages * kPage);
  }
  struct stat st{};
  ASSERT_EQ(::fstat(fd.get(), &st), 0);
  EXPECT_LE(static_cast<uint64_t>(st.st_blocks) * 512, static_cast<uint64_t>(size) + kPage) << "no data left past the end";
}

INSTANTIATE_TEST_SUITE_P(Versions, TraceDatWriterTest, ::testing::Values(Layout{6, ""}, Layout{7, ""}, Layout{7, "zstd"}),
                         [](const ::testing::TestParamInfo<Layout>& layout) {
                           return "v" + std::to_string(layout.param.version) + (layout.param.compression.empty() ? "" : "_" + layout.param.compression);
                         });

// A recording killed while it finishes (its regions moved down one by one, the file cut, the
// flyrecord section's size rewritten) leaves a file that reads with every page committed
// before: the finishing child is stopped at each of its system calls in turn (ptrace) and
// killed there, the file read after each kill. Every layout; the regions have moved past each
// other before finishing, so finishing moves each of them, some twice.
class TraceDatWriterKilledWhileFinishing : public ::testing::TestWithParam<Layout> {};

TEST_P(TraceDatWriterKilledWhileFinishing, EveryKillPointLeavesEveryCommittedPage) {
  // A compressed round is a chunk of a hundred bytes or so: 80 of them fill a page.
  const uint32_t kRounds = GetParam().compression.empty() ? 5 : 80;
  // The child: commits kRounds pages per CPU through regions of a page (each fills and moves
  // to the end, past the others), stops itself, then finishes.
  auto record_then_finish = [&](int fd) {
    TraceDatHeader header;
    header.tracing_data = seed_tracing_data();
    header.version = GetParam().version;
    header.compression = GetParam().compression;
    header.first_region_room = kPage;
    header.cpus = {0, 1, 2};
    header.cpu_stats = {"entries: 0\n", "entries: 0\n", "entries: 0\n"};
    Result<TraceDatWriter> writer = TraceDatWriter::begin(fd, header);
    if (!writer) ::_exit(2);
    for (uint32_t round = 0; round < kRounds; ++round) {
      for (size_t cpu = 0; cpu < 3; ++cpu)
        if (!writer->add_pages(cpu, page(static_cast<int>(cpu), round * kEventsPerPage)).ok()) ::_exit(3);
      if (!writer->flush().ok()) ::_exit(4);  // compressed: a chunk per round, which fills the region
    }
    ::raise(SIGSTOP);
    ::_exit(writer->finish().ok() ? 0 : 5);
  };
  // Runs the child to its stop, then lets it make `syscalls` system calls (all of them when
  // negative) and kills it at the entry of the next. Returns how many it made; kPtraceRefused
  // when this machine does not let a child be traced; kFailed (a test failure) when the
  // recording ended before it stopped.
  constexpr long kPtraceRefused = -1, kFailed = -2;
  constexpr int kPtraceRefusedExit = 6;
  auto run_killed_after = [&](int fd, long syscalls) -> long {
    const pid_t child = ::fork();
    if (child == 0) {
      if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) ::_exit(kPtraceRefusedExit);
      record_then_finish(fd);
    }
    int status = 0;
    if (::waitpid(child, &status, 0) != child) {
      ADD_FAILURE() << "waitpid of the recording failed";
      return kFailed;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kPtraceRefusedExit) return kPtraceRefused;
    if (!WIFSTOPPED(status)) {
      ADD_FAILURE() << "the recording ended before it finished (status " << status << ")";
      return kFailed;
    }
    ::ptrace(PTRACE_SETOPTIONS, child, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
    long entered = 0;
    bool at_entry = true;
    for (;;) {
      if (::ptrace(PTRACE_SYSCALL, child, nullptr, nullptr) != 0) break;
      if (::waitpid(child, &status, 0) != child || WIFEXITED(status) || WIFSIGNALED(status)) break;
      if (!WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80)) continue;
      if (at_entry && entered++ == syscalls) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        break;
      }
      at_entry = !at_entry;
    }
    EXPECT_TRUE(syscalls >= 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << "an untouched finish failed: " << status;
    return entered;
  };

  ScopedFd fd(::memfd_create("trace-dat-killed-finish", MFD_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  const long all = run_killed_after(fd.get(), -1);
  if (all == kPtraceRefused) GTEST_SKIP() << "ptrace of a child is not allowed here, so no kill point can be chosen";
  ASSERT_GE(all, 0);
  Result<std::map<int, std::vector<uint32_t>>> finished = sequences(fd.get());
  ASSERT_TRUE(finished.ok()) << finished.error().describe();
  for (int cpu = 0; cpu < 3; ++cpu) ASSERT_EQ(finished->count(cpu) ? finished->at(cpu) : std::vector<uint32_t>{}, first_n(kRounds * kEventsPerPage)) << "CPU " << cpu;
  ASSERT_GT(all, 3) << "finishing made no moves";
  for (long kill_at = 0; kill_at < all; ++kill_at) {
    SCOPED_TRACE("killed at system call " + std::to_string(kill_at) + " of " + std::to_string(all));
    ASSERT_EQ(::ftruncate(fd.get(), 0), 0);
    run_killed_after(fd.get(), kill_at);
    Result<std::map<int, std::vector<uint32_t>>> left = sequences(fd.get());
    ASSERT_TRUE(left.ok()) << left.error().describe();
    for (int cpu = 0; cpu < 3; ++cpu) EXPECT_EQ(left->count(cpu) ? left->at(cpu) : std::vector<uint32_t>{}, first_n(kRounds * kEventsPerPage)) << "CPU " << cpu;
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, TraceDatWriterKilledWhileFinishing,
                         ::testing::Values(Layout{6, ""}, Layout{7, ""}, Layout{7, "zstd"}),
                         [](const ::testing::TestParamInfo<Layout>& layout) {
                           return "v" + std::to_string(layout.param.version) + (layout.param.compression.empty() ? "" : "_" + layout.param.compression);
                         });

// The saved comms and the stats keep their room: longer texts are cut at a whole line, and the
// file stays readable with the comms it names.
TEST(TraceDatWriter, TextsKeepTheirRoom) {
  ScopedFd fd(::memfd_create("trace-dat-writer-test", MFD_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  TraceDatHeader header;
  header.tracing_data = seed_tracing_data();
  header.cmdlines_room = 64;
  header.first_region_room = kPage;
  header.cpus = {0};
  Result<TraceDatWriter> begun = TraceDatWriter::begin(fd.get(), header);
  ASSERT_TRUE(begun.ok()) << begun.error().describe();
  TraceDatWriter writer = std::move(begun).value();
  std::string comms;
  for (int pid = 100; pid < 120; ++pid) comms += std::to_string(pid) + " task-" + std::to_string(pid) + "\n";
  ASSERT_TRUE(writer.update_cmdlines(comms).ok());
  ASSERT_TRUE(writer.update_stats(0, "entries: 5\noverrun: 7\n" + std::string(2000, 'x') + "\ndropped events: 3\n").ok());
  ASSERT_TRUE(writer.add_pages(0, page(0, 0)).ok());
  ASSERT_TRUE(writer.finish().ok());
  Result<TraceDat> file = TraceDat::parse(file_bytes(fd.get()), false);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  ASSERT_EQ(file->cpu_stats().size(), 1u);
  EXPECT_EQ(file->cpu_stats()[0], "entries: 5\noverrun: 7\n" + std::string(512 - 23, ' ') + "\n") << "cut before the line that does not fit";
  EXPECT_EQ(file->lost_by_cpu(), std::vector<uint64_t>{7});
  const std::vector<uint8_t> bytes = file_bytes(fd.get());
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_NE(text.find("100 task-100\n101 task-101\n102 task-102\n103 task-103\n"), std::string::npos);
  EXPECT_EQ(text.find("104 task-104"), std::string::npos) << "the comms past the room are cut at a whole line";
}

// A version 6 writer for CPUs 0 and 1 on `fd`, its first regions a page each.
Result<TraceDatWriter> two_cpu_writer(int fd) {
  TraceDatHeader header;
  header.tracing_data = seed_tracing_data();
  header.first_region_room = kPage;
  header.cpus = {0, 1};
  return TraceDatWriter::begin(fd, header);
}

// A 64 MiB trace.dat opened and read front to back: the file is mapped, and each CPU's pages
// leave memory behind its reader, so the resident size grows by a few MiB, not by the file's
// size (it was read whole into memory: 64 MiB and more).
TEST(TraceDat, AFileReadFrontToBackDoesNotStayResident) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("vperf-resident-" + std::to_string(::getpid()) + ".dat");
  {
    ScopedFd fd(::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    Result<TraceDatWriter> begun = two_cpu_writer(fd.get());
    ASSERT_TRUE(begun.ok()) << begun.error().describe();
    TraceDatWriter writer = std::move(begun).value();
    for (uint32_t first = 0; first < 8192 * kEventsPerPage; first += 256 * kEventsPerPage)
      for (int cpu : {0, 1}) {
        std::vector<uint8_t> pages;
        for (uint32_t p = 0; p < 256; ++p) {
          const std::vector<uint8_t> one = page(cpu, first + p * kEventsPerPage);
          pages.insert(pages.end(), one.begin(), one.end());
        }
        ASSERT_TRUE(writer.add_pages(static_cast<size_t>(cpu), pages).ok());
      }
    ASSERT_TRUE(writer.finish().ok());
  }
  const uint64_t before = test::resident_bytes();
  Result<TraceDat> file = TraceDat::open(path);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  uint64_t events = 0, most = 0;
  ASSERT_TRUE(file->for_each_event([&](const TraceDatEvent&) {
                    if (++events % 20000 == 0) most = std::max(most, test::resident_bytes());
                    return true;
                  }).ok());
  std::filesystem::remove(path);
  EXPECT_EQ(events, uint64_t{2} * 8192 * kEventsPerPage);
  EXPECT_LT(most, before + (uint64_t{16} << 20)) << "grew by " << ((most - before) >> 20) << " MiB reading a 64 MiB file";
}

// A reader maps the file it reads (TraceDat::open): a vperf ftrace record that finishes the same
// file meanwhile must not cut it under the mapping (a read past the new end would be SIGBUS).
// With a reader, finishing leaves the file's size and a readable file; without one, it cuts.
TEST(TraceDatWriter, FinishingLeavesTheSizeOfAFileSomeoneReads) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("vperf-shared-" + std::to_string(::getpid()) + ".dat");
  for (const bool reader_open : {true, false}) {
    SCOPED_TRACE(reader_open ? "read meanwhile" : "alone");
    ScopedFd fd(::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    Result<TraceDatWriter> begun = two_cpu_writer(fd.get());
    ASSERT_TRUE(begun.ok()) << begun.error().describe();
    TraceDatWriter writer = std::move(begun).value();
    uint32_t pages[2] = {0, 0};
    for (int round = 0; round < 6; ++round)  // CPU 0's region moves past CPU 1's: finishing moves it back and cuts
      for (int cpu : {0, 1}) {
        ASSERT_TRUE(writer.add_pages(static_cast<size_t>(cpu), page(cpu, pages[cpu] * kEventsPerPage)).ok());
        ++pages[cpu];
      }
    ASSERT_TRUE(writer.flush().ok());
    const uint64_t before = file_bytes(fd.get()).size();
    std::optional<TraceDat> reading;
    if (reader_open) {
      Result<TraceDat> opened = TraceDat::open(path);
      ASSERT_TRUE(opened.ok()) << opened.error().describe();
      reading.emplace(std::move(opened).value());
    }
    ASSERT_TRUE(writer.finish().ok());
    const uint64_t after = file_bytes(fd.get()).size();
    if (reader_open) {
      EXPECT_EQ(after, before) << "cut under a reader's mapping";
      uint64_t events = 0;
      (void)reading->for_each_event([&](const TraceDatEvent&) { return ++events > 0; });  // no SIGBUS, whatever it reads
      reading.reset();
    } else {
      EXPECT_LT(after, before) << "compacted when nobody reads it";
    }
    Result<std::map<int, std::vector<uint32_t>>> read = sequences(fd.get());
    ASSERT_TRUE(read.ok()) << read.error().describe();
    std::map<int, std::vector<uint32_t>> seen = *read;
    EXPECT_EQ(seen[0], first_n(6 * kEventsPerPage));
    EXPECT_EQ(seen[1], first_n(6 * kEventsPerPage));
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vperf::tracing
