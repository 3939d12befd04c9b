#include "support/guest_stall_report.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/files.h"
#include "core/scoped_fd.h"
#include "guest/vcpu_registers.h"
#include "guest/vm_monitor.h"
#include "symbols/kallsyms.h"
#include "support/unix_socket.h"

namespace vperf::test {

namespace {

// The host side of the guest's console (QEMU's -chardev socket for ttyS0): bytes typed go to
// init's shell, and what the guest prints comes back (also into serial.log).
class ConsoleSocket {
 public:
  static Result<ConsoleSocket> connect(const std::filesystem::path& path) {
    ConsoleSocket console;
    VPERF_TRY(console.fd_, connect_unix_socket(path));
    return console;
  }

  Result<void> type(std::string_view text) {
    while (!text.empty()) {
      ssize_t n = ::send(fd_.get(), text.data(), text.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Error::from_errno("write to the guest's console");
      text.remove_prefix(static_cast<size_t>(n));
    }
    return {};
  }

  // Reads until what arrived holds `marker` or `timeout` passes; true when the marker came.
  // An empty marker reads for the whole `timeout`.
  bool read_until(std::string_view marker, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (marker.empty() || received_.find(marker) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_.get(), POLLIN, 0};
      int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      char chunk[16384];
      ssize_t n = ::read(fd_.get(), chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      received_.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }
  const std::string& received() const { return received_; }

 private:
  ScopedFd fd_;
  std::string received_;
};

// The console's text without carriage returns and terminal control sequences (busybox's line
// editor asks the terminal for its cursor position with ESC [ 6 n before each prompt).
std::string plain_text(std::string_view console) {
  std::string out;
  for (size_t i = 0; i < console.size(); ++i) {
    const char c = console[i];
    if (c == '\x1b' && i + 1 < console.size() && console[i + 1] == '[') {
      i += 2;
      while (i < console.size() && !(console[i] >= '@' && console[i] <= '~')) ++i;
      continue;
    }
    if (c == '\r') continue;
    out.push_back(c);
  }
  return out;
}

std::string last_chars(const std::string& text, size_t count) { return text.size() > count ? text.substr(text.size() - count) : text; }

// Each QEMU thread's CPU time in clock ticks, by thread id, with its name.
std::map<std::string, std::pair<std::string, uint64_t>> qemu_thread_ticks(pid_t qemu) {
  std::map<std::string, std::pair<std::string, uint64_t>> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(qemu) + "/task", ec)) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    // After the name: state (field 3) ... utime (14) and stime (15).
    for (int number = 3; number <= 15 && fields >> field; ++number) {
      if (number == 14) utime = std::stoull(field);
      if (number == 15) stime = std::stoull(field);
    }
    out[task.path().filename().string()] = {stat.substr(open + 1, close - open - 1), utime + stime};
  }
  return out;
}

std::string qemu_view(const RunningGuest& guest) {
  std::ostringstream out;
  out << "QEMU (pid " << guest.qemu_pid() << "):\n";
  Result<std::unique_ptr<guest::QmpSocketMonitor>> monitor = guest::QmpSocketMonitor::connect(guest.qmp());
  if (!monitor) {
    out << "  QMP does not answer: " << monitor.error().describe() << "\n";
  } else {
    guest::VmMonitor& qmp = **monitor;
    if (Result<boost::json::value> status = qmp.qmp("query-status", {}); status && status->is_object())
      out << "  run state: " << boost::json::serialize(status->as_object().at("status")) << "\n";
    // The agent's socket: "disconnected:unix:..." while no client is connected; frontend-open
    // says whether the guest holds the virtio-serial port open (qemu-ga has opened it).
    if (Result<boost::json::value> chardevs = qmp.qmp("query-chardev", {}); chardevs && chardevs->is_array())
      for (const boost::json::value& chardev : chardevs->as_array()) out << "  chardev " << boost::json::serialize(chardev) << "\n";
    // The virtio-serial queues of the agent's port (nr=1: queue 4 carries the host's bytes to
    // the guest, 5 the guest's to the host) and of the control messages (2 to the guest, 3 from
    // it: each client's connect and close, the guest's port open): an avail index the device no
    // longer follows, or used entries beyond what was signalled, is a lost notification.
    if (Result<boost::json::value> devices = qmp.qmp("x-query-virtio", {}); devices && devices->is_array())
      for (const boost::json::value& device : devices->as_array()) {
        const boost::json::object* o = device.if_object();
        if (!o || !o->contains("path") || !o->contains("name") || o->at("name") != "virtio-serial") continue;
        for (const auto& [queue, what] : {std::pair<int, const char*>{2, "control to the guest"}, {3, "control from the guest"},
                                          {4, "agent port to the guest"}, {5, "agent port from the guest"}}) {
          Result<boost::json::value> status = qmp.qmp("x-query-virtio-queue-status", {{"path", o->at("path")}, {"queue", queue}});
          out << "  virtio-serial queue " << queue << " (" << what << "): " << (status ? boost::json::serialize(*status) : status.error().describe())
              << "\n";
        }
      }
    Result<symbols::Kallsyms> kallsyms = symbols::Kallsyms::load(guest.kallsyms());
    Result<std::string> text = qmp.hmp("info registers -a");
    Result<std::vector<guest::VcpuRegisters>> vcpus = text ? guest::parse_info_registers(*text) : Result<std::vector<guest::VcpuRegisters>>(text.error());
    if (!vcpus) out << "  vCPU registers: " << vcpus.error().describe() << "\n";
    for (const guest::VcpuRegisters& vcpu : vcpus ? *vcpus : std::vector<guest::VcpuRegisters>{}) {
      char rip[32];
      std::snprintf(rip, sizeof rip, "%016llx", static_cast<unsigned long long>(vcpu.rip));
      out << "  vCPU " << vcpu.index << ": RIP " << rip;
      if (kallsyms && vcpu.in_kernel())
        if (const symbols::Symbol* symbol = kallsyms->kernel().find(vcpu.rip)) {
          char offset[32];
          std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(vcpu.rip - symbol->start));
          out << " " << symbol->name << offset;
        }
      out << (vcpu.in_kernel() ? " (kernel)" : " (user)") << (vcpu.halted ? ", halted" : ", running") << "\n";
    }
  }
  // Whether QEMU's vCPUs or its main loop spin: each thread's CPU over one second (a measuring
  // window, not a wait for anything).
  const auto before = qemu_thread_ticks(guest.qemu_pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto after = qemu_thread_ticks(guest.qemu_pid());
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const auto& [tid, named] : after) {
    auto earlier = before.find(tid);
    if (earlier == before.end()) continue;
    const double percent = 100.0 * static_cast<double>(named.second - earlier->second.second) / ticks_per_second;
    out << "  thread " << tid << " (" << named.first << "): " << static_cast<int>(percent) << "% of a host CPU\n";
  }
  return out.str();
}

