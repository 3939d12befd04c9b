// libFuzzer target for the options of every command: the input is an argument vector (the words
// after "vperf", split on NUL when the input has one, so a word may hold a newline, else on
// newlines), parsed by cli::parse_only, which runs no command. Invariants: no crash; no
// exception but vperf's user errors and CLI11's parse errors (both become the one-line message;
// anything else escapes parse_only and libFuzzer reports it); a failure is exactly one line on
// stderr, "vperf: error: ...", with a non-zero status; an answer without error (help, --version)
// prints nothing on stderr and exits 0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"

namespace {

std::vector<std::string> words_of(std::string_view input) {
  const char separator = input.find('\0') != std::string_view::npos ? '\0' : '\n';
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find(separator, start);
    if (end == std::string_view::npos) end = input.size();
    words.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  // A trailing separator ends the last word; it does not start an empty one.
  if (!input.empty() && input.back() == separator) words.pop_back();
  return words;
}

[[noreturn]] void broken(const char* invariant, const std::string& err, int status) {
  std::cerr << "invariant broken: " << invariant << " (status " << status << ", stderr: " << err << ")\n";
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words = words_of(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<const char*> argv{"vperf"};
  for (const std::string& word : words) argv.push_back(word.c_str());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  std::optional<int> status = vperf::cli::parse_only(static_cast<int>(argv.size() - 1), argv.data(), out, err);
  if (!status) {
    if (!err.str().empty()) broken("a command that would run printed an error while parsing", err.str(), 0);
    return 0;
  }
  const std::string message = err.str();
  if (*status == 0) {
    if (!message.empty()) broken("an answer with status 0 printed on stderr", message, *status);
    return 0;
  }
  if (!message.starts_with("vperf: error: ")) broken("a failure is 'vperf: error: ...'", message, *status);
  if (message.find('\n') != message.size() - 1) broken("a failure is one line", message, *status);
  return 0;
}
