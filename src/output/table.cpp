#include "output/table.h"

#include <algorithm>

namespace vperf::output {

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::render(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> width(columns_.size(), 0);
  bool headers = std::any_of(columns_.begin(), columns_.end(), [](const Column& c) { return !c.header.empty(); });
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (headers) width[i] = columns_[i].header.size();
    for (const auto& row : rows_) width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (size_t i = 0; i < cells.size(); ++i) {
      bool last = i + 1 == cells.size();
      size_t pad = width[i] - cells[i].size();
      if (columns_[i].align == Align::Right) text.append(pad, ' ');
      text += cells[i];
      if (columns_[i].align == Align::Left && !last) text.append(pad, ' ');
      if (!last) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  if (headers) {
    std::vector<std::string> head;
    for (const auto& c : columns_) head.push_back(c.header);
    line(head);
  }
  for (const auto& row : rows_) line(row);
}

}  // namespace vperf::output
