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

// The demangled name without parameters, or `name` unchanged if it is not a mangled C++ name.
std::string demangle(std::string_view name);
// The full demangled name with parameters, as abi::__cxa_demangle gives it (perf -v).
std::string demangle_with_parameters(std::string_view name);
// Drops the parameter list, method qualifiers, return type and clone suffixes from a demangled
// name.
std::string strip_parameters(std::string_view demangled);

}  // namespace vperf::symbols
