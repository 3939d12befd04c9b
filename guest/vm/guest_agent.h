#pragma once
// The QEMU guest agent (qemu-ga inside the guest, its virtio-serial port
// org.qemu.guest_agent.0 on the host side): commands as JSON, file contents base64. Reached
// directly through the port's host socket or through libvirt (virDomainQemuAgentCommand).
// vperf uses it to read the guest's /proc/kallsyms, /proc/modules and kernel identity without
// a login: guest-file-open/read/close, which every qemu-ga since 0.15 has.
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"
#include "guest/json_socket.h"

namespace vperf::guest {

class GuestAgent {
 public:
  virtual ~GuestAgent() = default;
  // The command's "return" value; an Error with the agent's description otherwise.
  virtual Result<boost::json::value> command(std::string_view name, const boost::json::object& arguments) = 0;

  // A whole file of the guest (read in 1 MiB pieces), e.g. /proc/kallsyms.
  Result<std::string> read_file(const std::string& path);
};

// The agent through its host-side socket (QEMU -chardev socket,path=...,server=on for the
// virtserialport named org.qemu.guest_agent.0). The port outlives each client: an earlier
// client's unread answers, the rest of one it stopped reading, and a request it sent only in
// part all stay in it. So, as qemu-ga's protocol asks, the agent is synchronized on connecting
// and again after any failed answer (guest-sync-delimited, see sync()).
class QgaSocketAgent : public GuestAgent {
 public:
  // `answer_timeout`: how long each answer may take (a TCG guest reads 4 MB of kallsyms in
  // seconds); one that takes longer is an ETIMEDOUT Error.
  static Result<std::unique_ptr<QgaSocketAgent>> connect(const std::filesystem::path& socket,
                                                         std::chrono::milliseconds answer_timeout = std::chrono::seconds(20));
  Result<boost::json::value> command(std::string_view name, const boost::json::object& arguments) override;

 private:
  QgaSocketAgent(JsonSocket socket, std::chrono::milliseconds answer_timeout) : socket_(std::move(socket)), answer_timeout_(answer_timeout) {}
  Result<void> sync();
  JsonSocket socket_;
  std::chrono::milliseconds answer_timeout_;
  bool in_sync_ = false;  // the next answer read is the one to the next request sent
};

// RFC 4648 base64 (the agent's encoding of file data); an Error for a character outside it.
Result<std::string> decode_base64(std::string_view text);

}  // namespace vperf::guest
