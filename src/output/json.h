#pragma once
// JSON output shared by every command's --json: Boost.JSON values, printed indented and stable.
#include <algorithm>
#include <boost/json.hpp>
#include <ostream>
#include <string>

namespace vperf::output {

// Two-space indented JSON with keys in insertion order, ending in a newline.
std::string pretty_json(const boost::json::value& value);
void print_json(std::ostream& out, const boost::json::value& value);

}  // namespace vperf::output
