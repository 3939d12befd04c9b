#include "symbols/demangle.h"

#include <gtest/gtest.h>

#include <utility>

namespace vperf::symbols {
namespace {

TEST(Demangle, ShowsQualifiedNamesWithoutParametersAsPerfDoes) {
  EXPECT_EQ(demangle("_ZN5vperf9workloads8run_spinEmRKNS0_7OptionsE"), "vperf::workloads::run_spin");
  EXPECT_EQ(demangle("_ZNK4demo6Widget5twiceEi"), "demo::Widget::twice");
  EXPECT_EQ(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"), "std::vector<int, std::allocator<int> >::push_back");
  EXPECT_EQ(demangle("_Z3maxIiET_S0_S0_"), "max<int>");  // no return type
  EXPECT_EQ(demangle("_ZN12_GLOBAL__N_14helpEv"), "(anonymous namespace)::help");
  EXPECT_EQ(demangle("_ZN1AlsEi"), "A::operator<<");
  EXPECT_EQ(demangle("_ZN1AclEv"), "A::operator()");
  EXPECT_EQ(demangle("_Znwm"), "operator new");
}

// perf 6.1 demangles with libiberty's cplus_demangle without DMGL_PARAMS, which never reads past
// the name: clone suffixes are not shown. Special names print their inner encoding whole; a
// local entity keeps its function's parameters and qualifiers. (Expected texts: binutils'
// c++filt -p, the same demangler with the same options.)
TEST(Demangle, ShowsWhatPerfsDemanglerShowsWithoutParameters) {
  const std::pair<const char*, const char*> cases[] = {
      {"_Z3foov.cold", "foo"},
      {"_ZN3CLI3App13remove_optionEPNS_6OptionE.isra.0", "CLI::App::remove_option"},
      {"_Z3barv.constprop.0.isra.0", "bar"},
      {"_Z3bazi.part.0", "baz"},
      {"_ZTv0_n24_NSoD1Ev", "virtual thunk to std::basic_ostream<char, std::char_traits<char> >::~basic_ostream()"},
      {"_ZZNK1C1fEvENKUlvE_clEv", "C::f() const::{lambda()#1}::operator()"},
      {"_ZZ4mainE1x", "main::x"},
      // Operators followed by template arguments, and return types with spaces.
      {"_ZStplIcSt11char_traitsIcESaIcEENSt7__cxx1112basic_stringIT_T0_T1_EEPKS5_RKS8_",
       "std::operator+<char, std::char_traits<char>, std::allocator<char> >"},
      {"_ZltIiEbRK1AIT_ES4_", "operator< <int>"},
      {"_ZN1C1gIiEEDav", "C::g<int>"},
  };
  for (const auto& [mangled, shown] : cases) EXPECT_EQ(demangle(mangled), shown) << mangled;
}

TEST(Demangle, LeavesOtherNamesAlone) {
  EXPECT_EQ(demangle("spin_leaf_hash"), "spin_leaf_hash");
  EXPECT_EQ(demangle("_Zbogus"), "_Zbogus");
  EXPECT_EQ(demangle("main"), "main");
}

TEST(Demangle, FullNamesKeepParameters) {
  EXPECT_EQ(demangle_with_parameters("_ZNK4demo6Widget5twiceEi"), "demo::Widget::twice(int) const");
  EXPECT_EQ(demangle_with_parameters("main"), "main");
}

}  // namespace
}  // namespace vperf::symbols
