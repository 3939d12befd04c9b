#pragma once
// An allocator for a container reserved far ahead of use: its storage is a mapping of its own,
// whose pages become resident only when written, whatever the heap does. A reserve() on the
// heap gives no such promise: in the huge-page heap of the reading commands
// (core/huge_page_heap.h) every 2 MB the reserve spans is resident at the first write into it.
// With `huge_pages` the mapping asks for transparent huge pages too: resident in 2 MB steps as
// it fills, for a container written front to back, at a five-hundredth of the page faults.
#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace vperf::core {

template <typename T, bool huge_pages = false>
struct OwnMappingAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = OwnMappingAllocator<U, huge_pages>;
  };

  OwnMappingAllocator() = default;
  template <typename U>
  OwnMappingAllocator(const OwnMappingAllocator<U, huge_pages>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* at = ::mmap(nullptr, bytes(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    if constexpr (huge_pages) ::madvise(at, bytes(n), MADV_HUGEPAGE);  // advice: where THP is off, 4 KB pages
    return static_cast<T*>(at);
  }
  void deallocate(T* at, size_t n) noexcept { ::munmap(at, bytes(n)); }

  template <typename U>
  bool operator==(const OwnMappingAllocator<U, huge_pages>&) const noexcept {
    return true;
  }

 private:
  static size_t bytes(size_t n) { return n == 0 ? 1 : n * sizeof(T); }
};

}  // namespace vperf::core
