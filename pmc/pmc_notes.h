#pragma once
// Traps in raw encodings that a user reading "r13c" or "r300" should be told about, kept as a
// data table (pmc_notes.cpp) keyed by the encoding and the models it applies to.
#include <cstdint>
#include <string>
#include <vector>

#include "pmc/pmc_models.h"

namespace vperf::events {

// The notes that apply to `config` on `model`, most important first.
std::vector<std::string> encoding_notes(const PmcModel& model, uint64_t config);

}  // namespace vperf::events
