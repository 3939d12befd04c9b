#pragma once
// The QEMU monitor of one VM, reached directly over its QMP socket or through libvirt
// (virDomainQemuMonitorCommand): QMP commands with JSON arguments and results, and HMP
// commands through QMP's human-monitor-command (the only way to a running vCPU's registers).
#include <sys/types.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "guest/json_socket.h"

namespace vperf::guest {

class VmMonitor {
 public:
  virtual ~VmMonitor() = default;
  // The command's "return" value; an Error with QMP's error description otherwise.
  virtual Result<boost::json::value> qmp(std::string_view command, const boost::json::object& arguments) = 0;
  // An HMP command line's text output; `cpu_index` is the vCPU whose registers and address
  // space commands such as `x /8gx $sp` use (QEMU's default is vCPU 0).
  Result<std::string> hmp(std::string_view command_line, std::optional<int> cpu_index = std::nullopt);
};

// A vCPU as QMP's query-cpus-fast describes it: QEMU's cpu-index and the host thread that runs it.
struct VcpuThread {
  int index = 0;
  pid_t thread_id = 0;
  bool operator==(const VcpuThread&) const = default;
};
Result<std::vector<VcpuThread>> query_vcpus(VmMonitor& monitor);
// The VMM's process id: the thread group of its vCPU threads, from /proc (local VMs only).
Result<pid_t> vmm_pid_of(pid_t vcpu_thread);

// QMP over QEMU's -qmp unix:PATH,server=on socket: the greeting, capabilities negotiation,
// then one command at a time (asynchronous events in between are skipped).
class QmpSocketMonitor : public VmMonitor {
 public:
  static Result<std::unique_ptr<QmpSocketMonitor>> connect(const std::filesystem::path& socket);
  Result<boost::json::value> qmp(std::string_view command, const boost::json::object& arguments) override;

 private:
  explicit QmpSocketMonitor(JsonSocket socket) : socket_(std::move(socket)) {}
  JsonSocket socket_;
};

// The answer of a QMP command: the "return" value or the error it carries.
Result<boost::json::value> qmp_return(const boost::json::object& answer, std::string_view command);

}  // namespace vperf::guest
