#pragma once
// perf records whose size fields claim more bytes than follow them: the hostile input of
// issue 14, for the reader's unit tests and the `vperf report -i -` integration tests.
#include <cstdint>
#include <vector>

namespace vperf::test {

// A HEADER_TRACING_DATA record that says `payload` bytes of tracing data follow it.
std::vector<uint8_t> tracing_data_claiming(uint32_t payload);
// An AUXTRACE record that says `payload` bytes of AUX data follow it.
std::vector<uint8_t> auxtrace_claiming(uint64_t payload);

}  // namespace vperf::test
