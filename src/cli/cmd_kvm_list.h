#pragma once
// vperf kvm list [-c URI] [--json]: the domains libvirt knows at URI (default qemu:///system;
// qemu+ssh://HOST/system for another host), each with its state, its VMM's pid (a local
// domain only: a URI with a host part is remote, even 127.0.0.1, and its VMM's pid is that
// host's, so it shows as "-" / JSON null), its vCPU threads (QMP query-cpus-fast through
// libvirt; thread ids of the domain's host) and whether its guest agent answers (guest-ping):
// what `vperf kvm record --domain` can sample and fetch symbols from.
#include <ostream>
#include <string>

namespace vperf::cli {

struct KvmListOptions {
  std::string uri = "qemu:///system";
  bool json = false;
  bool allow_unsafe_uri = false;  // --allow-unsafe-uri
};

int run_kvm_list(const KvmListOptions& options, std::ostream& out);

}  // namespace vperf::cli
