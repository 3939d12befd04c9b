// QMP and guest-agent clients against a scripted peer on a real unix socket: what QEMU and
// qemu-ga send (greeting, events between answers, 0xff sync markers, stale replies, base64
// file data in pieces) and what the clients must make of it.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/scoped_fd.h"
#include "guest/guest_agent.h"
#include "guest/vm_monitor.h"
#include "support/fake_event_fs.h"

namespace vperf::guest {
namespace {

// Listens on `path`; for the one client, reads a line per expected request and writes the
// scripted reply text for it (the first entry, with an empty request, is sent on connect).
class ScriptedPeer {
 public:
  struct Step {
    std::string expect_contains;  // in the client's request line; "" for the greeting
    std::string reply;            // written as is (include the newlines); "ID" becomes the
                                  // request's "id" argument (guest-sync-delimited)
  };
  ScriptedPeer(const std::string& path, std::vector<Step> steps) {
    listener_ = ScopedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listener_.get(), 1), 0);
    thread_ = std::thread([this, steps = std::move(steps)] {
      ScopedFd client(::accept(listener_.get(), nullptr, nullptr));
      std::string pending;
      for (const Step& step : steps) {
        if (!step.expect_contains.empty()) {
          std::string line;
          while (line.empty()) {
            size_t nl = pending.find('\n');
            if (nl != std::string::npos) {
              line = pending.substr(0, nl);
              pending.erase(0, nl + 1);
              break;
            }
            char buf[4096];
            ssize_t n = ::read(client.get(), buf, sizeof buf);
            if (n <= 0) return;
            pending.append(buf, static_cast<size_t>(n));
          }
          requests.push_back(line);
          if (line.find(step.expect_contains) == std::string::npos) mismatches.push_back(line);
        }
        std::string reply = step.reply;
        if (size_t id_at = reply.find("ID"); id_at != std::string::npos && !requests.empty()) {
          const std::string& request = requests.back();
          size_t value = request.find("\"id\":");
          std::string id = value == std::string::npos ? "0" : request.substr(value + 5, request.find('}', value) - value - 5);
          reply.replace(id_at, 2, id);
        }
        (void)!::write(client.get(), reply.data(), reply.size());
      }
    });
  }
  ~ScriptedPeer() { thread_.join(); }
  std::vector<std::string> requests, mismatches;

 private:
  ScopedFd listener_;
  std::thread thread_;
};

TEST(MonitorProtocols, QmpGreetingCapabilitiesEventsAndErrors) {
  test::TempTree tree;
  const std::string path = (tree.root() / "qmp.sock").string();
  {
    ScriptedPeer peer(path, {
        {"", "{\"QMP\": {\"version\": {}, \"capabilities\": [\"oob\"]}}\r\n"},
        {"qmp_capabilities", "{\"return\": {}}\r\n"},
        // An event arrives before the answer; it is not the answer.
        {"query-cpus-fast", "{\"event\": \"RTC_CHANGE\", \"data\": {}}\r\n"
                            "{\"return\": [{\"thread-id\": 16053, \"cpu-index\": 0}, {\"thread-id\": 16054, \"cpu-index\": 1}]}\r\n"},
        {"\"command-line\":\"info registers -a\"", "{\"return\": \"CPU#0\\r\\nRIP=ffffffff81000000 RFL=00000246 CPL=0 HLT=0\\r\\n\"}\r\n"},
        {"no-such-command", "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command no-such-command has not been found\"}}\r\n"},
    });
    Result<std::unique_ptr<QmpSocketMonitor>> monitor = QmpSocketMonitor::connect(path);
    ASSERT_TRUE(monitor.ok()) << monitor.error().describe();
    Result<std::vector<VcpuThread>> vcpus = query_vcpus(**monitor);
    ASSERT_TRUE(vcpus.ok()) << vcpus.error().describe();
    EXPECT_EQ(*vcpus, (std::vector<VcpuThread>{{0, 16053}, {1, 16054}}));
    Result<std::string> text = (*monitor)->hmp("info registers -a");
    ASSERT_TRUE(text.ok()) << text.error().describe();
    EXPECT_EQ(text->substr(0, 6), "CPU#0\r");
    Result<boost::json::value> error = (*monitor)->qmp("no-such-command", {});
    ASSERT_FALSE(error.ok());
    EXPECT_NE(error.error().message.find("has not been found"), std::string::npos) << error.error().message;
    monitor->reset();
    EXPECT_TRUE(peer.mismatches.empty()) << peer.mismatches.front();
  }
}

