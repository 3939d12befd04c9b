#pragma once
// One JSON message per line over a unix stream socket: the wire format of QEMU's QMP monitor
// (-qmp unix:PATH,server=on) and of its guest agent's host side (a virtio-serial chardev
// socket). Reads block up to a deadline; a message split across reads is reassembled; bytes
// that are not JSON (a guest agent's 0xff sync marker) are skipped up to the next line.
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::guest {

class JsonSocket {
 public:
  static Result<JsonSocket> connect(const std::filesystem::path& path);

  Result<void> send(const boost::json::value& message);
  // Bytes as they are, e.g. the 0xff that resets a guest agent's JSON parser.
  Result<void> send_bytes(std::string_view bytes);
  // The next whole JSON object, or an Error (ETIMEDOUT, the peer closed, unparsable text).
  Result<boost::json::object> receive(std::chrono::milliseconds timeout);
  // Drops what was received up to and including the next `delimiter` byte, reading as needed:
  // a guest agent's answer to guest-sync-delimited starts with 0xff, and whatever came before
  // it (stale answers, the tail of one an earlier client left half read) is not JSON to parse.
  Result<void> discard_through(char delimiter, std::chrono::milliseconds timeout);
  const std::filesystem::path& path() const { return path_; }

 private:
  JsonSocket() = default;
  // Appends what the peer sends next to buffer_, waiting up to `deadline`.
  Result<void> read_more(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout);
  ScopedFd fd_;
  std::filesystem::path path_;
  std::string buffer_;
};

}  // namespace vperf::guest
