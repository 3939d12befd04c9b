#pragma once
// A small, strict XML 1.0 reader for checking the SVGs vperf writes: it rejects what a
// browser's XML parser rejects (unbalanced or mismatched tags, unknown entities, a raw '<' or
// '&', duplicate attributes, invalid UTF-8, control characters) and gives a tree to query.
// Not a general parser: no DTD internal subsets, no namespaces beyond keeping "a:b" names.
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vperf::report::test {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlElement> children;
  std::string text;  // the character data directly inside, concatenated (CDATA included)

  const std::string& attribute(const std::string& key) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) throw std::runtime_error("<" + name + "> has no attribute " + key);
    return it->second;
  }
  double number(const std::string& key) const { return std::stod(attribute(key)); }
  // The first child element with this name, or nullptr.
  const XmlElement* child(std::string_view child_name) const {
    for (const auto& c : children) {
      if (c.name == child_name) return &c;
    }
    return nullptr;
  }
  // Depth-first search for the element with id="id", or nullptr.
  const XmlElement* find_id(std::string_view id) const {
    auto it = attributes.find("id");
    if (it != attributes.end() && it->second == id) return this;
    for (const auto& c : children) {
      if (const XmlElement* found = c.find_id(id)) return found;
    }
    return nullptr;
  }
};

class XmlReader {
 public:
  // Throws std::runtime_error("offset N: what") if `text` is not well-formed.
  static XmlElement parse(std::string_view text) {
    XmlReader reader(text);
    return reader.document();
  }

