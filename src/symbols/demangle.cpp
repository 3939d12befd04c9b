#include "symbols/demangle.h"

#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace vperf::symbols {
namespace {

// libiberty's cplus_demangle, perf 6.1's demangler, with its options; `fallback` when `name`
// is no mangled name it knows.
std::string cplus_demangled(std::string_view name, int options, std::string_view fallback) {
  const std::string terminated(name);  // cplus_demangle reads a C string
  std::unique_ptr<char, decltype(&std::free)> shown(cplus_demangle(terminated.c_str(), options), &std::free);
  return shown ? std::string(shown.get()) : std::string(fallback);
}

}  // namespace

std::string demangle(std::string_view name) {
  // perf names a PLT entry after its target, demangled, then "@plt"; the demangler itself
  // drops whatever follows a mangled name (a symbol version too, as perf shows it).
  constexpr std::string_view kPlt = "@plt";
  if (name.ends_with(kPlt)) {
    const std::string_view target = name.substr(0, name.size() - kPlt.size());
    return cplus_demangled(target, DMGL_NO_OPTS, target) + std::string(kPlt);
  }
  return cplus_demangled(name, DMGL_NO_OPTS, name);
}

std::string demangle_with_parameters(std::string_view name) { return cplus_demangled(name, DMGL_PARAMS | DMGL_ANSI, name); }

}  // namespace vperf::symbols
