// core::ChunkedVector: what was appended stays where it was (no copy to grow) and reads back.
#include <gtest/gtest.h>

#include <string>

#include "core/chunked_vector.h"

namespace vperf::core {
namespace {

TEST(ChunkedVector, AppendingNeverMovesWhatIsStored) {
  ChunkedVector<std::string, 4> v;  // chunks of 16
  std::vector<const std::string*> at;
  for (int i = 0; i < 1000; ++i) {
    v.push_back("value " + std::to_string(i));
    at.push_back(&v[static_cast<size_t>(i)]);
  }
  ASSERT_EQ(v.size(), 1000u);
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i], "value " + std::to_string(i));
    EXPECT_EQ(&v[i], at[i]) << "element " << i << " moved";
  }
  v.clear();
  EXPECT_TRUE(v.empty());
  v.push_back("again");
  EXPECT_EQ(v[0], "again");
}

}  // namespace
}  // namespace vperf::core
