#pragma once
// A file mapped read-only and private, for readers that walk a large file front to back: the
// pages they are done with can be dropped from memory (release) and are read back from the file,
// unchanged, should they be touched again. A multi-GB perf.data or trace.dat then costs the
// reader the pages it still needs, not the file's size.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf {

class FileMapping {
 public:
  FileMapping() = default;
  // The whole of `fd` (a regular file; an empty one maps to no bytes); `name` is for errors.
  static Result<FileMapping> map(const ScopedFd& fd, const std::string& name);
  FileMapping(FileMapping&& other) noexcept;
  FileMapping& operator=(FileMapping&& other) noexcept;
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();

  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(addr_), size_}; }
  // Drops the whole pages inside [from, to) (offsets in the file) from memory.
  void release(uint64_t from, uint64_t to) const;

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace vperf
