#include "report/annotate_source.h"

#include "core/files.h"
#include "core/strings.h"

namespace vperf::report {
namespace {

std::string trimmed(const std::string& text) {
  const char* space = " \t\r\n\f\v";
  size_t begin = text.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(space) - begin + 1);
}

}  // namespace

std::optional<std::string> SourceFiles::line(const std::string& path, int line) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    std::optional<std::vector<std::string>> lines;
    // DWARF names the file: read it only if it is a regular one (never a FIFO or a device).
    if (Result<std::string> text = read_file(path)) {
      lines.emplace();
      for (std::string_view l : split(*text, '\n')) lines->push_back(trimmed(std::string(l)));
      if (text->empty() || text->back() == '\n') lines->pop_back();
    }
    it = files_.emplace(path, std::move(lines)).first;
  }
  if (!it->second || line < 1 || static_cast<size_t>(line) > it->second->size()) return std::nullopt;
  return (*it->second)[static_cast<size_t>(line) - 1];
}

}  // namespace vperf::report
