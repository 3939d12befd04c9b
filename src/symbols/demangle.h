#pragma once
// C++ symbol names as Linux perf 6.1 shows them. perf demangles with libiberty's
// cplus_demangle and no options (DMGL_PARAMS only with -v), so
// "_ZN5vperf9workloads8run_spinEmRKNS0_7OptionsE" is shown as "vperf::workloads::run_spin":
// qualified name and template arguments, no parameter list, no return type, no cv-qualifiers
// of the method, and no clone suffix (without DMGL_PARAMS the demangler never reads past the
// name: "foo.isra.0" and "foo.cold" are both "foo"). Special names keep their inner encoding's
// parameters: "virtual thunk to std::basic_ostream<...>::~basic_ostream()".
#include <string>
#include <string_view>

namespace vperf::symbols {

// vperf demangles with the same function and options (libiberty, Debian's libiberty-dev), so the
// names are perf's by construction, and in one pass: no parameter list is formatted to be cut.

// The demangled name without parameters, or `name` unchanged if it is not a mangled C++ name;
// a PLT entry's name ("_ZdlPv@plt") is its target's, then "@plt" ("operator delete@plt").
std::string demangle(std::string_view name);
// The full demangled name with parameters, as perf -v shows it (DMGL_PARAMS | DMGL_ANSI).
std::string demangle_with_parameters(std::string_view name);

}  // namespace vperf::symbols
