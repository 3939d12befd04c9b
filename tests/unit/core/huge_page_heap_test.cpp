// core::back_heap_with_huge_pages: the kernel's view of this process after the call (its
// /proc/self/smaps), not the calls made: the heap has grown by the reserve, the reserve is
// marked for huge pages ("hg"), and blocks above glibc's default mmap threshold are served from
// it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/huge_page_heap.h"

namespace vperf::core {
namespace {

struct Vma {
  uintptr_t start = 0, end = 0;
  std::string name, flags;
};

std::vector<Vma> heap_vmas() {
  std::vector<Vma> out;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_heap = false;
  while (std::getline(smaps, line)) {
    if (line.starts_with("VmFlags:")) {
      if (in_heap) out.back().flags = line.substr(8);
      continue;
    }
    // A VMA's first line: "start-end perms offset dev inode [name]".
    const size_t dash = line.find('-');
    if (dash == std::string::npos || dash == 0 || line.find(':') < dash) continue;
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, name;
    fields >> range >> perms >> offset >> dev >> inode >> name;
    in_heap = name == "[heap]";
    if (in_heap) out.push_back({std::stoul(range.substr(0, dash), nullptr, 16), std::stoul(range.substr(dash + 1), nullptr, 16), name, ""});
  }
  return out;
}

bool has_flag(const std::string& flags, const std::string& flag) {
  std::istringstream words(flags);
  std::string word;
  while (words >> word) {
    if (word == flag) return true;
  }
  return false;
}

TEST(HugePageHeap, TheReserveIsHeapMarkedForHugePagesAndLargeBlocksComeFromIt) {
  back_heap_with_huge_pages(size_t{16} << 20);
  back_heap_with_huge_pages(size_t{16} << 20);  // once per process: the second call changes nothing

  uintptr_t advised_start = 0, advised_end = 0;
  size_t advised = 0;
  for (const Vma& vma : heap_vmas()) {
    if (!has_flag(vma.flags, "hg")) continue;
    ++advised;
    advised_start = vma.start;
    advised_end = vma.end;
  }
  ASSERT_EQ(advised, 1u) << "the heap should have one range marked for huge pages";
  EXPECT_EQ(advised_start % (uintptr_t{2} << 20), 0u);
  EXPECT_EQ(advised_end % (uintptr_t{2} << 20), 0u);
  // The reserve, less what rounding to 2 MB and the block that made it took.
  EXPECT_GE(advised_end - advised_start, size_t{12} << 20);

  // Blocks above glibc's default mmap threshold (128 KB) would each be a mapping of their own,
  // in 4 KB pages, unmapped again by free(): now the reserve holds them, from its first byte.
  for (size_t size : {size_t{1} << 20, size_t{4} << 20}) {
    void* block = std::malloc(size);
    ASSERT_NE(block, nullptr);
    const auto at = reinterpret_cast<uintptr_t>(block);
    EXPECT_GE(at, advised_start) << size << " bytes";
    EXPECT_LE(at + size, advised_end) << size << " bytes";
    std::memset(block, 1, size);
    std::free(block);
  }
  // Freed memory stays in the heap (no trim that would give the huge pages back).
  bool still_advised = false;
  for (const Vma& vma : heap_vmas()) still_advised |= vma.start == advised_start && vma.end == advised_end && has_flag(vma.flags, "hg");
  EXPECT_TRUE(still_advised);
}

}  // namespace
}  // namespace vperf::core
