#pragma once
// A shared library opened when a command first needs it (dlopen), not when vperf starts.
//
// Why: the dynamic loader maps and relocates every library in the executable's NEEDED list,
// and their own, before main() runs. libvirt alone brings about 35 (gnutls, libxml2, glib, ...),
// so linking it made `vperf --help` and `vperf stat` pay for loading libraries they never call.
// The few libraries that only one command uses (libvirt for `kvm --domain`, capstone for
// `annotate`) are reached through a table of function pointers filled from here instead; their
// headers still give every pointer its exact type (decltype of the declared function), so a
// mismatch is a compile error, as with a link.
#include <string>

#include "core/error.h"

namespace vperf {

class SharedLibrary {
 public:
  // Opens `soname` ("libvirt.so.0"). A missing library is an Error whose hint is `install_hint`
  // (the package that ships it). The library stays loaded until the process ends: what it
  // returned (strings, handles) may be used as long as vperf runs.
  static Result<SharedLibrary> open(const char* soname, std::string install_hint);

  // Fills `slot` with the function called `name`, taken to have the slot's type: declare the
  // slot as decltype(&::name) so the library's own header fixes it.
  template <typename Fn>
  Result<void> bind(const char* name, Fn*& slot) const {
    Result<void*> address = lookup(name);
    if (!address) return address.error();
    slot = reinterpret_cast<Fn*>(address.value());
    return {};
  }

  const std::string& soname() const { return soname_; }

 private:
  SharedLibrary(void* handle, std::string soname) : handle_(handle), soname_(std::move(soname)) {}
  Result<void*> lookup(const char* name) const;
  void* handle_ = nullptr;
  std::string soname_;
};

// A table of a library's functions (a struct with a static `Result<Api> load()`), loaded by
// the first call and kept, with its error if the library is missing, for the process's life.
template <typename Api>
const Result<Api>& loaded_once() {
  static const Result<Api> api = Api::load();
  return api;
}

}  // namespace vperf

// In a function returning a Result: fills `table.name` with `library`'s function `name`, whose
// member is named and typed after the declared function (decltype(&::name)), or returns the Error.
#define VPERF_BIND_FUNCTION(library, table, name) VPERF_TRY((library).bind(#name, (table).name))
