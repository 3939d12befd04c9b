#include "guest/json_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vperf::guest {

namespace {
// The longest answer line taken: a guest agent's 1-MiB file piece is 1.4 MB of base64. The
// agent's side of the socket is the guest's to write, so a line that never ends must not grow
// vperf's buffer until the deadline.
constexpr size_t kMaxMessageBytes = 16 << 20;
}  // namespace

Result<JsonSocket> JsonSocket::connect(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.size() >= sizeof address.sun_path) return Error{path.string() + ": socket path too long"};
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  JsonSocket s;
  s.path_ = path;
  s.fd_ = ScopedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.fd_.valid()) return Error::from_errno("socket");
  if (::connect(s.fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return Error::from_errno("connect " + path.string());
  return s;
}

Result<void> JsonSocket::send(const boost::json::value& message) { return send_bytes(boost::json::serialize(message) + "\n"); }

Result<void> JsonSocket::send_bytes(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd_.get(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::from_errno("write to " + path_.string());
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<void> JsonSocket::read_more(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Error{path_.string() + ": no answer within " + std::to_string(timeout.count()) + " ms", ETIMEDOUT};
    pollfd p{fd_.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Error::from_errno("poll " + path_.string());
    if (ready == 0) continue;
    char chunk[65536];
    ssize_t n = ::read(fd_.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::from_errno("read " + path_.string());
    if (n == 0) return Error{path_.string() + ": closed by QEMU", ECONNRESET};
    buffer_.append(chunk, static_cast<size_t>(n));
    // The lines before were taken by the caller, so only this chunk can end the message.
    if (buffer_.size() > kMaxMessageBytes && std::memchr(chunk, '\n', static_cast<size_t>(n)) == nullptr)
      return Error{path_.string() + ": a message longer than " + std::to_string(kMaxMessageBytes >> 20) + " MiB",
                   EMSGSIZE};
    return {};
  }
}

Result<boost::json::object> JsonSocket::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (size_t newline; (newline = buffer_.find('\n')) != std::string::npos;) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      size_t start = line.find('{');
      if (start == std::string::npos) continue;  // a blank line or a sync marker
      boost::system::error_code ec;
      boost::json::value value = boost::json::parse(std::string_view(line).substr(start), ec);
      if (ec || !value.is_object()) return Error{path_.string() + ": not a JSON object: " + line.substr(0, 120)};
      return std::move(value.as_object());
    }
    VPERF_TRY(read_more(deadline, timeout));
  }
}

Result<void> JsonSocket::discard_through(char delimiter, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (size_t at = buffer_.find(delimiter); at != std::string::npos) {
      buffer_.erase(0, at + 1);
      return {};
    }
    // Nothing before the delimiter is wanted: the buffer never grows past one read.
    buffer_.clear();
    VPERF_TRY(read_more(deadline, timeout));
  }
}

}  // namespace vperf::guest
