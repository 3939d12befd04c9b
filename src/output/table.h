#pragma once
// Plain-text tables with aligned columns, as perf's list and stat print them.
#include <ostream>
#include <string>
#include <vector>

namespace vperf::output {

enum class Align { Left, Right };

class TextTable {
 public:
  struct Column {
    std::string header;
    Align align = Align::Left;
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void add_row(std::vector<std::string> cells);
  // Headers are printed unless the table has none (all headers empty).
  void render(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace vperf::output