TEST(MonitorProtocols, NotAQmpSocket) {
  test::TempTree tree;
  const std::string path = (tree.root() / "other.sock").string();
  ScriptedPeer peer(path, {{"", "{\"hello\": 1}\n"}});
  Result<std::unique_ptr<QmpSocketMonitor>> monitor = QmpSocketMonitor::connect(path);
  ASSERT_FALSE(monitor.ok());
  EXPECT_NE(monitor.error().message.find("not a QMP monitor"), std::string::npos) << monitor.error().message;
}

TEST(MonitorProtocols, AnAnswerThatNeverEndsIsRefusedOnceTooLong) {
  // What the guest writes to the agent's socket is the guest's to choose: a line without an
  // end must not be buffered until the deadline (the reader used to hold all of it).
  test::TempTree tree;
  const std::string path = (tree.root() / "endless.sock").string();
  ScriptedPeer peer(path, {{"", std::string((16 << 20) + 1, 'x')}});
  Result<std::unique_ptr<QmpSocketMonitor>> monitor = QmpSocketMonitor::connect(path);
  ASSERT_FALSE(monitor.ok());
  EXPECT_NE(monitor.error().message.find("a message longer than 16 MiB"), std::string::npos) << monitor.error().message;
}

TEST(MonitorProtocols, AgentSyncSkipsStaleRepliesAndReadsAFileInPieces) {
  test::TempTree tree;
  const std::string path = (tree.root() / "qga.sock").string();
  {
    // "abcdefgh\n" in two pieces: "YWJjZGVm" (abcdef) and "Z2gK" (gh\n).
    ScriptedPeer peer(path, {
        // A reply left over from an earlier client, then the 0xff marker and our sync id.
        {"guest-sync-delimited", "{\"return\": 7}\n\xff{\"return\": ID}\n"},
        {"guest-file-open", "{\"return\": 1000}\n"},
        {"\"handle\":1000", "{\"return\": {\"count\": 6, \"buf-b64\": \"YWJjZGVm\", \"eof\": false}}\n"},
        {"guest-file-read", "{\"return\": {\"count\": 3, \"buf-b64\": \"Z2gK\", \"eof\": true}}\n"},
        {"guest-file-close", "{\"return\": {}}\n"},
        {"guest-file-open", "{\"error\": {\"class\": \"GenericError\", \"desc\": \"failed to open file '/nope' (mode: 'r')\"}}\n"},
    });
    Result<std::unique_ptr<QgaSocketAgent>> agent = QgaSocketAgent::connect(path);
    ASSERT_TRUE(agent.ok()) << agent.error().describe();
    Result<std::string> file = (*agent)->read_file("/proc/modules");
    ASSERT_TRUE(file.ok()) << file.error().describe();
    EXPECT_EQ(*file, "abcdefgh\n");
    Result<std::string> missing = (*agent)->read_file("/nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("failed to open file '/nope'"), std::string::npos) << missing.error().message;
    agent->reset();
    EXPECT_TRUE(peer.mismatches.empty()) << peer.mismatches.front();
  }
}

// qemu-ga's schema: "clients should also precede this *request* with a 0xFF byte to make sure
// the guest agent flushes any partially read JSON data from a previous client connection", and
// everything up to the 0xff of the sync's answer is to be ignored, parsable or not. Here the
// earlier client stopped reading in the middle of a guest-exec-status answer: its rest, which
// is no JSON object of its own, comes first.
TEST(MonitorProtocols, AgentSyncFlushesTheAgentsParserAndSkipsTheRestOfAHalfReadAnswer) {
  test::TempTree tree;
  const std::string path = (tree.root() / "qga.sock").string();
  ScriptedPeer peer(path, {
      {"\xff{\"execute\":\"guest-sync-delimited\"",
       "us\": {\"exitcode\": 0, \"out-data\": \"\", \"exited\": true}}\n"
       "{\"error\": {\"class\": \"GenericError\", \"desc\": \"JSON parse error, stray '\xff'\"}}\n"
       "\xff{\"return\": ID}\n"},
      {"guest-ping", "{\"return\": {}}\n"},
  });
  Result<std::unique_ptr<QgaSocketAgent>> agent = QgaSocketAgent::connect(path);
  ASSERT_TRUE(agent.ok()) << agent.error().describe();
  Result<boost::json::value> ping = (*agent)->command("guest-ping", {});
  EXPECT_TRUE(ping.ok()) << ping.error().describe();
  agent->reset();
  EXPECT_TRUE(peer.mismatches.empty()) << peer.mismatches.front();
}

// "It must be issued upon initial connection, and after any client-side timeouts": the answer
// that came too late is still on its way, and without a sync the next command would take it
// for its own (here guest-file-close would have been answered with the file's data). The
// scripted agent answers the read only once the client has sent its next line.
TEST(MonitorProtocols, AgentSyncsAgainAfterAnAnswerCameTooLate) {
  test::TempTree tree;
  const std::string path = (tree.root() / "qga.sock").string();
  ScriptedPeer peer(path, {
      {"guest-sync-delimited", "\xff{\"return\": ID}\n"},
      {"guest-file-read", ""},
      {"\xff{\"execute\":\"guest-sync-delimited\"",
       "{\"return\": {\"count\": 3, \"buf-b64\": \"YWJj\", \"eof\": true}}\n\xff{\"return\": ID}\n"},
      {"guest-file-close", "{\"return\": {}}\n"},
  });
  Result<std::unique_ptr<QgaSocketAgent>> agent = QgaSocketAgent::connect(path, std::chrono::milliseconds(200));
  ASSERT_TRUE(agent.ok()) << agent.error().describe();
  Result<boost::json::value> late = (*agent)->command("guest-file-read", {{"handle", 1000}});
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().errno_value, ETIMEDOUT) << late.error().describe();
  Result<boost::json::value> closed = (*agent)->command("guest-file-close", {{"handle", 1000}});
  ASSERT_TRUE(closed.ok()) << closed.error().describe();
  EXPECT_TRUE(closed->is_object() && closed->as_object().empty()) << boost::json::serialize(*closed);
  agent->reset();
  EXPECT_TRUE(peer.mismatches.empty()) << peer.mismatches.front();
}