// Typed into init's busybox shell one short line at a time, after the first line has turned
// the terminal's echo off: without it the tty echoes the lines typed ahead between the answers
// (and busybox's line editor, which needs the echo, steps aside). Markers are computed by the
// shell ($((6*7))), so that no echo of a typed line could match them. The reads that can block
// on a lock a stuck tracer holds (tracefs) come last.
constexpr const char* kFirstLine = "stty -echo; echo vperf-stall-begin-$((6*7))\n";
constexpr const char* kBegin = "vperf-stall-begin-42";
constexpr const char* kEnd = "vperf-stall-end-42";
constexpr const char* kGuestScript[] = {
    "echo '# uptime, load, memory'; cat /proc/uptime /proc/loadavg; free",
    "echo '# processes'; top -b -n 1",
    "echo '# qemu-ga'; for p in $(pidof qemu-ga); do echo \"pid $p wchan $(cat /proc/$p/wchan)\"; grep -E '^(State|VmRSS|Threads|voluntary|nonvoluntary)' /proc/$p/status; done",
    "echo '# qemu-ga threads, kernel stacks'; for t in $(for p in $(pidof qemu-ga); do echo /proc/$p/task/*; done); do echo \"$t: $(cat $t/comm) wchan $(cat $t/wchan)\"; cat $t/stack; done",
    "echo '# qemu-ga files and their open flags'; for p in $(pidof qemu-ga); do ls -l /proc/$p/fd; grep -H flags /proc/$p/fdinfo/*; done",
    "grep -q debugfs /proc/mounts || mount -t debugfs nodev /sys/kernel/debug",
    "echo '# virtio-serial ports (vport0p1: the agent)'; for f in /sys/kernel/debug/virtio-ports/*; do echo \"$f:\"; cat $f; done; grep -i virtio /proc/interrupts",
    "echo '# kernel log: its last lines, then sysrq w (blocked tasks) and l (each CPU, read once every CPU has answered, 5 s at most)'; n=$(dmesg | wc -l); echo w > /proc/sysrq-trigger; echo l > /proc/sysrq-trigger; for i in $(seq 50); do [ $(dmesg | tail -n +$((n + 1)) | grep -c 'NMI backtrace for cpu') -ge $(grep -c ^processor /proc/cpuinfo) ] && break; sleep 0.1; done; dmesg | tail -n +$((n > 40 ? n - 40 : 1))",
    "echo '# tracefs'; cd /sys/kernel/tracing 2>/dev/null && for f in current_tracer tracing_on set_ftrace_pid set_graph_function; do echo \"$f: $(head -3 $f)\"; done; ls instances; cd /",
    "stty echo; echo vperf-stall-end-$((6*7))",
};

