// A libvirt domain where vperf kvm means a guest: see kvm_domain.h.
#include "cli/kvm_domain.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include "core/error.h"
#include "guest/guest_symbol_cache.h"
#include "guest/guest_symbols.h"
#include "symbols/kallsyms.h"

namespace vperf::cli {

namespace fs = std::filesystem;

namespace {

std::string list_hint(const std::string& uri) { return "vperf kvm list --connect " + uri + " shows the domains"; }

constexpr const char* kAgentHint =
    "give the domain the guest agent's channel (<channel type='unix'><target type='virtio' "
    "name='org.qemu.guest_agent.0'/></channel>) and run qemu-ga in the guest; vperf kvm list shows whose agent answers";

fs::path make_private_directory() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "vperf-guest-symbols-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw UserError("cannot create a directory in " + base.string() + ": " + std::strerror(errno),
                    "set TMPDIR to a writable directory");
  return pattern;
}

}  // namespace

void write_guest_proc(const fs::path& proc, const std::string& kallsyms, const std::string& modules, const std::string& hint) {
  std::error_code ec;
  fs::create_directories(proc, ec);
  if (ec) throw UserError("cannot create " + proc.string() + ": " + ec.message(), hint);
  for (const auto& [name, text] : {std::pair{"kallsyms", &kallsyms}, std::pair{"modules", &modules}}) {
    std::ofstream out(proc / name, std::ios::binary | std::ios::trunc);
    out << *text;
    out.close();
    if (!out) throw UserError("cannot write " + (proc / name).string() + ": " + std::strerror(errno), hint);
  }
}

void add_connect_options(CLI::App& sub, const std::string& names, std::string& uri, bool& allow_unsafe_uri,
                         const std::string& when) {
  sub.add_option(names, uri, (when.empty() ? "The" : when + "the") + " libvirt URI (default qemu:///system; qemu+ssh://HOST/system)")
      ->check(non_empty());
  sub.add_flag("--allow-unsafe-uri", allow_unsafe_uri,
               "Pass a --connect URI that runs a program or picks sockets, keys or certificates (ext transport, command=, "
               "socket=, keyfile=, no_verify=, ...) to libvirt as given");
}

guest::LibvirtConnection connect_to_libvirt(const std::string& uri, guest::LibvirtAccess access, bool allow_unsafe_uri) {
  if (!allow_unsafe_uri)
    if (std::optional<std::string> unsafe = guest::unsafe_libvirt_uri_reason(uri))
      throw usage_error(*unsafe, "connect with a plain URI (qemu:///system, qemu+ssh://HOST/system), or add --allow-unsafe-uri "
                                 "if you wrote this one and trust what it runs and reads as this user");
  Result<guest::LibvirtConnection> connection = guest::LibvirtConnection::open(
      uri, access, allow_unsafe_uri ? guest::LibvirtUriTrust::vouched_for : guest::LibvirtUriTrust::checked);
  if (!connection)
    throw UserError(connection.error().message,
                    "start libvirtd (libvirtd -d; virtlogd -d without systemd), or give the URI with --connect");
  return std::move(connection).value();
}

pid_t domain_vmm_pid(const guest::LibvirtConnection& connection, const std::string& domain) {
  Result<pid_t> pid = connection.vmm_pid(domain);
  if (pid) return *pid;
  if (guest::libvirt_uri_is_remote(connection.uri()))
    throw UserError(pid.error().message, "run vperf on the host that runs the domain");
  throw UserError(pid.error().message, list_hint(connection.uri()));
}

DomainGuestMount DomainGuestMount::fetch(const std::string& domain, const std::string& uri, bool allow_unsafe_uri,
                                         const std::optional<guest::GuestSymbolCacheLocation>& cache_location) {
  // Read-write: libvirt serves the agent and the monitor on no other connection.
  guest::LibvirtConnection connection = connect_to_libvirt(uri, guest::LibvirtAccess::read_write, allow_unsafe_uri);
  Result<std::unique_ptr<guest::GuestAgent>> agent = connection.agent(domain);
  if (!agent) throw UserError(agent.error().message, list_hint(uri));
  if (Result<boost::json::value> ping = (*agent)->command("guest-ping", {}); !ping)
    throw UserError("domain '" + domain + "' has no guest agent that answers: " + ping.error().message, kAgentHint);
  const pid_t vmm_pid = domain_vmm_pid(connection, domain);
  Result<std::string> uuid = connection.uuid(domain);
  if (!uuid) throw UserError(uuid.error().message, list_hint(uri));
  // The kernel memory that checks a cached kallsyms (when there is a cache): domain_vmm_pid
  // has just read the vCPUs through this monitor, so it answers.
  Result<std::unique_ptr<guest::VmMonitor>> monitor = connection.monitor(domain);
  Result<std::vector<guest::VcpuThread>> vcpus = monitor && cache_location
                                                     ? guest::query_vcpus(**monitor)
                                                     : Result<std::vector<guest::VcpuThread>>(Error{"no cache to check"});
  std::optional<guest::KernelMemory> kernel;
  if (vcpus) {
    std::vector<int> indices;
    for (const guest::VcpuThread& v : *vcpus) indices.push_back(v.index);
    kernel.emplace(**monitor, std::move(indices));
  }
  return from_agent(**agent, vmm_pid, domain, guest::GuestSymbolCache{cache_location, guest::libvirt_guest_identity(*uuid)},
                    kernel ? &*kernel : nullptr);
}

DomainGuestMount DomainGuestMount::from_agent(guest::GuestAgent& agent, pid_t vmm_pid, const std::string& domain,
                                              const guest::GuestSymbolCache& cache, guest::MemoryView* live_kernel) {
  Result<guest::GuestSymbolFiles> files = guest::read_guest_symbols(agent, cache, live_kernel);
  if (!files)
    throw UserError("the guest symbols of domain '" + domain + "': " + files.error().message,
                    "check that the guest agent allows guest-file-open (no --blacklist of it)");
  // Refused here, by the domain's name: the temporary file's path would mean nothing to anyone.
  const std::string source = "domain " + domain + "'s /proc/kallsyms";
  if (Result<symbols::Kallsyms> parsed = symbols::Kallsyms::parse(files->kallsyms, source); !parsed) {
    if (parsed.error().errno_value == EACCES)
      throw UserError("the guest's symbols: " + source + ": every kernel symbol address is 0 (the guest's kernel.kptr_restrict hid them)",
                      guest::guest_kallsyms_hint());
    throw UserError("the guest's symbols: " + parsed.error().describe(), "");
  }
  DomainGuestMount mount(make_private_directory(), vmm_pid, files->from_cache);
  mount.cache_warnings_ = std::move(files->cache_warnings);
  write_guest_proc(mount.directory_ / std::to_string(vmm_pid) / "proc", files->kallsyms, files->modules,
                   "set TMPDIR to a writable directory");
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

}  // namespace vperf::cli