// A monitor or agent that answers each command from a script, without a socket.
class ScriptedJson {
 public:
  explicit ScriptedJson(std::function<std::string(std::string_view)> answer) : answer_(std::move(answer)) {}
  Result<boost::json::value> answer(std::string_view command) {
    ++calls;
    return qmp_return(boost::json::parse(answer_(command)).as_object(), command);
  }
  int calls = 0;

 private:
  std::function<std::string(std::string_view)> answer_;
};

class ScriptedMonitor : public VmMonitor {
 public:
  explicit ScriptedMonitor(std::string answer) : script_([answer](std::string_view) { return answer; }) {}
  Result<boost::json::value> qmp(std::string_view command, const boost::json::object&) override {
    return script_.answer(command);
  }

 private:
  ScriptedJson script_;
};

TEST(MonitorProtocols, QueryVcpusRefusesThreadIdsThatNameNoVcpuThread) {
  // perf_event_open would take thread-id 0 as vperf itself and -1 as every task.
  for (const char* cpu : {R"({"thread-id": 0, "cpu-index": 0})", R"({"thread-id": -1, "cpu-index": 0})",
                          R"({"thread-id": 4294967297, "cpu-index": 0})", R"({"thread-id": 16053, "cpu-index": -2})"}) {
    ScriptedMonitor monitor(std::string(R"({"return": [{"thread-id": 16052, "cpu-index": 1}, )") + cpu + "]}");
    Result<std::vector<VcpuThread>> vcpus = query_vcpus(monitor);
    ASSERT_FALSE(vcpus.ok()) << cpu;
    EXPECT_NE(vcpus.error().message.find("expected a CPU number and a host thread id"), std::string::npos)
        << vcpus.error().message;
  }
}

TEST(MonitorProtocols, AgentReadEndsWhenTheAgentNeverSaysEof) {
  // The agent runs in the guest: one that answers every read with data and never eof must
  // not keep vperf reading forever. The script gives up after 10,000 reads, far past the bound.
  class EndlessAgent : public GuestAgent {
   public:
    Result<boost::json::value> command(std::string_view name, const boost::json::object&) override {
      return script.answer(name);
    }
    ScriptedJson script{[this](std::string_view name) -> std::string {
      if (name == "guest-file-open") return R"({"return": 1000})";
      if (name == "guest-file-close") return R"({"return": {}})";
      if (script.calls > 10000) return R"({"error": {"desc": "the script ran out"}})";
      return R"({"return": {"count": 3, "buf-b64": "YWJj", "eof": false}})";
    }};
  } agent;
  Result<std::string> file = agent.read_file("/proc/kallsyms");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.error().message.find("no end of file after 256 reads"), std::string::npos) << file.error().message;
}

TEST(MonitorProtocols, Base64) {
  EXPECT_EQ(decode_base64("YWJjZGVm").value(), "abcdef");
  EXPECT_EQ(decode_base64("Z2gK").value(), "gh\n");
  EXPECT_EQ(decode_base64("YQ==").value(), "a");
  EXPECT_EQ(decode_base64("YWI=").value(), "ab");
  EXPECT_EQ(decode_base64("").value(), "");
  EXPECT_FALSE(decode_base64("YW*j").ok());
  EXPECT_FALSE(decode_base64("Y").ok());
}

}  // namespace
}  // namespace vperf::guest
