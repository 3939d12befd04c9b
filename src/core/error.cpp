#include "core/error.h"

#include <cstring>

namespace vperf {

std::string Error::describe() const {
  if (errno_value == 0) return message;
  return message + ": " + std::strerror(errno_value);
}

}  // namespace vperf
