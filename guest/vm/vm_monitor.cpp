#include "guest/vm_monitor.h"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <string>

namespace vperf::guest {

namespace {
constexpr std::chrono::seconds kAnswerTimeout{10};
}  // namespace

Result<boost::json::value> qmp_return(const boost::json::object& answer, std::string_view command) {
  if (const boost::json::value* value = answer.if_contains("return")) return *value;
  if (const boost::json::value* error = answer.if_contains("error")) {
    std::string description = "QMP " + std::string(command) + " failed";
    if (error->is_object())
      if (const boost::json::value* desc = error->as_object().if_contains("desc"); desc && desc->is_string())
        description += ": " + std::string(desc->as_string());
    return Error{description};
  }
  return Error{"QMP " + std::string(command) + ": an answer without return or error"};
}

Result<std::string> VmMonitor::hmp(std::string_view command_line, std::optional<int> cpu_index) {
  boost::json::object arguments{{"command-line", command_line}};
  if (cpu_index) arguments["cpu-index"] = *cpu_index;
  Result<boost::json::value> text = qmp("human-monitor-command", arguments);
  if (!text) return text.error();
  if (!text->is_string()) return Error{"HMP " + std::string(command_line) + ": the answer is not text"};
  return std::string(text->as_string());
}

Result<std::vector<VcpuThread>> query_vcpus(VmMonitor& monitor) {
  Result<boost::json::value> answer = monitor.qmp("query-cpus-fast", {});
  if (!answer) return answer.error();
  if (!answer->is_array()) return Error{"query-cpus-fast: not a list"};
  std::vector<VcpuThread> out;
  for (const boost::json::value& cpu : answer->as_array()) {
    if (!cpu.is_object()) continue;
    const boost::json::object& o = cpu.as_object();
    const boost::json::value* index = o.if_contains("cpu-index");
    const boost::json::value* thread = o.if_contains("thread-id");
    if (!index || !thread || !index->is_int64() || !thread->is_int64()) return Error{"query-cpus-fast: a vCPU without cpu-index or thread-id"};
    // A thread id of 0 or below would name vperf itself or every task to perf_event_open.
    if (index->as_int64() < 0 || index->as_int64() > INT32_MAX || thread->as_int64() <= 0 || thread->as_int64() > INT32_MAX)
      return Error{"query-cpus-fast: a vCPU with cpu-index " + std::to_string(index->as_int64()) + " and thread-id " +
                   std::to_string(thread->as_int64()) + " (expected a CPU number and a host thread id)"};
    out.push_back(VcpuThread{static_cast<int>(index->as_int64()), static_cast<pid_t>(thread->as_int64())});
  }
  if (out.empty()) return Error{"query-cpus-fast: no vCPUs"};
  return out;
}

Result<pid_t> vmm_pid_of(pid_t vcpu_thread) {
  // /proc/TID/status "Tgid:" is the process a thread belongs to.
  std::ifstream status("/proc/" + std::to_string(vcpu_thread) + "/status");
  if (!status) return Error{"vCPU thread " + std::to_string(vcpu_thread) + " is not a process on this host"};
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("Tgid:")) continue;
    std::string_view value = std::string_view(line).substr(5);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    pid_t pid = 0;
    auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), pid);
    if (err == std::errc() && pid > 0) return pid;
  }
  return Error{"/proc/" + std::to_string(vcpu_thread) + "/status has no Tgid"};
}

Result<std::unique_ptr<QmpSocketMonitor>> QmpSocketMonitor::connect(const std::filesystem::path& socket) {
  Result<JsonSocket> s = JsonSocket::connect(socket);
  if (!s) return s.error();
  Result<boost::json::object> greeting = s->receive(kAnswerTimeout);
  if (!greeting) return greeting.error();
  if (!greeting->contains("QMP")) return Error{socket.string() + " is not a QMP monitor (no greeting)"};
  std::unique_ptr<QmpSocketMonitor> monitor(new QmpSocketMonitor(std::move(s).value()));
  Result<boost::json::value> negotiated = monitor->qmp("qmp_capabilities", {});
  if (!negotiated) return negotiated.error();
  return monitor;
}

Result<boost::json::value> QmpSocketMonitor::qmp(std::string_view command, const boost::json::object& arguments) {
  boost::json::object message{{"execute", command}};
  if (!arguments.empty()) message["arguments"] = arguments;
  VPERF_TRY(socket_.send(message));
  for (;;) {
    Result<boost::json::object> answer = socket_.receive(kAnswerTimeout);
    if (!answer) return answer.error();
    if (answer->contains("event")) continue;
    return qmp_return(*answer, command);
  }
}

}  // namespace vperf::guest
