#pragma once
// A client of a unix stream socket (QEMU's chardev sockets: the console, the guest agent), for
// tests that speak to it byte by byte rather than through vperf's JSON clients.
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::test {

inline Result<ScopedFd> connect_unix_socket(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.size() >= sizeof address.sun_path) return Error{text + ": socket path too long"};
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  ScopedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error::from_errno("socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return Error::from_errno("connect " + text);
  return fd;
}

}  // namespace vperf::test
