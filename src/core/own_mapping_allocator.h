#pragma once
// An allocator for a container reserved far ahead of use: its storage is a mapping of its own,
// whose 4 KB pages become resident only when written, whatever the heap does. A reserve() on
// the heap gives no such promise: in the huge-page heap of the reading commands
// (core/huge_page_heap.h) every 2 MB the reserve spans is resident at the first write into it.
#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace vperf::core {

template <typename T>
struct OwnMappingAllocator {
  using value_type = T;

  OwnMappingAllocator() = default;
  template <typename U>
  OwnMappingAllocator(const OwnMappingAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* at = ::mmap(nullptr, bytes(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(at);
  }
  void deallocate(T* at, size_t n) noexcept { ::munmap(at, bytes(n)); }

  template <typename U>
  bool operator==(const OwnMappingAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static size_t bytes(size_t n) { return n == 0 ? 1 : n * sizeof(T); }
};

}  // namespace vperf::core
