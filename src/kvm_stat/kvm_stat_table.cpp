#include "kvm_stat/kvm_stat_table.h"

#include <cstdio>
#include <string_view>

namespace vperf::kvm {

namespace {

constexpr int kNameWidth = 20;  // perf's decode_str_len on x86

std::string_view column_title(const KvmExitTable& t) {
  switch (t.event) {
    case KvmReportEvent::Vmexit: return t.mode == KvmStatMode::GuestExits ? "VM-EXIT" : "USERSPACE-EXIT";
    case KvmReportEvent::Ioport: return "IO Port Access";
    case KvmReportEvent::Mmio: return "MMIO Access";
    case KvmReportEvent::Msr: return "MSR Access";
    case KvmReportEvent::Hypercall: return "HYPERCALL";
  }
  return "?";
}

bool has_times(const KvmExitTable& t) { return t.mode == KvmStatMode::GuestExits || t.times_recorded; }

std::string mode_line(const KvmExitTable& t) {
  if (t.mode == KvmStatMode::GuestExits)
    return "Mode: VM exits (kvm:kvm_exit to the vCPU's next kvm:kvm_entry, as perf kvm stat)";
  std::string line = "Mode: exits to user space (kvm_exit/kvm_entry never fired, e.g. nested KVM); ";
  if (!t.times_recorded) return line + "times not available (no KVM_RUN entries recorded): counts only";
  return line + "time = kvm_userspace_exit to the thread's next KVM_RUN; " + std::to_string(t.timed_exits) + " of " +
         std::to_string(t.exits) + " exits timed";
}

}  // namespace

void print_kvm_table(const KvmExitTable& t, const KvmTableContext& c, std::ostream& out) {
  char line[512];
  out << mode_line(t) << "\n\n\n";
  out << "Analyze events for " << (c.pids.empty() ? std::string("all VMs, ") : "pid(s) " + c.pids + ", ");
  if (c.vcpu)
    out << "VCPU " << *c.vcpu << ":\n\n";
  else
    out << "all VCPUs:\n\n";
  const bool times = has_times(t);
  std::string title(column_title(t));
  if (times)
    std::snprintf(line, sizeof line, "%*s %10s %9s %9s %11s %11s %16s \n\n", kNameWidth, title.c_str(), "Samples", "Samples%",
                  "Time%", "Min Time", "Max Time", "Avg time");
  else
    std::snprintf(line, sizeof line, "%*s %10s %9s \n\n", kNameWidth, title.c_str(), "Samples", "Samples%");
  out << line;
  for (const KvmExitRow& row : t.rows) {
    // perf's columns and arithmetic (print_result in builtin-kvm.c).
    std::snprintf(line, sizeof line, "%*s %10llu %8.2f%% ", kNameWidth, row.name.c_str(),
                  static_cast<unsigned long long>(row.count),
                  static_cast<double>(row.count) / static_cast<double>(t.total_count) * 100);
    out << line;
    if (times && row.time.n > 0) {
      std::snprintf(line, sizeof line, "%8.2f%% %9.2fus %9.2fus %9.2fus ( +-%7.2f%% )",
                    static_cast<double>(row.time.total) / static_cast<double>(t.total_time) * 100,
                    static_cast<double>(row.time.min) / 1000.0, static_cast<double>(row.time.max) / 1000.0,
                    static_cast<double>(row.time.total) / static_cast<double>(row.time.n) / 1000.0,
                    row.time.relative_stddev_percent());
      out << line;
    } else if (times) {
      std::snprintf(line, sizeof line, "%9s %11s %11s %11s", "-", "-", "-", "-");  // no exit of it was timed
      out << line;
    }
    out << '\n';
  }
  if (times)
    std::snprintf(line, sizeof line, "\nTotal Samples:%llu, Total events handled time:%.2fus.\n\n",
                  static_cast<unsigned long long>(t.total_count), static_cast<double>(t.total_time) / 1000.0);
  else
    std::snprintf(line, sizeof line, "\nTotal Samples:%llu.\n\n", static_cast<unsigned long long>(t.total_count));
  out << line;
  if (c.lost) out << "\nLost events: " << c.lost << "\n\n";
}

boost::json::value kvm_table_json(const KvmExitTable& t, const KvmTableContext& c) {
  boost::json::object o;
  o["mode"] = t.mode == KvmStatMode::GuestExits ? "vm-exits" : "userspace-exits";
  o["event"] = std::string(report_event_name(t.event));
  o["pids"] = c.pids.empty() ? boost::json::value(nullptr) : boost::json::value(c.pids);
  o["vcpu"] = c.vcpu ? boost::json::value(*c.vcpu) : boost::json::value(nullptr);
  const bool times = has_times(t);
  o["times"] = times;
  if (t.mode == KvmStatMode::UserspaceExits) {
    o["exits"] = t.exits;
    o["timed_exits"] = t.timed_exits;
  }
  boost::json::array rows;
  for (const KvmExitRow& row : t.rows) {
    boost::json::object r;
    r["name"] = row.name;
    r["samples"] = row.count;
    r["samples_percent"] = static_cast<double>(row.count) / static_cast<double>(t.total_count) * 100;
    if (times && row.time.n > 0) {
      r["timed"] = row.time.n;
      r["total_ns"] = row.time.total;
      if (t.total_time) r["time_percent"] = static_cast<double>(row.time.total) / static_cast<double>(t.total_time) * 100;
      r["min_ns"] = row.time.min;
      r["max_ns"] = row.time.max;
      r["avg_ns"] = static_cast<double>(row.time.total) / static_cast<double>(row.time.n);
      r["stddev_percent"] = row.time.relative_stddev_percent();
    }
    rows.push_back(std::move(r));
  }
  o["rows"] = std::move(rows);
  o["total_samples"] = t.total_count;
  if (times) o["total_time_ns"] = t.total_time;
  o["lost_events"] = c.lost;
  return o;
}

}  // namespace vperf::kvm
