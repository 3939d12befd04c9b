#pragma once
// vperf kvm record --qmp/--domain from its request to the file (the user's view is
// cli/cmd_kvm_monitor_record.h): the VM's monitor and agent opened (QMP and QGA sockets, or a
// libvirt domain, or both: samples through the socket, pid and agent through libvirt), the
// vCPUs and the VMM found, the guest's kallsyms and modules fetched through the agent (cached
// per guest boot) or read from the files given, checked, and kept beside the file as
// FILE.guestmount/<VMM pid>/proc/; with -g the guest kernel's layout and the stack reader
// (ORC, frame pointers or scan); then record_through_monitor (monitor_session.h) and the
// summary lines. Everything is checked before the previous recording's kept symbols are
// removed. Failures are UserErrors.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "guest/guest_symbols.h"
#include "guest/kernel_stacks.h"
#include "guest/libvirt_domain.h"
#include "guest/recording/monitor_session.h"

namespace vperf::guest {

// Where a monitor recording keeps the guest symbols it fetched for FILE: a --guestmount
// directory beside it, FILE.guestmount/<VMM pid>/proc/{kallsyms,modules}, which the readers of
// FILE find by themselves (vperf kvm report, script, ...).
inline std::filesystem::path guestmount_beside(const std::filesystem::path& data_file) {
  return data_file.string() + ".guestmount";
}

struct VmRecordRequest {
  MonitorRecordRequest recording;  // the file, the tick rate, the duration, --pause, the command
  std::filesystem::path qmp;       // QEMU's QMP socket
  std::filesystem::path qga;       // the guest agent's socket (optional)
  std::string domain;              // or a libvirt domain: its monitor (unless qmp), pid and agent
  bool quiet = false;
  guest::GuestSymbolSources guests;  // --guestkallsyms/--guestmodules instead of the agent
  bool call_graph = false;           // -g: guest kernel stacks
  std::optional<guest::StackMethod> stack_method;  // --call-graph orc|fp|scan; unset: the best available
};

// Records; request.domain needs `libvirt`, opened read-write (a domain's monitor and agent are
// served on no other connection). Returns the host command's shell status, else 0.
int record_vm(const VmRecordRequest& request, const guest::LibvirtConnection* libvirt, std::ostream& err);

}  // namespace vperf::guest
