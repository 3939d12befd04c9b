// libFuzzer target for what vperf makes of the answers of a VM's QMP monitor and of its guest
// agent (qemu-ga runs inside the guest, so its answers are the guest's to choose). The input
// is one JSON answer a line ({"return": ...} or {"error": ...}; a line that is not JSON
// counts as a failed command), handed out in turn, the last one again and again once the
// others are used up, as a peer that keeps answering would:
//  - query-cpus-fast (query_vcpus): a list of vCPUs, each with a valid cpu-index and a host
//    thread id, or an Error;
//  - guest-file-open/read/close (GuestAgent::read_file) with base64 pieces: the file or an
//    Error, and an end even when the agent never says eof.
// The whole input is also decoded as base64.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "guest/guest_agent.h"
#include "guest/vm_monitor.h"

namespace {

using namespace vperf;
using namespace vperf::guest;

class ScriptedAnswers {
 public:
  explicit ScriptedAnswers(std::string_view text) {
    for (std::string_view line : split(text, '\n')) {
      boost::system::error_code ec;
      boost::json::value value = boost::json::parse(line, ec);
      answers_.push_back(!ec && value.is_object() ? std::optional(std::move(value.as_object())) : std::nullopt);
    }
  }
  Result<boost::json::value> next(std::string_view command) {
    if (answers_.empty()) return Error{"scripted peer: no answers"};
    const std::optional<boost::json::object>& answer = answers_[std::min(at_++, answers_.size() - 1)];
    if (!answer) return Error{"scripted peer: no answer to " + std::string(command)};
    return qmp_return(*answer, command);
  }

 private:
  std::vector<std::optional<boost::json::object>> answers_;
  size_t at_ = 0;
};

class ScriptedMonitor : public VmMonitor {
 public:
  explicit ScriptedMonitor(ScriptedAnswers& answers) : answers_(answers) {}
  Result<boost::json::value> qmp(std::string_view command, const boost::json::object&) override {
    return answers_.next(command);
  }

 private:
  ScriptedAnswers& answers_;
};

class ScriptedAgent : public GuestAgent {
 public:
  explicit ScriptedAgent(ScriptedAnswers& answers) : answers_(answers) {}
  Result<boost::json::value> command(std::string_view name, const boost::json::object&) override {
    return answers_.next(name);
  }

 private:
  ScriptedAnswers& answers_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)decode_base64(text);

  ScriptedAnswers monitor_answers(text);
  ScriptedMonitor monitor(monitor_answers);
  if (Result<std::vector<VcpuThread>> vcpus = query_vcpus(monitor))
    for (const VcpuThread& vcpu : *vcpus)
      if (vcpu.index < 0 || vcpu.thread_id <= 0) __builtin_trap();

  ScriptedAnswers agent_answers(text);
  ScriptedAgent agent(agent_answers);
  (void)agent.read_file("/proc/kallsyms");
  return 0;
}
