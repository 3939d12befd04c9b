#include "core/file_mapping.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace vperf {

Result<FileMapping> FileMapping::map(const ScopedFd& fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::from_errno("stat " + name);
  FileMapping mapping;
  if (st.st_size <= 0) return mapping;
  void* addr = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) return Error::from_errno("mmap " + name);
  mapping.addr_ = addr;
  mapping.size_ = static_cast<size_t>(st.st_size);
  return mapping;
}

FileMapping::FileMapping(FileMapping&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

FileMapping& FileMapping::operator=(FileMapping&& other) noexcept {
  if (this != &other) {
    if (addr_) ::munmap(addr_, size_);
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

FileMapping::~FileMapping() {
  if (addr_) ::munmap(addr_, size_);
}

void FileMapping::release(uint64_t from, uint64_t to) const {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  to = std::min<uint64_t>(to, size_) / page * page;
  from = (from + page - 1) / page * page;
  if (!addr_ || from >= to) return;
  ::madvise(static_cast<char*>(addr_) + from, to - from, MADV_DONTNEED);
}

}  // namespace vperf
