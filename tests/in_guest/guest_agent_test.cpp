// vperf's guest agent client (guest/guest_agent.h) against the real qemu-ga 7.2 of the test
// guest, after what an earlier client can leave in the agent's virtio-serial port.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string_view>

#include "in_guest/shared_guest.h"
#include "support/capability.h"
#include "support/guest_rig.h"
#include "support/unix_socket.h"

namespace vperf::test {
namespace {

// A client that sent part of a request and went away: qemu-ga's JSON parser keeps the object it
// had begun, and every request sent after it without a 0xff first only nests inside it. A plain
// guest-sync-delimited is then never answered, by any later client (the agent itself is idle
// and well); the 0xff vperf sends first ends the stale object with one parse error.
TEST(GuestAgent, AnswersAfterAnEarlierClientLeftARequestCut) {
  VPERF_REQUIRE(!find_program("qemu-system-x86_64").empty(), "qemu-system-x86 for the test guest");
  ASSERT_TRUE(SharedGuest::ready()) << SharedGuest::boot_error();
  {
    Result<ScopedFd> earlier = connect_unix_socket(SharedGuest::guest()->qga());
    ASSERT_TRUE(earlier.ok()) << earlier.error().describe();
    const std::string_view cut = R"({"execute":"guest-exec-status","arguments":{"pid":12)";
    ASSERT_EQ(::send(earlier->get(), cut.data(), cut.size(), MSG_NOSIGNAL), static_cast<ssize_t>(cut.size()));
    // Half-closed, QEMU reads the bytes into the guest's port and then the end of the stream,
    // and only then closes its side: when it has, the cut request is in the guest.
    ASSERT_EQ(::shutdown(earlier->get(), SHUT_WR), 0);
    pollfd closed{earlier->get(), POLLIN, 0};
    ASSERT_EQ(::poll(&closed, 1, 60000), 1) << "QEMU kept the agent's socket open for 60 s after the client's end of stream";
    char byte;
    ASSERT_EQ(::read(earlier->get(), &byte, 1), 0) << "the agent answered a request it cannot have had whole";
  }
  EXPECT_EQ(SharedGuest::run("echo answered").out, "answered\n");
}

}  // namespace
}  // namespace vperf::test
