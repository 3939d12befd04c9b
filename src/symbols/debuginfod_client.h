#pragma once
// Separate debuginfo from the debuginfod servers the user configured (DEBUGINFOD_URLS), through
// elfutils' client library (libdebuginfod), opened on first use: only a lookup that found
// nothing on disk pays for loading it and its HTTP stack. The library keeps what it fetched in
// its own cache ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client), so a second lookup of
// the same build-id is a file check.
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.h"
#include "symbols/build_id.h"

namespace vperf::symbols {

// The DEBUGINFOD_URLS this process would ask, empty when unset (then nothing is asked).
std::string debuginfod_urls();

// The path of `id`'s debuginfo in the client's cache, fetched if it was not there; an Error
// naming the servers and what they answered (not found, unreachable) or the missing library.
// Only called when debuginfod_urls() is not empty.
Result<std::filesystem::path> fetch_debuginfo(const BuildId& id);

}  // namespace vperf::symbols
