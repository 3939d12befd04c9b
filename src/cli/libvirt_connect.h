#pragma once
// vperf kvm's --connect URI and --allow-unsafe-uri, and the libvirt connection they make; the
// domain a command names is then looked up in guest/domain_guest_mount.h. A URI that could run
// a program or pick files (guest/libvirt_domain.h) is a usage error unless --allow-unsafe-uri;
// a libvirt that does not answer is a UserError saying how to start it.
#include <string>

#include "cli/command.h"
#include "guest/libvirt_domain.h"

namespace vperf::cli {

// `names` ("--connect", "-c,--connect") for the URI and --allow-unsafe-uri on `sub`; `when`
// says what the URI goes with ("With --domain: ").
void add_connect_options(CLI::App& sub, const std::string& names, std::string& uri, bool& allow_unsafe_uri,
                         const std::string& when);

// The connection to `uri`, read-only unless the caller needs the domain's monitor or agent.
guest::LibvirtConnection connect_to_libvirt(const std::string& uri, guest::LibvirtAccess access, bool allow_unsafe_uri);

}  // namespace vperf::cli
