#pragma once
// vperf kvm list [-c URI] [--json]: the domains libvirt knows at URI (default qemu:///system;
// qemu+ssh://HOST/system for another host), each with its state, its VMM's pid (a local
// domain), its vCPU threads (QMP query-cpus-fast through libvirt) and whether its guest agent
// answers (guest-ping): what `vperf kvm record --domain` can sample and fetch symbols from.
#include <ostream>
#include <string>

namespace vperf::cli {

struct KvmListOptions {
  std::string uri = "qemu:///system";
  bool json = false;
};

int run_kvm_list(const KvmListOptions& options, std::ostream& out);

}  // namespace vperf::cli
