#pragma once
// The text of source lines for `vperf annotate`, read once per file. Lines are shown as perf
// annotate shows objdump -S's: without leading or trailing white space.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vperf::report {

class SourceFiles {
 public:
  // Line `line` (1-based) of `path`; nullopt when the file cannot be read or is shorter.
  std::optional<std::string> line(const std::string& path, int line);

 private:
  std::map<std::string, std::optional<std::vector<std::string>>> files_;
};

}  // namespace vperf::report
