#include "output/json.h"

namespace vperf::output {

namespace {

void write(std::string& out, const boost::json::value& v, int indent) {
  auto newline = [&](int level) {
    out += '\n';
    out.append(static_cast<size_t>(level) * 2, ' ');
  };
  switch (v.kind()) {
    case boost::json::kind::object: {
      const auto& obj = v.get_object();
      if (obj.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& kv : obj) {
        if (!first) out += ',';
        first = false;
        newline(indent + 1);
        out += boost::json::serialize(boost::json::string(kv.key()));
        out += ": ";
        write(out, kv.value(), indent + 1);
      }
      newline(indent);
      out += '}';
      return;
    }
    case boost::json::kind::array: {
      const auto& arr = v.get_array();
      if (arr.empty()) {
        out += "[]";
        return;
      }
      // Arrays of scalars stay on one line: register lists and name lists read better that way.
      bool scalars = std::all_of(arr.begin(), arr.end(), [](const boost::json::value& e) {
        return !e.is_object() && !e.is_array();
      });
      out += '[';
      for (size_t i = 0; i < arr.size(); ++i) {
        if (i) out += scalars ? ", " : ",";
        if (!scalars) newline(indent + 1);
        write(out, arr[i], indent + 1);
      }
      if (!scalars) newline(indent);
      out += ']';
      return;
    }
    default:
      out += boost::json::serialize(v);
  }
}

}  // namespace

std::string pretty_json(const boost::json::value& value) {
  std::string out;
  write(out, value, 0);
  out += '\n';
  return out;
}

void print_json(std::ostream& out, const boost::json::value& value) { out << pretty_json(value); }

}  // namespace vperf::output
