#include "symbols/debuginfod_client.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/shared_library.h"

namespace vperf::symbols {

namespace {

struct DebuginfodApi {
  decltype(&::debuginfod_begin) debuginfod_begin = nullptr;
  decltype(&::debuginfod_end) debuginfod_end = nullptr;
  decltype(&::debuginfod_find_debuginfo) debuginfod_find_debuginfo = nullptr;

  static Result<DebuginfodApi> load() {
    VPERF_TRY(SharedLibrary library, SharedLibrary::open("libdebuginfod.so.1", "install elfutils' debuginfod client: apt-get install libdebuginfod1"));
    DebuginfodApi api;
    VPERF_BIND_FUNCTION(library, api, debuginfod_begin);
    VPERF_BIND_FUNCTION(library, api, debuginfod_end);
    VPERF_BIND_FUNCTION(library, api, debuginfod_find_debuginfo);
    return api;
  }
};

}  // namespace

std::string debuginfod_urls() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  return urls != nullptr ? urls : "";
}

Result<std::filesystem::path> fetch_debuginfo(const BuildId& id) {
  const Result<DebuginfodApi>& api = loaded_once<DebuginfodApi>();
  if (!api) return api.error();
  debuginfod_client* client = api->debuginfod_begin();
  if (client == nullptr) return Error{"the debuginfod client could not start", 0, "check DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH"};
  char* path = nullptr;
  const int fd = api->debuginfod_find_debuginfo(client, id.bytes.data(), static_cast<int>(id.bytes.size()), &path);
  api->debuginfod_end(client);
  if (fd < 0)
    return Error{"the debuginfod servers (" + debuginfod_urls() + ") have no debuginfo for build-id " + id.hex() + ": " + std::strerror(-fd), 0,
                 "check DEBUGINFOD_URLS, or install the debug package"};
  ::close(fd);
  std::filesystem::path out(path != nullptr ? path : "");
  std::free(path);
  return out;
}

}  // namespace vperf::symbols