// The kernel's own dumps, asked for through QMP's keyboard (sysrq), as the console prints them.
std::string sysrq_dumps(const RunningGuest& guest, ConsoleSocket& console) {
  std::string out = "sysrq 9 (loglevel), w (blocked tasks), l (CPUs), t (every task) from QMP's keyboard:\n";
  Result<std::unique_ptr<guest::QmpSocketMonitor>> monitor = guest::QmpSocketMonitor::connect(guest.qmp());
  if (!monitor) return out + "  QMP does not answer: " + monitor.error().describe() + "\n";
  const size_t before = console.received().size();
  for (const char* key : {"9", "w", "l", "t"}) {
    boost::json::array keys{boost::json::object{{"type", "qcode"}, {"data", "alt"}}, boost::json::object{{"type", "qcode"}, {"data", "sysrq"}},
                            boost::json::object{{"type", "qcode"}, {"data", key}}};
    if (Result<boost::json::value> sent = (*monitor)->qmp("send-key", {{"keys", keys}}); !sent) out += "  send-key: " + sent.error().describe() + "\n";
    // Every task's stack is some 30 KB, 3 s on the emulated UART of a loaded host.
    console.read_until("", std::chrono::seconds(key == std::string_view("t") ? 15 : 5));
  }
  return out + plain_text(std::string_view(console.received()).substr(before)) + "\n";
}

std::string guest_view(const RunningGuest& guest) {
  Result<ConsoleSocket> console = ConsoleSocket::connect(guest.dir() / "console.sock");
  if (!console) return "The guest's console: " + console.error().describe() + "\n";
  // A newline first: it ends whatever a test may have left typed on the line.
  if (Result<void> typed = console->type(std::string("\n") + kFirstLine); !typed)
    return "The guest's console: " + typed.error().describe() + "\n";
  // A TCG guest on a loaded host runs the shell's first line within seconds when it runs at all.
  if (console->read_until(kBegin, std::chrono::seconds(30))) {
    std::string script;
    for (const char* line : kGuestScript) script += std::string(line) + "\n";
    Result<void> typed = console->type(script);
    const bool whole = typed && console->read_until(kEnd, std::chrono::seconds(90));
    std::string transcript = plain_text(console->received());
    if (size_t begin = transcript.find(kBegin); begin != std::string::npos) transcript.erase(0, begin);
    std::string out = "The guest, from init's shell on its console" + std::string(whole ? "" : " (it stopped answering before the end)") +
                      ":\n" + transcript + "\n";
    // A shell that stopped midway is stuck in the kernel (a soft lockup prints its stack only
    // above the quiet loglevel): the keyboard still reaches it.
    if (!whole) out += sysrq_dumps(guest, console.value());
    return out;
  }
  // The shell does not run: the kernel may hang, or init's shell is busy.
  return "The guest's shell did not answer on its console within 30 s.\n" + sysrq_dumps(guest, console.value());
}

}  // namespace

std::string guest_stall_report(const RunningGuest& guest) {
  // The console before anything here types into it.
  const std::string console = plain_text(read_file(guest.dir() / "serial.log", size_t{64} << 20).value_or(""));
  std::string report = "The guest's console, last lines:\n" + last_chars(console, 3000) + "\n";
  report += qemu_view(guest);
  report += guest_view(guest);
  return report;
}

}  // namespace vperf::test
