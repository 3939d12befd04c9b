#include "guest/libvirt_domain.h"

#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include <cstdlib>
#include <utility>

#include "core/shared_library.h"
#include "core/strings.h"

namespace vperf::guest {

namespace {

// The libvirt functions vperf calls, loaded on the first connection rather than linked:
// libvirt and its ~35 libraries would otherwise load with every command
// (core/shared_library.h). Each member has the declared function's name and type.
struct LibvirtApi {
  decltype(&::virSetErrorFunc) virSetErrorFunc = nullptr;
  decltype(&::virGetLastErrorMessage) virGetLastErrorMessage = nullptr;
  decltype(&::virConnectOpen) virConnectOpen = nullptr;
  decltype(&::virConnectOpenReadOnly) virConnectOpenReadOnly = nullptr;
  decltype(&::virConnectClose) virConnectClose = nullptr;
  decltype(&::virConnectGetURI) virConnectGetURI = nullptr;
  decltype(&::virConnectListAllDomains) virConnectListAllDomains = nullptr;
  decltype(&::virDomainLookupByName) virDomainLookupByName = nullptr;
  decltype(&::virDomainFree) virDomainFree = nullptr;
  decltype(&::virDomainGetName) virDomainGetName = nullptr;
  decltype(&::virDomainGetState) virDomainGetState = nullptr;
  decltype(&::virDomainGetID) virDomainGetID = nullptr;
  decltype(&::virDomainGetUUIDString) virDomainGetUUIDString = nullptr;
  decltype(&::virDomainQemuMonitorCommand) virDomainQemuMonitorCommand = nullptr;
  decltype(&::virDomainQemuAgentCommand) virDomainQemuAgentCommand = nullptr;

  static Result<LibvirtApi> load() {
    constexpr const char* kHint = "install libvirt's client libraries: apt-get install libvirt0";
    VPERF_TRY(SharedLibrary core, SharedLibrary::open("libvirt.so.0", kHint));
    VPERF_TRY(SharedLibrary qemu, SharedLibrary::open("libvirt-qemu.so.0", kHint));
    LibvirtApi api;
    VPERF_BIND_FUNCTION(core, api, virSetErrorFunc);
    VPERF_BIND_FUNCTION(core, api, virGetLastErrorMessage);
    VPERF_BIND_FUNCTION(core, api, virConnectOpen);
    VPERF_BIND_FUNCTION(core, api, virConnectOpenReadOnly);
    VPERF_BIND_FUNCTION(core, api, virConnectClose);
    VPERF_BIND_FUNCTION(core, api, virConnectGetURI);
    VPERF_BIND_FUNCTION(core, api, virConnectListAllDomains);
    VPERF_BIND_FUNCTION(core, api, virDomainLookupByName);
    VPERF_BIND_FUNCTION(core, api, virDomainFree);
    VPERF_BIND_FUNCTION(core, api, virDomainGetName);
    VPERF_BIND_FUNCTION(core, api, virDomainGetState);
    VPERF_BIND_FUNCTION(core, api, virDomainGetID);
    VPERF_BIND_FUNCTION(core, api, virDomainGetUUIDString);
    VPERF_BIND_FUNCTION(qemu, api, virDomainQemuMonitorCommand);
    VPERF_BIND_FUNCTION(qemu, api, virDomainQemuAgentCommand);
    return api;
  }
};

// Loaded once, by the first LibvirtConnection::open; every other use comes after a connection.
const Result<LibvirtApi>& libvirt_api() { return loaded_once<LibvirtApi>(); }
const LibvirtApi& libvirt() { return libvirt_api().value(); }

// libvirt prints every error on stderr unless a handler says otherwise; vperf reports them itself.
void quiet_errors(void*, virErrorPtr) {}

const char* state_name(int state) {
  switch (state) {
    case VIR_DOMAIN_RUNNING: return "running";
    case VIR_DOMAIN_BLOCKED: return "idle";
    case VIR_DOMAIN_PAUSED: return "paused";
    case VIR_DOMAIN_SHUTDOWN: return "in shutdown";
    case VIR_DOMAIN_SHUTOFF: return "shut off";
    case VIR_DOMAIN_CRASHED: return "crashed";
    case VIR_DOMAIN_PMSUSPENDED: return "pmsuspended";
    default: return "no state";
  }
}

struct DomainRef {
  explicit DomainRef(virDomainPtr d) : domain(d) {}
  DomainRef(const DomainRef&) = delete;
  DomainRef& operator=(const DomainRef&) = delete;
  ~DomainRef() {
    if (domain != nullptr) libvirt().virDomainFree(domain);
  }
  virDomainPtr domain;
};

// {"execute": NAME, "arguments": {...}}: what QEMU's monitor and its guest agent both take.
std::string execute_message(std::string_view name, const boost::json::object& arguments) {
  boost::json::object message{{"execute", name}};
  if (!arguments.empty()) message["arguments"] = arguments;
  return boost::json::serialize(message);
}

// libvirt's answer text (malloc'ed; freed here), {"return": ...} or {"error": ...}, as the
// command's return value; null when libvirt failed before QEMU answered.
Result<boost::json::value> take_answer(char* text, std::string_view command) {
  if (text == nullptr) return Error{std::string(command) + " through libvirt: " + libvirt_error()};
  boost::system::error_code ec;
  boost::json::value answer = boost::json::parse(text, ec);
  std::free(text);
  if (ec || !answer.is_object()) return Error{std::string(command) + ": the answer is not JSON"};
  return qmp_return(answer.as_object(), command);
}

class LibvirtMonitor : public VmMonitor {
 public:
  explicit LibvirtMonitor(virDomainPtr domain) : domain_(domain) {}
  Result<boost::json::value> qmp(std::string_view command, const boost::json::object& arguments) override {
    char* result = nullptr;
    if (libvirt().virDomainQemuMonitorCommand(domain_.domain, execute_message(command, arguments).c_str(), &result, 0) != 0) result = nullptr;
    return take_answer(result, command);
  }

