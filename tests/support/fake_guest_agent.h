#pragma once
// A guest agent serving a few files of the guest (guest-file-open/read/close, as qemu-ga
// answers them), counting what was opened: the guest side of the symbol fetch in unit tests.
#include <map>
#include <string>
#include <vector>

#include "guest/guest_agent.h"
#include "guest/guest_memory.h"

namespace vperf::test {

inline std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 2]);
    out += alphabet[(group >> 18) & 63];
    out += alphabet[(group >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(group >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[group & 63] : '=';
  }
  return out;
}

class FakeAgent : public guest::GuestAgent {
 public:
  explicit FakeAgent(std::map<std::string, std::string> files) : files_(std::move(files)) {}
  Result<boost::json::value> command(std::string_view name, const boost::json::object& arguments) override {
    if (name == "guest-file-open") {
      std::string path(arguments.at("path").as_string());
      ++opened_[path];
      if (!files_.count(path)) return Error{"failed to open file '" + path + "'"};
      paths_.push_back(path);
      return boost::json::value(static_cast<int64_t>(paths_.size() - 1));
    }
    if (name == "guest-file-read") {
      const std::string& text = files_.at(paths_.at(static_cast<size_t>(arguments.at("handle").as_int64())));
      return boost::json::value(boost::json::object{{"count", text.size()}, {"buf-b64", base64(text)}, {"eof", true}});
    }
    if (name == "guest-file-close") return boost::json::value(boost::json::object{});
    return Error{"unknown command " + std::string(name)};
  }
  int opened(const std::string& path) const { return opened_.count(path) ? opened_.at(path) : 0; }
  std::map<std::string, std::string>& files() { return files_; }

 private:
  std::map<std::string, std::string> files_;
  std::vector<std::string> paths_;
  std::map<std::string, int> opened_;
};

// Guest kernel memory holding `contents` at each address (the bytes of a string), nothing else.
inline guest::DumpMemory guest_memory_holding(const std::map<uint64_t, std::string>& contents) {
  guest::DumpMemory memory;
  for (const auto& [address, text] : contents) memory.add(guest::MemoryDump{address, std::vector<uint8_t>(text.begin(), text.end())});
  return memory;
}

}  // namespace vperf::test
