// vperf kvm's libvirt connection options: see libvirt_connect.h.
#include "cli/libvirt_connect.h"

#include <optional>
#include <utility>

#include "core/error.h"

namespace vperf::cli {

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

}  // namespace vperf::cli
