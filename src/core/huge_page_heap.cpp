#include "core/huge_page_heap.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace vperf::core {

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;  // x86-64's and arm64's (4 KB granule) PMD size

// glibc's own limit on M_MMAP_THRESHOLD (HEAP_MAX_SIZE / 2 on 64-bit), kept after the reserve is
// made: every block up to 32 MB comes from the heap, and a freed one is used again. Setting
// the threshold at all ends glibc's own adjustment of it (which raises it to the size of each
// mapped block freed), and its default of 128 KB gave every growth of a large table (a
// vector's doubling, a hash table's) a fresh mapping faulted in 4 KB at a time, its old one
// unmapped: a fifth of a 626k-sample system-wide report's time was those faults (each several
// microseconds on these VMs). Kept at 32 MB, that report takes 0.83x the CPU time, its peak
// resident size 1.09x (perf's is 2.6x it).
constexpr int kLargestMmapThreshold = 32 << 20;

// Keeps freed memory at the top of the heap instead of trimming it (which would give the huge
// pages back and fault them in again at the next growth).
constexpr int kNoTrimBelow = 1 << 30;

// The block below the reserve (reserve_once), kept in a volatile: a block nothing reads is a
// malloc the compiler may leave out.
void* volatile heap_spacer = nullptr;

uintptr_t round_down(uintptr_t at) { return at & ~(kHugePage - 1); }
uintptr_t round_up(uintptr_t at) { return round_down(at + kHugePage - 1); }

void reserve_once(size_t reserve) {
  if (mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) == 0) return;
  mallopt(M_TRIM_THRESHOLD, kNoTrimBelow);
  // One block as large as the reserve and larger than the free top of the heap (mallinfo2's
  // keepcost): malloc extends the break for it. malloc writes chunk headers at the block's two
  // ends and nowhere between: a page the kernel has mapped in 4 KB before the advice can never
  // be part of a huge page (a header written mid-reserve cost 470 page faults a run, one run in
  // two), so the advised range lies strictly between the headers.
  const size_t size = mallinfo2().keepcost + reserve;
  const size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(size);
  // A block from mmap (the heap could not grow) is no reserve: freed, it is unmapped.
  if (block && mallinfo2().hblkhd != mapped_before) {
    std::free(block);
  } else if (block) {
    const uintptr_t from = reinterpret_cast<uintptr_t>(block);
    const uintptr_t start = round_up(from), end = round_down(from + size);
    std::free(block);  // back into the top of the heap: writes only the header before `from`
    if (start < end) {
      ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
      // The heap's next allocations would fill the rest of the 2 MB below `start` first, in 4 KB
      // pages. A block that spans that rest, never freed and never written, makes them start at
      // the huge pages; it costs address space only. Its chunk starts a header (16 bytes) before
      // `from` and is 16 bytes longer than asked: the next chunk, and the top's header, start
      // at `start`.
      if (start > from) heap_spacer = std::malloc(start - from);
    }
  }
}

}  // namespace

void back_heap_with_huge_pages(size_t reserve) {
  static std::once_flag once;
  std::call_once(once, reserve_once, reserve);
}

}  // namespace vperf::core
