#include "cli/perf_data_input.h"

#include <unistd.h>

#include "core/error.h"

namespace vperf::cli {

data::PerfDataReader open_perf_data(const std::string& input, std::string_view record_command) {
  Result<data::PerfDataReader> reader =
      input == "-" ? data::PerfDataReader::open_pipe(STDIN_FILENO) : data::PerfDataReader::open_file(input);
  if (!reader)
    throw UserError("cannot read " + (input == "-" ? std::string("the pipe") : input) + ": " + reader.error().describe(),
                    "record one first: " + std::string(record_command) + " (or give -i FILE)");
  return std::move(reader).value();
}

}  // namespace vperf::cli
