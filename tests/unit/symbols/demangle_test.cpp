#include "symbols/demangle.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(demangle("_Z3foov.cold"), "foo [clone .cold]");
}

TEST(Demangle, LeavesOtherNamesAlone) {
  EXPECT_EQ(demangle("spin_leaf_hash"), "spin_leaf_hash");
  EXPECT_EQ(demangle("_Zbogus"), "_Zbogus");
  EXPECT_EQ(demangle("main"), "main");
}

TEST(Demangle, FullNamesKeepParameters) {
  EXPECT_EQ(demangle_with_parameters("_ZNK4demo6Widget5twiceEi"), "demo::Widget::twice(int) const");
}

}  // namespace
}  // namespace vperf::symbols
