#pragma once
// A growing array kept in fixed-size chunks: appending never moves what is stored, so it never
// holds the old and the new copy at once as std::vector's doubling does (for a 10 MB array of a
// profile's frames, 15 MB for that moment, which was the flame graph's peak memory). Index
// access is one shift and one mask more than a vector's.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace vperf::core {

template <class T, size_t kChunkBits = 12>
class ChunkedVector {
 public:
  static constexpr size_t kChunk = size_t{1} << kChunkBits;

  void push_back(T value) {
    if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<T[]>(kChunk));
    chunks_[size_ >> kChunkBits][size_ & (kChunk - 1)] = std::move(value);
    ++size_;
  }
  const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    chunks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace vperf::core
