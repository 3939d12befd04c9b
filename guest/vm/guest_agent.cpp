#include "guest/guest_agent.h"

#include <unistd.h>

#include <array>
#include <chrono>

#include "guest/vm_monitor.h"

namespace vperf::guest {

namespace {
constexpr int64_t kReadPiece = 1 << 20;
// A guest's kallsyms is a few MiB; the agent is the guest's to program, so an agent that
// never says eof must not keep vperf reading (and growing the file) forever.
constexpr int kMaxReadPieces = 256;
}  // namespace

Result<std::string> decode_base64(std::string_view text) {
  static const std::array<int8_t, 256> values = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return v;
  }();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r') continue;
    int8_t v = values[static_cast<unsigned char>(c)];
    if (v < 0) return Error{"not base64: a '" + std::string(1, c) + "' in the agent's data"};
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out.push_back(static_cast<char>((bits >> 16) & 0xff));
      out.push_back(static_cast<char>((bits >> 8) & 0xff));
      out.push_back(static_cast<char>(bits & 0xff));
      bits = 0;
      count = 0;
    }
  }
  if (count == 3) {
    out.push_back(static_cast<char>((bits >> 10) & 0xff));
    out.push_back(static_cast<char>((bits >> 2) & 0xff));
  } else if (count == 2) {
    out.push_back(static_cast<char>((bits >> 4) & 0xff));
  } else if (count == 1) {
    return Error{"truncated base64 in the agent's data"};
  }
  return out;
}

Result<std::string> GuestAgent::read_file(const std::string& path) {
  Result<boost::json::value> handle = command("guest-file-open", {{"path", path}, {"mode", "r"}});
  if (!handle) return Error{"guest agent: open " + path + ": " + handle.error().message};
  if (!handle->is_int64()) return Error{"guest agent: guest-file-open " + path + " gave no handle"};
  const int64_t h = handle->as_int64();
  std::string contents;
  Result<std::string> outcome = std::string();
  for (int pieces = 0;; ++pieces) {
    if (pieces == kMaxReadPieces) {
      outcome = Error{"guest agent: read " + path + ": no end of file after " + std::to_string(kMaxReadPieces) +
                      " reads of up to " + std::to_string(kReadPiece >> 20) + " MiB"};
      break;
    }
    Result<boost::json::value> piece = command("guest-file-read", {{"handle", h}, {"count", kReadPiece}});
    if (!piece || !piece->is_object()) {
      outcome = Error{"guest agent: read " + path + ": " + (piece ? std::string("no data") : piece.error().message)};
      break;
    }
    const boost::json::object& o = piece->as_object();
    if (const boost::json::value* data = o.if_contains("buf-b64"); data && data->is_string()) {
      Result<std::string> bytes = decode_base64(data->as_string());
      if (!bytes) {
        outcome = bytes.error();
        break;
      }
      contents += *bytes;
    }
    const boost::json::value* eof = o.if_contains("eof");
    if (eof && eof->is_bool() && eof->as_bool()) break;
  }
  (void)command("guest-file-close", {{"handle", h}});
  if (!outcome) return outcome.error();
  return contents;
}

Result<std::unique_ptr<QgaSocketAgent>> QgaSocketAgent::connect(const std::filesystem::path& socket,
                                                                std::chrono::milliseconds answer_timeout) {
  Result<JsonSocket> s = JsonSocket::connect(socket);
  if (!s) return s.error();
  std::unique_ptr<QgaSocketAgent> agent(new QgaSocketAgent(std::move(s).value(), answer_timeout));
  if (Result<void> synced = agent->sync(); !synced)
    return Error{"guest agent at " + socket.string() + " does not answer: " + synced.error().message, synced.error().errno_value};
  return agent;
}

// qemu-ga's schema (guest-sync-delimited): the request is preceded by a 0xff byte, which
// qemu-ga's JSON lexer takes as an error that drops whatever partial request an earlier client
// left in its parser (qemu-ga answers that error; the answer is skipped with the rest). The
// answer is the only one qemu-ga starts with a 0xff; everything before it is skipped unread,
// and so is a delimited answer to an earlier client's sync (another id).
Result<void> QgaSocketAgent::sync() {
  in_sync_ = false;
  const int64_t id = static_cast<int64_t>(::getpid()) * 1000003 + static_cast<int64_t>(std::chrono::steady_clock::now().time_since_epoch().count() % 1000003);
  boost::json::object request{{"execute", "guest-sync-delimited"}, {"arguments", {{"id", id}}}};
  VPERF_TRY(socket_.send_bytes("\xff" + boost::json::serialize(request) + "\n"));
  const auto deadline = std::chrono::steady_clock::now() + answer_timeout_;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return Error{"no answer to guest-sync-delimited within " + std::to_string(answer_timeout_.count()) + " ms", ETIMEDOUT};
    VPERF_TRY(socket_.discard_through('\xff', left));
    Result<boost::json::object> answer = socket_.receive(left);
    if (!answer) return answer.error();
    const boost::json::value* value = answer->if_contains("return");
    if (value && value->is_int64() && value->as_int64() == id) {
      in_sync_ = true;
      return {};
    }
  }
}

Result<boost::json::value> QgaSocketAgent::command(std::string_view name, const boost::json::object& arguments) {
  // After a timeout the late answer is still on its way: the next one read would be taken for
  // the next request's.
  if (!in_sync_) VPERF_TRY(sync());
  boost::json::object message{{"execute", name}};
  if (!arguments.empty()) message["arguments"] = arguments;
  VPERF_TRY(socket_.send(message));
  Result<boost::json::object> answer = socket_.receive(answer_timeout_);
  if (!answer) {
    in_sync_ = false;
    return answer.error();
  }
  return qmp_return(*answer, name);
}

}  // namespace vperf::guest
