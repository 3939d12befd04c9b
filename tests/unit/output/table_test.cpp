#include "output/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace vperf::output {
namespace {

TEST(TextTable, AlignsColumnsAndTrimsTrailingSpace) {
  TextTable t({{"EVENT", Align::Left}, {"COUNT", Align::Right}, {"NOTE", Align::Left}});
  t.add_row({"cycles", "12", ""});
  t.add_row({"instructions", "3456", "ipc"});
  std::ostringstream out;
  t.render(out, "  ");
  EXPECT_EQ(out.str(),
            "  EVENT         COUNT  NOTE\n"
            "  cycles           12\n"
            "  instructions   3456  ipc\n");
}

TEST(TextTable, OmitsHeaderLineWhenNoHeaders) {
  TextTable t({{"", Align::Left}, {"", Align::Left}});
  t.add_row({"a", "b"});
  std::ostringstream out;
  t.render(out);
  EXPECT_EQ(out.str(), "a  b\n");
}

}  // namespace
}  // namespace vperf::output
