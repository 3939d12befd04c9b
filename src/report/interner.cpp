#include "report/interner.h"

namespace vperf::report {

uint32_t Interner::find_or_add(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  ids_.emplace(std::string(text), id);
  return id;
}

}  // namespace vperf::report
