#pragma once
// Strings interned as small ids (comms, trace texts, inlined function names), so that keys of
// the report's hot paths are integers and grouping a sample allocates nothing once its strings
// are known. Id 0 is the empty string.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vperf::report {

class Interner {
 public:
  Interner() { find_or_add(""); }
  uint32_t intern(std::string_view text) {
    // Texts come in runs (a thread's samples, one after another): the last one skips the hash.
    if (texts_[last_] == text) return last_;
    return last_ = find_or_add(text);
  }
  const std::string& text(uint32_t id) const { return texts_[id]; }
  // The id of a text interned before, or nullopt.
  std::optional<uint32_t> find(std::string_view text) const {
    auto it = ids_.find(text);
    return it == ids_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }
  size_t size() const { return texts_.size(); }
  // Forgets every text but "" (id 0).
  void clear() {
    texts_.clear();
    ids_.clear();
    last_ = 0;
    find_or_add("");
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  uint32_t find_or_add(std::string_view text);

  std::vector<std::string> texts_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  uint32_t last_ = 0;  // the id intern() gave last
};

}  // namespace vperf::report