 private:
  explicit XmlReader(std::string_view text) : s_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("offset " + std::to_string(pos_) + ": " + what);
  }
  bool at(std::string_view token) const { return s_.substr(pos_, token.size()) == token; }
  void expect(std::string_view token) {
    if (!at(token)) fail("expected \"" + std::string(token) + "\"");
    pos_ += token.size();
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void skip_past(std::string_view end) {
    size_t found = s_.find(end, pos_);
    if (found == std::string_view::npos) fail("unterminated, no \"" + std::string(end) + "\"");
    check_chars(s_.substr(pos_, found - pos_));
    pos_ = found + end.size();
  }
  // Skips comments, processing instructions and whitespace between markup.
  void skip_misc() {
    while (true) {
      skip_space();
      if (at("<!--")) {
        pos_ += 4;
        skip_past("-->");
      } else if (at("<?")) {
        pos_ += 2;
        skip_past("?>");
      } else {
        return;
      }
    }
  }

  static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
           c == '-' || c == '.' || static_cast<unsigned char>(c) >= 0x80;
  }
  std::string name() {
    size_t start = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    if (start == pos_ || (s_[start] >= '0' && s_[start] <= '9') || s_[start] == '-' || s_[start] == '.') {
      fail("expected a name");
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  // Valid UTF-8 with only the characters XML 1.0 allows.
  void check_chars(std::string_view text) const {
    for (size_t i = 0; i < text.size();) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      if (c < 0x80) {
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') fail("control character in text");
        ++i;
        continue;
      }
      size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
      if (len == 0 || c > 0xF4 || i + len > text.size()) fail("invalid UTF-8");
      uint32_t cp = c & (0xFF >> (len + 1));
      for (size_t k = 1; k < len; ++k) {
        unsigned char b = static_cast<unsigned char>(text[i + k]);
        if ((b & 0xC0) != 0x80) fail("invalid UTF-8");
        cp = (cp << 6) | (b & 0x3F);
      }
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) {
        fail("invalid UTF-8 or a character XML forbids");
      }
      i += len;
    }
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Character data up to `stop` (not included), with entities decoded.
  std::string chars(char stop) {
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != stop) {
      char c = s_[pos_];
      if (c == '<') fail("raw '<' in character data");
      if (c != '&') {
        size_t run = pos_;
        while (pos_ < s_.size() && s_[pos_] != stop && s_[pos_] != '&' && s_[pos_] != '<') ++pos_;
        std::string_view piece = s_.substr(run, pos_ - run);
        check_chars(piece);
        if (stop == '<' && piece.find("]]>") != std::string_view::npos) fail("\"]]>\" in character data");
        out += piece;
        continue;
      }
      size_t semi = s_.find(';', pos_);
      if (semi == std::string_view::npos || semi - pos_ > 10) fail("'&' that starts no entity");
      std::string_view entity = s_.substr(pos_ + 1, semi - pos_ - 1);
      if (entity == "lt") out += '<';
      else if (entity == "gt") out += '>';
      else if (entity == "amp") out += '&';
      else if (entity == "quot") out += '"';
      else if (entity == "apos") out += '\'';
      else if (entity.size() > 1 && entity[0] == '#') {
        bool hex = entity[1] == 'x';
        std::string digits(entity.substr(hex ? 2 : 1));
        if (digits.empty()) fail("empty character reference");
        uint32_t cp = static_cast<uint32_t>(std::stoul(digits, nullptr, hex ? 16 : 10));
        if ((cp < 0x20 && cp != 9 && cp != 10 && cp != 13) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF ||
            cp == 0xFFFE || cp == 0xFFFF) {
          fail("character reference to a character XML forbids");
        }
        append_utf8(out, cp);
      } else {
        fail("unknown entity &" + std::string(entity) + ";");
      }
      pos_ = semi + 1;
    }
    return out;
  }

  XmlElement element() {
    expect("<");
    XmlElement e;
    e.name = name();
    while (true) {
      size_t before = pos_;
      skip_space();
      if (at("/>")) {
        pos_ += 2;
        return e;
      }
      if (at(">")) {
        ++pos_;
        break;
      }
      if (before == pos_) fail("expected whitespace before an attribute");
      std::string key = name();
      skip_space();
      expect("=");
      skip_space();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) fail("attribute value not quoted");
      char quote = s_[pos_++];
      std::string value = chars(quote);
      expect(std::string_view(&quote, 1));
      if (!e.attributes.emplace(key, value).second) fail("duplicate attribute " + key);
    }
    while (true) {
      if (pos_ >= s_.size()) fail("unclosed <" + e.name + ">");
      if (at("</")) {
        pos_ += 2;
        std::string end = name();
        if (end != e.name) fail("</" + end + "> closes <" + e.name + ">");
        skip_space();
        expect(">");
        return e;
      }
      if (at("<!--")) {
        pos_ += 4;
        skip_past("-->");
      } else if (at("<![CDATA[")) {
        pos_ += 9;
        size_t end = s_.find("]]>", pos_);
        if (end == std::string_view::npos) fail("unterminated CDATA");
        check_chars(s_.substr(pos_, end - pos_));
        e.text += s_.substr(pos_, end - pos_);
        pos_ = end + 3;
      } else if (at("<?")) {
        pos_ += 2;
        skip_past("?>");
      } else if (at("<")) {
        e.children.push_back(element());
      } else {
        e.text += chars('<');
      }
    }
  }

  XmlElement document() {
    if (at("<?xml")) {
      pos_ += 5;
      skip_past("?>");
    }
    skip_misc();
    if (at("<!DOCTYPE")) {
      pos_ += 9;
      size_t end = s_.find('>', pos_);
      if (end == std::string_view::npos || s_.substr(pos_, end - pos_).find('[') != std::string_view::npos) {
        fail("unsupported DOCTYPE");
      }
      pos_ = end + 1;
    }
    skip_misc();
    XmlElement root = element();
    skip_misc();
    if (pos_ != s_.size()) fail("content after the root element");
    return root;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// Every element named `name` under `root`, depth first.
inline void for_each_element(const XmlElement& root, std::string_view name,
                             const std::function<void(const XmlElement&)>& visit) {
  if (root.name == name) visit(root);
  for (const auto& c : root.children) for_each_element(c, name, visit);
}

}  // namespace vperf::report::test
