#include "output/json.h"

#include <gtest/gtest.h>

namespace vperf::output {
namespace {

TEST(PrettyJson, IndentsObjectsAndKeepsScalarArraysOnOneLine) {
  boost::json::value v = {{"cpu", {{"vendor", "GenuineIntel"}, {"family", 6}}},
                          {"unavailable_events", boost::json::array{"slots", "lbr"}},
                          {"hypervisor", nullptr},
                          {"empty", boost::json::object{}}};
  EXPECT_EQ(pretty_json(v),
            "{\n"
            "  \"cpu\": {\n"
            "    \"vendor\": \"GenuineIntel\",\n"
            "    \"family\": 6\n"
            "  },\n"
            "  \"unavailable_events\": [\"slots\", \"lbr\"],\n"
            "  \"hypervisor\": null,\n"
            "  \"empty\": {}\n"
            "}\n");
  // What we print must parse back to the same value.
  EXPECT_EQ(boost::json::parse(pretty_json(v)), v);
}

TEST(PrettyJson, EscapesKeysAndStrings) {
  boost::json::value v = {{"a\"b", "line\nbreak"}};
  EXPECT_EQ(boost::json::parse(pretty_json(v)), v);
}

}  // namespace
}  // namespace vperf::output
