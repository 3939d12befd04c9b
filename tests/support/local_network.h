#pragma once
// 127.0.0.1 for tests that run a server of their own (sshd, debuginfod): a port nothing listens
// on, and a plain HTTP GET to ask a server whether it is ready.
#include <string>

namespace vperf::test {

// A TCP port of 127.0.0.1 that nothing listens on now (the kernel picks it); 0 on failure.
int spare_port();

// The whole reply (status line, headers, body) to "GET PATH HTTP/1.0" at 127.0.0.1:PORT, empty
// when nothing answers.
std::string http_get(int port, const std::string& path);

}  // namespace vperf::test