 private:
  DomainRef domain_;
};

class LibvirtAgent : public GuestAgent {
 public:
  explicit LibvirtAgent(virDomainPtr domain) : domain_(domain) {}
  Result<boost::json::value> command(std::string_view name, const boost::json::object& arguments) override {
    return take_answer(libvirt().virDomainQemuAgentCommand(domain_.domain, execute_message(name, arguments).c_str(), 20, 0), name);
  }

 private:
  DomainRef domain_;
};

}  // namespace

std::string libvirt_error() {
  if (!libvirt_api()) return libvirt_api().error().describe();
  const char* message = libvirt().virGetLastErrorMessage();
  return message != nullptr ? message : "unknown libvirt error";
}

namespace {

// "%63ommand" is "command" to libvirt (it unescapes parameter names and values).
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      if (std::optional<uint64_t> byte = parse_u64_base(text.substr(i + 1, 2), 16)) {
        out += static_cast<char>(*byte);
        i += 2;
        continue;
      }
    }
    out += text[i] == '+' ? ' ' : text[i];
  }
  return out;
}

// Why libvirt must not see query parameter `name`; nullopt for the ones that only tune how it connects.
std::optional<std::string> unsafe_parameter_reason(const std::string& name) {
  for (const char* harmless : {"mode", "proxy", "no_tty", "sshauth", "tls_priority"})
    if (name == harmless) return std::nullopt;
  if (name == "command" || name == "netcat") return "its " + name + "= parameter names a program for libvirt to run";
  if (name == "socket") return "its socket= parameter names the socket libvirt talks to";
  if (name == "keyfile" || name == "pkipath" || name == "known_hosts")
    return "its " + name + "= parameter names files libvirt reads keys or certificates from";
  if (name == "no_verify" || name == "known_hosts_verify") return "its " + name + "= parameter turns off checking the server";
  return "its " + name + "= parameter is not one vperf passes to libvirt";
}

}  // namespace

std::optional<std::string> unsafe_libvirt_uri_reason(std::string_view uri) {
  const std::string quoted = "libvirt URI '" + std::string(uri) + "' is refused: ";
  const size_t colon = uri.find(':');
  const std::string scheme = to_lower(uri.substr(0, colon == std::string_view::npos ? 0 : colon));
  if (const size_t plus = scheme.find('+'); plus != std::string::npos && scheme.substr(plus + 1) == "ext")
    return quoted + "the ext transport runs the program its command= parameter names";
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : uri.substr(colon + 1);
  rest = rest.substr(0, rest.find('#'));
  std::string_view query;
  if (const size_t question = rest.find('?'); question != std::string_view::npos) {
    query = rest.substr(question + 1);
    rest = rest.substr(0, question);
  }
  // //[user@]host[:port]/path: a host that starts with '-' would be one of ssh's options.
  std::string_view path = rest;
  if (path.starts_with("//")) {
    path.remove_prefix(2);
    const std::string_view authority = path.substr(0, path.find('/'));
    path.remove_prefix(authority.size());
    const size_t at = authority.find('@');
    if (percent_decoded(authority.substr(at == std::string_view::npos ? 0 : at + 1)).starts_with('-'))
      return quoted + "its host name starts with '-'";
  }
  if (scheme == "test" && percent_decoded(path) != "/default")
    return quoted + "the test driver would load the file it names";
  for (std::string_view field : split(query, '&')) {
    for (std::string_view parameter : split(field, ';')) {
      if (parameter.empty()) continue;
      const size_t equals = parameter.find('=');
      const std::string name = to_lower(percent_decoded(parameter.substr(0, equals)));
      if (name == "name") {  // the URI the remote daemon opens: the same rules there
        if (std::optional<std::string> inner = unsafe_libvirt_uri_reason(
                percent_decoded(equals == std::string_view::npos ? std::string_view() : parameter.substr(equals + 1))))
          return quoted + "its name= parameter: " + *inner;
        continue;
      }
      if (std::optional<std::string> reason = unsafe_parameter_reason(name)) return quoted + *reason;
    }
  }
  return std::nullopt;
}

