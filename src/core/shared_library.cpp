#include "core/shared_library.h"

#include <dlfcn.h>

namespace vperf {

Result<SharedLibrary> SharedLibrary::open(const char* soname, std::string install_hint) {
  // RTLD_LOCAL: the library's symbols serve only the pointers taken from it. Never closed:
  // libvirt keeps threads and error state, capstone hands out memory it frees itself.
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Error{std::string("cannot load ") + soname + ": " + (why ? why : "unknown reason"), 0, std::move(install_hint)};
  }
  return SharedLibrary(handle, soname);
}

Result<void*> SharedLibrary::lookup(const char* name) const {
  ::dlerror();
  void* address = ::dlsym(handle_, name);
  if (address == nullptr) {
    const char* why = ::dlerror();
    return Error{soname_ + " has no " + name + (why ? std::string(" (") + why + ")" : std::string()),
                 0, "install the version of " + soname_ + " vperf was built with"};
  }
  return address;
}

}  // namespace vperf
