#include "guest/recording/vm_record.h"

#include <cerrno>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/files.h"
#include "guest/domain_guest_mount.h"
#include "guest/guest_agent.h"
#include "guest/guest_symbol_cache.h"
#include "guest/vcpu_sampler.h"
#include "guest/vcpu_stack_reader.h"
#include "guest/vm_monitor.h"
#include "symbols/kallsyms.h"

namespace vperf::guest {

namespace {

namespace fs = std::filesystem;

struct GuestSymbolTexts {
  std::string kallsyms, modules;
  bool from_cache = false;
};

// The VM's monitor and, when there is one, its guest agent: sockets, or a libvirt domain.
struct VmAccess {
  std::unique_ptr<guest::VmMonitor> monitor;
  std::unique_ptr<guest::GuestAgent> agent;
  std::string where;  // for messages
  std::optional<pid_t> vmm_pid;  // libvirt's, with --domain (refused for a remote URI)
  std::string guest_identity;    // the symbol cache's key, with --domain (guest/guest_symbol_cache.h)
};

// With --domain alone, libvirt carries both the monitor and the agent; with --domain and --qmp,
// samples go through the QMP socket (libvirtd caps its monitor path far below 1000 ticks/s:
// docs/guest.md) while libvirt still gives the VMM's pid and the guest agent.
VmAccess open_vm(const VmRecordRequest& o, const guest::LibvirtConnection* libvirt) {
  VmAccess vm;
  if (!o.domain.empty()) {
    if (libvirt == nullptr) throw UserError("--domain " + o.domain + " needs a libvirt connection", "");
    vm.where = "domain " + o.domain + " at " + libvirt->uri();
    const guest::LibvirtConnection& connection = *libvirt;
    // Before the monitor or the agent is asked anything: a remote URI's VMM is another host's
    // process, and its thread ids would name unrelated processes here.
    Result<pid_t> vmm_pid = guest::domain_vmm_pid(connection, o.domain);
    if (!vmm_pid) throw user_error(vmm_pid.error());
    vm.vmm_pid = *vmm_pid;
    Result<std::string> uuid = connection.uuid(o.domain);
    if (!uuid) throw UserError(uuid.error().message, "vperf kvm list -c " + libvirt->uri() + " shows the domains");
    vm.guest_identity = guest::libvirt_guest_identity(*uuid);
    if (o.qmp.empty()) {
      Result<std::unique_ptr<guest::VmMonitor>> monitor = connection.monitor(o.domain);
      if (!monitor) throw UserError(monitor.error().message, "vperf kvm list -c " + libvirt->uri() + " shows the domains");
      vm.monitor = std::move(monitor).value();
    }
    // The agent is used when it answers; a domain without one is sampled without symbols.
    if (auto agent = connection.agent(o.domain); agent && (*agent)->command("guest-ping", {}).ok())
      vm.agent = std::move(agent).value();
    if (o.qmp.empty()) return vm;
  }
  vm.where = "QEMU's monitor at " + o.qmp.string();
  Result<std::unique_ptr<guest::QmpSocketMonitor>> monitor = guest::QmpSocketMonitor::connect(o.qmp);
  if (!monitor)
    throw UserError("cannot reach QEMU's monitor at " + o.qmp.string() + ": " + monitor.error().message,
                    "start QEMU with -qmp unix:" + o.qmp.string() + ",server=on,wait=off (or use --domain with libvirt)");
  vm.monitor = std::move(monitor).value();
  if (!o.qga.empty()) {
    Result<std::unique_ptr<guest::QgaSocketAgent>> agent = guest::QgaSocketAgent::connect(o.qga);
    if (!agent)
      throw UserError("cannot reach the guest agent at " + o.qga.string() + ": " + agent.error().message,
                      "run qemu-ga in the guest on a virtio-serial port named org.qemu.guest_agent.0");
    vm.agent = std::move(agent).value();
  }
  return vm;
}

// The guest's kallsyms and modules, from its agent (through the cache of `guest_identity`,
// which `kernel` checks) or from the files the user gave; nullopt when there is neither (the
// samples then keep their bare addresses). Checked, not yet written.
std::optional<GuestSymbolTexts> fetch_guest_symbols(const VmRecordRequest& o, guest::GuestAgent* agent,
                                                    const std::string& guest_identity, guest::MemoryView& kernel,
                                                    std::ostream& err) {
  std::string kallsyms, modules;
  bool from_cache = false;
  if (agent != nullptr) {
    Result<guest::GuestSymbolFiles> files = guest::read_guest_symbols(
        *agent, guest::GuestSymbolCache{guest::default_guest_symbol_cache(), guest_identity}, &kernel);
    if (!files) throw UserError(files.error().message, "check that the guest agent allows guest-file-open (no --blacklist of it)");
    if (!o.quiet)
      for (const std::string& warning : files->cache_warnings) err << "vperf: warning: " << warning << '\n';
    kallsyms = std::move(files->kallsyms);
    modules = std::move(files->modules);
    from_cache = files->from_cache;
  } else if (!o.guests.kallsyms.empty()) {
    Result<std::string> k = read_file(o.guests.kallsyms);
    if (!k) throw UserError(k.error().describe(), "give the guest's /proc/kallsyms, copied out as root");
    kallsyms = *k;
    if (!o.guests.modules.empty()) {
      Result<std::string> m = read_file(o.guests.modules);
      if (!m) throw UserError(m.error().describe(), "give the guest's /proc/modules");
      modules = *m;
    }
  } else {
    return std::nullopt;
  }
  Result<symbols::Kallsyms> parsed = symbols::Kallsyms::parse(kallsyms, "the guest's /proc/kallsyms");
  if (!parsed && parsed.error().errno_value == EACCES)
    throw UserError("the guest's /proc/kallsyms has only zero addresses (the guest's kernel.kptr_restrict hid them)",
                    guest::guest_kallsyms_hint());
  if (!parsed) throw UserError(parsed.error().describe(), "");
  return GuestSymbolTexts{std::move(kallsyms), std::move(modules), from_cache};
}

// With -g, guest kernel stacks and their unwinder; nullopt without -g.
std::optional<guest::VcpuStackReader> guest_stacks(const VmRecordRequest& o, const std::optional<GuestSymbolTexts>& symbols,
                                                   guest::VmMonitor& monitor, guest::KernelMemory& kernel_memory) {
  if (!o.call_graph) return std::nullopt;
  if (!symbols)
    throw UserError("guest kernel stacks need the guest's kallsyms",
                    "give --qga (or a domain whose agent answers), or --guestkallsyms and --guestmodules");
  Result<symbols::Kallsyms> kallsyms = symbols::Kallsyms::parse(symbols->kallsyms, "the guest's /proc/kallsyms");
  if (!kallsyms) throw UserError(kallsyms.error().describe(), "");
  Result<guest::GuestKernelLayout> layout = guest::guest_kernel_layout(*kallsyms, symbols->modules, kernel_memory);
  if (!layout) throw UserError(layout.error().message, "give the guest's own /proc/kallsyms");
  if (o.stack_method == guest::StackMethod::orc && !layout->has_orc())
    throw UserError("the guest kernel has no ORC tables (no __start_orc_unwind_ip in its kallsyms, or its version unreadable)",
                    "use --call-graph fp for a kernel built with frame pointers, or --call-graph scan");
  return std::optional<guest::VcpuStackReader>(std::in_place, monitor, kernel_memory, std::move(layout).value(), o.stack_method, o.recording.pause);
}

// One event per way a sample's stack was made, so every reader shows it: vcpu-clock (no kernel
// stack) and, with -g, vcpu-clock.METHOD for each method the recording can use.
std::vector<guest::StackMethod> stack_methods(const VmRecordRequest& o, const std::optional<guest::VcpuStackReader>& stacks) {
  if (!stacks) return {};
  if (o.stack_method) return {*o.stack_method};
  if (stacks->layout().has_orc()) return {guest::StackMethod::orc};
  return {guest::StackMethod::frame_pointer, guest::StackMethod::scan};
}

void require_running_for_pause(const VmRecordRequest& o, guest::VmMonitor& monitor) {
  if (!o.recording.pause) return;
  Result<bool> running = guest::vm_is_running(monitor);
  if (!running) throw UserError(running.error().message, "");
  if (!*running)
    throw UserError("the VM is paused, and --pause would resume it after each tick",
                    "resume it first (virsh resume, or QMP cont), or record without --pause");
}

void print_summary(const VmRecordRequest& o, const MonitorTarget& target, const guest::SamplerStats& stats,
                   const std::optional<GuestSymbolTexts>& symbols, const fs::path& mount, std::ostream& err) {
  char line[512];
  std::snprintf(line, sizeof line,
                "[ vperf kvm record: %zu vCPUs sampled through QEMU's monitor at %.0f Hz (asked %.0f) for %.2f s: %llu samples, "
                "%.1f%% in the guest kernel -> %s%s ]\n",
                target.vcpus.size(), stats.ticks_per_second(), o.recording.frequency, stats.seconds,
                static_cast<unsigned long long>(stats.samples),
                stats.samples ? 100.0 * static_cast<double>(stats.kernel_samples) / static_cast<double>(stats.samples) : 0.0,
                o.recording.output.c_str(),
                !symbols ? ", no guest symbols"
                         : (", guest symbols" + std::string(symbols->from_cache ? " (cached for this guest boot)" : "") + " in " +
                            mount.string()).c_str());
  err << line;
}

// Which method made how many stacks, and what was left without one: the reader's due.
void print_stack_summary(const guest::VcpuStackReader& stacks, const guest::KernelMemory& kernel_memory, std::ostream& err) {
  const guest::StackReaderStats& st = stacks.stats();
  std::string by;
  for (guest::StackMethod m : {guest::StackMethod::orc, guest::StackMethod::frame_pointer, guest::StackMethod::scan})
    if (uint64_t n = st.by_method[static_cast<size_t>(m)]; n > 0)
      by += (by.empty() ? "" : ", ") + std::to_string(n) + " by " + std::string(guest::method_name(m));
  char line[512];
  std::snprintf(line, sizeof line,
                "[ guest kernel stacks: %s; %llu unwound to their base; %llu left out (the vCPU had moved on before its stack was "
                "dumped: --pause keeps them), %llu unreadable; %zu guest kernel pages read ]\n",
                by.empty() ? "none" : by.c_str(), static_cast<unsigned long long>(st.complete),
                static_cast<unsigned long long>(st.moved), static_cast<unsigned long long>(st.unreadable), kernel_memory.pages_read());
  err << line;
}

}  // namespace

int record_vm(const VmRecordRequest& o, const guest::LibvirtConnection* libvirt, std::ostream& err) {
  VmAccess vm = open_vm(o, libvirt);
  require_running_for_pause(o, *vm.monitor);
  Result<std::vector<guest::VcpuThread>> vcpus = guest::query_vcpus(*vm.monitor);
  if (!vcpus) throw UserError(vcpus.error().message, "");
  Result<pid_t> vmm = vm.vmm_pid ? Result<pid_t>(*vm.vmm_pid) : guest::vmm_pid_of(vcpus->front().thread_id);
  if (!vmm) throw UserError(vmm.error().message, "record on the host that runs the VM");

  // The guest kernel's memory through the monitor: what checks a cached kallsyms and, with -g,
  // the kernel's code and ORC tables the unwinds need.
  std::vector<int> vcpu_indices;
  for (const guest::VcpuThread& v : *vcpus) vcpu_indices.push_back(v.index);
  guest::KernelMemory kernel_memory(*vm.monitor, vcpu_indices);
  if (vm.guest_identity.empty() && vm.agent) {  // the sockets' VM: its VMM process is who it is
    Result<std::string> identity = guest::vmm_guest_identity(*vmm);
    if (identity) vm.guest_identity = *identity;
  }

  // The guest's symbols beside the file, in --guestmount layout, and as maps in it. Fetched
  // before anything is written, so a failure leaves the previous recording as it was.
  std::optional<GuestSymbolTexts> symbols = fetch_guest_symbols(o, vm.agent.get(), vm.guest_identity, kernel_memory, err);
  vm.agent.reset();  // an agent's socket serves one client at a time: free it for others while sampling
  const fs::path mount = guestmount_beside(o.recording.output);
  const fs::path proc = mount / std::to_string(*vmm) / "proc";
  std::optional<guest::VcpuStackReader> stacks = guest_stacks(o, symbols, *vm.monitor, kernel_memory);
  // Only now, with everything checked, the previous recording's kept symbols make way.
  std::error_code ec;
  fs::remove_all(mount, ec);
  if (symbols)
    if (Result<void> written = guest::write_guest_proc(proc, symbols->kallsyms, symbols->modules); !written)
      throw UserError(written.error().describe(), "check the directory of -o");

  MonitorTarget target{vm.monitor.get(), *vcpus, *vmm, stacks ? &*stacks : nullptr, stack_methods(o, stacks),
                                symbols ? std::optional<fs::path>(proc) : std::nullopt};
  session::SystemRunClock clock;
  MonitorRecordResult result = record_through_monitor(o.recording, target, clock);
  if (!result.stats)
    throw UserError("sampling through " + vm.where + " stopped: " + result.stats.error().message,
                    o.recording.pause ? "is the VM still running? If --pause left it stopped, resume it (virsh resume, or QMP cont)"
                            : "is the VM still running?");
  if (!o.quiet) {
    print_summary(o, target, *result.stats, symbols, mount, err);
    if (stacks) print_stack_summary(*stacks, kernel_memory, err);
  }
  return result.exit ? result.exit->shell_status() : 0;
}

}  // namespace vperf::guest
