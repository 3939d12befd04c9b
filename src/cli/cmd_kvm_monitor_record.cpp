// vperf kvm record --qmp/--domain: see cmd_kvm_monitor_record.h; the recording is
// guest/recording/vm_record.h's.
#include "cli/cmd_kvm_monitor_record.h"

#include <cmath>
#include <optional>

#include "cli/libvirt_connect.h"

namespace vperf::cli {

int run_monitor_record(const MonitorRecordOptions& o, std::ostream& err) {
  if (o.request.recording.frequency <= 0 || !std::isfinite(o.request.recording.frequency))
    throw usage_error("-F must be above 0", "e.g. -F 1000");
  std::optional<guest::LibvirtConnection> libvirt;
  if (!o.request.domain.empty()) libvirt.emplace(connect_to_libvirt(o.uri, guest::LibvirtAccess::read_write, o.allow_unsafe_uri));
  return guest::record_vm(o.request, libvirt ? &*libvirt : nullptr, err);
}

}  // namespace vperf::cli
