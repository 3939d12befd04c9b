// libFuzzer target for what perf daemon's sessions read from outside: the config file (any
// text parses or fails with an Error naming a line; a parsed session has a name without
// blanks, '/' or ':' and a run line) and the commands written to record's control fifo
// (the first byte says which: even, the config; odd, the control text).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "session/daemon.h"
#include "session/record_control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto config = vperf::session::parse_daemon_config(text);
    if (!config) return 0;
    for (const auto& session : config->sessions)
      if (session.name.empty() || session.name.find_first_of(" \t/:") != std::string::npos || session.run.empty()) std::abort();
    return 0;
  }
  (void)vperf::session::parse_control_spec(text);
  (void)vperf::session::parse_control_command(text);
  return 0;
}
