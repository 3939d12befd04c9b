#include "core/huge_page_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace vperf::core {

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;  // x86-64's and arm64's (4 KB granule) PMD size

// glibc's own limit on M_MMAP_THRESHOLD (HEAP_MAX_SIZE / 2 on 64-bit), while the reserve is
// made: the block that makes it must come from the heap. Afterwards glibc's default: the
// reserve holds every block it has room for, whatever its size; beyond it a large block gets
// its own mapping, given back when freed, as without the reserve.
constexpr int kLargestMmapThreshold = 32 << 20;
constexpr int kDefaultMmapThreshold = 128 << 10;

// Keeps freed memory at the top of the heap instead of trimming it (which would give the huge
// pages back and fault them in again at the next growth).
constexpr int kNoTrimBelow = 1 << 30;

// glibc's default top pad (mallopt(3)), restored once the reserve is made.
constexpr int kDefaultTopPad = 128 << 10;

// The block below the reserve (reserve_once), kept in a volatile: a block nothing reads is a
// malloc the compiler may leave out.
void* volatile heap_spacer = nullptr;

void reserve_once(size_t reserve) {
  if (mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) == 0) return;
  mallopt(M_TRIM_THRESHOLD, kNoTrimBelow);
  // One growth of the heap by the reserve: a block larger than the free top of the heap
  // (mallinfo2's keepcost) makes malloc extend the break by the block plus the top pad.
  mallopt(M_TOP_PAD, static_cast<int>(reserve));
  void* block = std::malloc(mallinfo2().keepcost + (size_t{1} << 20));
  mallopt(M_TOP_PAD, kDefaultTopPad);
  mallopt(M_MMAP_THRESHOLD, kDefaultMmapThreshold);
  if (!block) return;
  const uintptr_t from = reinterpret_cast<uintptr_t>(block);
  const uintptr_t start = (from + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(::sbrk(0)) & ~(kHugePage - 1);
  std::free(block);
  // The block came from mmap (no room for the heap to grow) when the break is below it.
  if (end <= start) return;
  ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
  // The heap's next allocations would fill the rest of the 2 MB below `start` first, in 4 KB
  // pages. A block that spans that rest, never freed and never written, makes them start at
  // the huge pages; it costs address space only (malloc writes the chunk headers at its two
  // ends, on pages that are touched anyway). Its chunk starts a header (16 bytes) before
  // `from` and is 16 bytes longer than asked: the next chunk starts at `start`.
  if (start > from) heap_spacer = std::malloc(start - from);
}

}  // namespace

void back_heap_with_huge_pages(size_t reserve) {
  static std::once_flag once;
  std::call_once(once, reserve_once, reserve);
}

}  // namespace vperf::core
