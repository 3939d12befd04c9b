// vperf kvm list: see cmd_kvm_list.h.
#include "cli/cmd_kvm_list.h"

#include <boost/json.hpp>
#include <optional>
#include <vector>

#include "cli/command.h"
#include "cli/libvirt_connect.h"
#include "core/error.h"
#include "guest/libvirt_domain.h"
#include "output/json.h"
#include "output/table.h"

namespace vperf::cli {
namespace {

struct DomainRow {
  guest::DomainSummary summary;
  std::optional<pid_t> vmm_pid;
  std::vector<guest::VcpuThread> vcpus;
  bool agent = false;
  std::string monitor_error;  // why the vCPUs are unknown, when they are
};

DomainRow inspect(const guest::LibvirtConnection& connection, const guest::DomainSummary& summary) {
  DomainRow row{summary, {}, {}, false, {}};
  if (summary.id < 0) return row;  // not running: no monitor, no agent
  if (auto monitor = connection.monitor(summary.name); !monitor) {
    row.monitor_error = monitor.error().message;
  } else if (auto vcpus = guest::query_vcpus(**monitor); !vcpus) {
    row.monitor_error = vcpus.error().message;
  } else {
    row.vcpus = *vcpus;
    // None for a domain of another host (its pid is not one of this host's processes).
    if (auto pid = connection.vmm_pid(summary.name); pid) row.vmm_pid = *pid;
  }
  if (auto agent = connection.agent(summary.name); agent) row.agent = (*agent)->command("guest-ping", {}).ok();
  return row;
}

std::string thread_list(const std::vector<guest::VcpuThread>& vcpus) {
  std::string out;
  for (const guest::VcpuThread& v : vcpus) out += (out.empty() ? "" : ",") + std::to_string(v.thread_id);
  return out.empty() ? "-" : out;
}

}  // namespace

int run_kvm_list(const KvmListOptions& o, std::ostream& out) {
  // The list needs no more than a read-only connection (also open to users libvirt keeps
  // from changing domains); the vCPU threads, the VMM pid and the agent's answer need the
  // monitor and the agent, which libvirt serves on read-write connections only: one is opened
  // when a domain runs, and when it cannot be, those columns say why instead.
  const guest::LibvirtConnection listing = connect_to_libvirt(o.uri, guest::LibvirtAccess::read_only, o.allow_unsafe_uri);
  Result<std::vector<guest::DomainSummary>> domains = listing.domains();
  if (!domains) throw UserError(domains.error().message, "");
  std::optional<Result<guest::LibvirtConnection>> inspecting;
  std::vector<DomainRow> rows;
  for (const guest::DomainSummary& d : *domains) {
    if (d.id >= 0 && !inspecting)
      inspecting.emplace(guest::LibvirtConnection::open(
          o.uri, guest::LibvirtAccess::read_write,
          o.allow_unsafe_uri ? guest::LibvirtUriTrust::vouched_for : guest::LibvirtUriTrust::checked));
    if (d.id >= 0 && !*inspecting) rows.push_back(DomainRow{d, {}, {}, false, inspecting->error().message});
    else rows.push_back(inspect(inspecting && *inspecting ? **inspecting : listing, d));
  }
  if (o.json) {
    boost::json::array list;
    for (const DomainRow& r : rows) {
      boost::json::array threads;
      for (const guest::VcpuThread& v : r.vcpus) threads.push_back({{"vcpu", v.index}, {"thread_id", v.thread_id}});
      boost::json::object entry{{"name", r.summary.name},
                                {"state", r.summary.state},
                                {"id", r.summary.id},
                                {"vmm_pid", r.vmm_pid ? boost::json::value(*r.vmm_pid) : boost::json::value(nullptr)},
                                {"vcpu_threads", threads},
                                {"agent", r.agent}};
      if (!r.monitor_error.empty()) entry["monitor_error"] = r.monitor_error;
      list.push_back(entry);
    }
    output::print_json(out, boost::json::object{{"uri", o.uri}, {"domains", list}});
    return 0;
  }
  output::TextTable table({{"NAME"}, {"STATE"}, {"VMM PID", output::Align::Right}, {"VCPU THREADS"}, {"AGENT"}});
  for (const DomainRow& r : rows)
    table.add_row({r.summary.name, r.summary.state, r.vmm_pid ? std::to_string(*r.vmm_pid) : "-", thread_list(r.vcpus),
                   r.agent ? "yes" : "no"});
  table.render(out);
  return 0;
}

}  // namespace vperf::cli
