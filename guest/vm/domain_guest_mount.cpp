// A libvirt domain where vperf kvm means a guest: see domain_guest_mount.h.
#include "guest/domain_guest_mount.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include "guest/guest_symbols.h"
#include "symbols/kallsyms.h"

namespace vperf::guest {

namespace fs = std::filesystem;

namespace {

std::string list_hint(const std::string& uri) { return "vperf kvm list --connect " + uri + " shows the domains"; }

constexpr const char* kAgentHint =
    "give the domain the guest agent's channel (<channel type='unix'><target type='virtio' "
    "name='org.qemu.guest_agent.0'/></channel>) and run qemu-ga in the guest; vperf kvm list shows whose agent answers";

constexpr const char* kTmpdirHint = "set TMPDIR to a writable directory";

Error with_hint(const Error& error, std::string hint) { return Error{error.message, error.errno_value, std::move(hint)}; }

Result<fs::path> make_private_directory() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "vperf-guest-symbols-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    return Error{"cannot create a directory in " + base.string() + ": " + std::strerror(errno), 0, kTmpdirHint};
  return fs::path(pattern);
}

}  // namespace

Result<void> write_guest_proc(const fs::path& proc, const std::string& kallsyms, const std::string& modules) {
  std::error_code ec;
  fs::create_directories(proc, ec);
  if (ec) return Error{"cannot create " + proc.string() + ": " + ec.message()};
  for (const auto& [name, text] : {std::pair{"kallsyms", &kallsyms}, std::pair{"modules", &modules}}) {
    std::ofstream out(proc / name, std::ios::binary | std::ios::trunc);
    out << *text;
    out.close();
    if (!out) return Error{"cannot write " + (proc / name).string() + ": " + std::strerror(errno)};
  }
  return {};
}

Result<pid_t> domain_vmm_pid(const LibvirtConnection& connection, const std::string& domain) {
  Result<pid_t> pid = connection.vmm_pid(domain);
  if (pid) return *pid;
  if (libvirt_uri_is_remote(connection.uri())) return with_hint(pid.error(), "run vperf on the host that runs the domain");
  return with_hint(pid.error(), list_hint(connection.uri()));
}

Result<DomainGuestMount> DomainGuestMount::fetch(const LibvirtConnection& connection, const std::string& domain,
                                                 const std::optional<GuestSymbolCacheLocation>& cache_location) {
  const std::string& uri = connection.uri();
  Result<std::unique_ptr<GuestAgent>> agent = connection.agent(domain);
  if (!agent) return with_hint(agent.error(), list_hint(uri));
  if (Result<boost::json::value> ping = (*agent)->command("guest-ping", {}); !ping)
    return Error{"domain '" + domain + "' has no guest agent that answers: " + ping.error().message, 0, kAgentHint};
  Result<pid_t> vmm_pid = domain_vmm_pid(connection, domain);
  if (!vmm_pid) return vmm_pid.error();
  Result<std::string> uuid = connection.uuid(domain);
  if (!uuid) return with_hint(uuid.error(), list_hint(uri));
  // The kernel memory that checks a cached kallsyms (when there is a cache): domain_vmm_pid
  // has just read the vCPUs through this monitor, so it answers.
  Result<std::unique_ptr<VmMonitor>> monitor = connection.monitor(domain);
  Result<std::vector<VcpuThread>> vcpus =
      monitor && cache_location ? query_vcpus(**monitor) : Result<std::vector<VcpuThread>>(Error{"no cache to check"});
  std::optional<KernelMemory> kernel;
  if (vcpus) {
    std::vector<int> indices;
    for (const VcpuThread& v : *vcpus) indices.push_back(v.index);
    kernel.emplace(**monitor, std::move(indices));
  }
  return from_agent(**agent, *vmm_pid, domain, GuestSymbolCache{cache_location, libvirt_guest_identity(*uuid)},
                    kernel ? &*kernel : nullptr);
}

Result<DomainGuestMount> DomainGuestMount::from_agent(GuestAgent& agent, pid_t vmm_pid, const std::string& domain,
                                                      const GuestSymbolCache& cache, MemoryView* live_kernel) {
  Result<GuestSymbolFiles> files = read_guest_symbols(agent, cache, live_kernel);
  if (!files)
    return Error{"the guest symbols of domain '" + domain + "': " + files.error().message, 0,
                 "check that the guest agent allows guest-file-open (no --blacklist of it)"};
  // Refused here, by the domain's name: the temporary file's path would mean nothing to anyone.
  const std::string source = "domain " + domain + "'s /proc/kallsyms";
  if (Result<symbols::Kallsyms> parsed = symbols::Kallsyms::parse(files->kallsyms, source); !parsed) {
    if (parsed.error().errno_value == EACCES)
      return Error{"the guest's symbols: " + source +
                       ": every kernel symbol address is 0 (the guest's kernel.kptr_restrict hid them)",
                   0, guest_kallsyms_hint()};
    return Error{"the guest's symbols: " + parsed.error().describe()};
  }
  Result<fs::path> directory = make_private_directory();
  if (!directory) return directory.error();
  DomainGuestMount mount(*directory, vmm_pid, files->from_cache);
  mount.cache_warnings_ = std::move(files->cache_warnings);
  if (Result<void> written = write_guest_proc(mount.directory_ / std::to_string(vmm_pid) / "proc", files->kallsyms,
                                              files->modules);
      !written)
    return with_hint(written.error(), kTmpdirHint);
  return mount;
}

DomainGuestMount::DomainGuestMount(DomainGuestMount&& other) noexcept
    : directory_(std::exchange(other.directory_, fs::path())),
      vmm_pid_(other.vmm_pid_),
      from_cache_(other.from_cache_),
      cache_warnings_(std::move(other.cache_warnings_)) {}

DomainGuestMount::~DomainGuestMount() {
  if (directory_.empty()) return;
  std::error_code ec;
  fs::remove_all(directory_, ec);
}

}  // namespace vperf::guest
