#pragma once
// C++ symbol names as Linux perf shows them. perf demangles without DMGL_PARAMS unless -v, so
// "_ZN5vperf9workloads8run_spinEmRKNS0_7OptionsE" is shown as "vperf::workloads::run_spin":
// qualified name and template arguments, no parameter list, no return type, no cv-qualifiers
// of the method. Clone suffixes stay: "foo [clone .cold]".
#include <string>
#include <string_view>

namespace vperf::symbols {

// The demangled name without parameters, or `name` unchanged if it is not a mangled C++ name.
std::string demangle(std::string_view name);
// The full demangled name with parameters, as abi::__cxa_demangle gives it (perf -v).
std::string demangle_with_parameters(std::string_view name);
// Drops the parameter list, method qualifiers and return type from a demangled name.
std::string strip_parameters(std::string_view demangled);

}  // namespace vperf::symbols