Result<LibvirtConnection> LibvirtConnection::open(const std::string& uri, LibvirtAccess access, LibvirtUriTrust trust) {
  if (trust == LibvirtUriTrust::checked)
    if (std::optional<std::string> unsafe = unsafe_libvirt_uri_reason(uri)) return Error{*unsafe};
  if (!libvirt_api()) return libvirt_api().error();
  libvirt().virSetErrorFunc(nullptr, quiet_errors);
  virConnectPtr connection =
      access == LibvirtAccess::read_only ? libvirt().virConnectOpenReadOnly(uri.c_str()) : libvirt().virConnectOpen(uri.c_str());
  if (connection == nullptr) return Error{"cannot connect to libvirt at " + uri + ": " + libvirt_error()};
  return LibvirtConnection(connection, uri);
}

LibvirtConnection::LibvirtConnection(LibvirtConnection&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)), uri_(std::move(other.uri_)) {}

LibvirtConnection::~LibvirtConnection() {
  if (connection_ != nullptr) libvirt().virConnectClose(connection_);
}

Result<std::vector<DomainSummary>> LibvirtConnection::domains() const {
  virDomainPtr* list = nullptr;
  int n = libvirt().virConnectListAllDomains(connection_, &list, 0);
  if (n < 0) return Error{"cannot list the domains at " + uri_ + ": " + libvirt_error()};
  std::vector<DomainSummary> out;
  for (int i = 0; i < n; ++i) {
    DomainRef d(list[i]);
    DomainSummary s;
    s.name = libvirt().virDomainGetName(d.domain);
    int state = 0, reason = 0;
    s.state = libvirt().virDomainGetState(d.domain, &state, &reason, 0) == 0 ? state_name(state) : "no state";
    unsigned int id = libvirt().virDomainGetID(d.domain);
    s.id = id == static_cast<unsigned int>(-1) ? -1 : static_cast<int>(id);
    out.push_back(std::move(s));
  }
  std::free(list);
  return out;
}

Result<virDomainPtr> LibvirtConnection::lookup(const std::string& domain) const {
  virDomainPtr d = libvirt().virDomainLookupByName(connection_, domain.c_str());
  if (d == nullptr) return Error{"no domain '" + domain + "' at " + uri_ + ": " + libvirt_error()};
  return d;
}

Result<std::string> LibvirtConnection::uuid(const std::string& domain) const {
  Result<virDomainPtr> d = lookup(domain);
  if (!d) return d.error();
  DomainRef ref(*d);
  char text[VIR_UUID_STRING_BUFLEN] = {};
  if (libvirt().virDomainGetUUIDString(ref.domain, text) != 0) return Error{"the UUID of domain '" + domain + "': " + libvirt_error()};
  return std::string(text);
}

Result<std::unique_ptr<VmMonitor>> LibvirtConnection::monitor(const std::string& domain) const {
  Result<virDomainPtr> d = lookup(domain);
  if (!d) return d.error();
  return std::unique_ptr<VmMonitor>(new LibvirtMonitor(*d));
}

Result<std::unique_ptr<GuestAgent>> LibvirtConnection::agent(const std::string& domain) const {
  Result<virDomainPtr> d = lookup(domain);
  if (!d) return d.error();
  return std::unique_ptr<GuestAgent>(new LibvirtAgent(*d));
}

bool libvirt_uri_is_remote(std::string_view uri) {
  // scheme://[user@]host[:port]/path?query: an empty authority is this host.
  const size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) return false;
  std::string_view rest = uri.substr(scheme_end + 3);
  return !rest.substr(0, rest.find_first_of("/?#")).empty();
}

Result<pid_t> LibvirtConnection::vmm_pid(const std::string& domain) const {
  // The URI libvirt resolved (an alias from libvirt.conf may stand for a remote one).
  std::string canonical = uri_;
  if (char* resolved = libvirt().virConnectGetURI(connection_); resolved != nullptr) {
    canonical = resolved;
    std::free(resolved);
  }
  if (libvirt_uri_is_remote(canonical))
    return Error{"domain '" + domain + "' at " + uri_ + " runs on another host: its VMM is not a process of this one"};
  Result<std::unique_ptr<VmMonitor>> domain_monitor = monitor(domain);
  if (!domain_monitor) return domain_monitor.error();
  Result<std::vector<VcpuThread>> vcpus = query_vcpus(**domain_monitor);
  if (!vcpus) return Error{"the vCPUs of domain '" + domain + "': " + vcpus.error().message};
  return vmm_pid_of(vcpus->front().thread_id);
}

}  // namespace vperf::guest
