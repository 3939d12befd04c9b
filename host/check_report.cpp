#include "host/check_report.h"

#include <bit>

#include "core/strings.h"
#include "host/arm_check_report.h"
#include "host/verdicts.h"
#include "output/table.h"

namespace vperf::host {

namespace json = boost::json;

namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string core_type_name(uint8_t type) {
  switch (type) {
    case 0x20: return "Atom (E-core)";
    case 0x40: return "Core (P-core)";
    default: return hex(type);
  }
}

std::string outcome_cell(const PerfOpenOutcome& o) {
  if (!o.opened) return "failed: " + errno_text(o.errno_value);
  if (o.count) return "ok, counted " + std::to_string(*o.count);
  return "opened, read failed: " + o.error;
}

std::string hypervisor_label(const HypervisorSignature& s) {
  return s.vendor.empty() ? "unknown hypervisor" : s.vendor;
}

void render_cpu(const CheckResult& r, std::ostream& out) {
  const CpuIdentity& c = r.cpuid.cpu;
  out << "CPU\n";
  out << "  vendor      " << c.vendor << "\n";
  if (!c.brand.empty()) out << "  brand       " << c.brand << "\n";
  out << "  family      " << c.family << " (" << hex(c.family) << "), model " << c.model << " (" << hex(c.model)
      << "), stepping " << c.stepping << ", signature " << hex_padded(c.signature, 8) << "\n";
  out << "  max leaf    " << hex(c.max_basic_leaf) << " basic, "
      << (c.max_extended_leaf ? hex(c.max_extended_leaf) : std::string("none")) << " extended\n";
  if (c.hybrid_core_type) out << "  core type   " << core_type_name(*c.hybrid_core_type) << " (leaf 0x1A)\n";
  out << "  PDCM " << yes_no(c.pdcm) << ", DS " << yes_no(c.ds) << ", APERF/MPERF " << yes_no(c.aperf_mperf)
      << ", VMX " << yes_no(c.vmx) << ", SVM " << yes_no(c.svm) << "\n\n";
}

void render_hypervisor(const CheckResult& r, std::ostream& out) {
  const HypervisorInfo& h = r.cpuid.hypervisor;
  out << "Hypervisor\n";
  out << "  CPUID.1.ECX[31] hypervisor bit: " << (h.cpuid_bit ? "set" : "clear") << "\n";
  for (const auto& s : h.signatures) {
    out << "  " << hex_padded(s.base, 8) << "  \"" << s.signature << "\"  " << hypervisor_label(s) << ", max leaf "
        << hex(s.max_leaf);
    if (!s.interface_id.empty()) out << ", interface \"" << s.interface_id << "\"";
    else if (s.interface_eax) out << ", " << hex(s.base + 1) << " EAX " << hex_padded(s.interface_eax, 8);
    out << "\n";
  }
  if (const HypervisorSignature* p = h.primary_signature()) {
    out << "  => running under " << hypervisor_label(*p);
    if (p->vendor == "VMware" && p->interface_id == "Hv#1") out << " (which also offers the Hyper-V interface)";
    out << "; the signature names the interface a VMM offers (VirtualBox can pose as KVM)\n\n";
  } else {
    out << (h.cpuid_bit ? "  => a hypervisor bit without a known signature\n\n" : "  => bare metal (no hypervisor)\n\n");
  }
}

void render_arch(const CheckResult& r, std::ostream& out) {
  const ArchPerfmon& a = r.cpuid.arch;
  out << "Architectural PMU\n";
  if (!a.leaf_present) {
    out << "  leaf 0xA: not reported (max basic leaf " << hex(r.cpuid.cpu.max_basic_leaf) << ")\n";
  } else {
    out << "  leaf 0xA: eax=" << hex_padded(a.eax, 8) << " ebx=" << hex_padded(a.ebx, 8) << " ecx=" << hex_padded(a.ecx, 8)
        << " edx=" << hex_padded(a.edx, 8) << "\n";
    if (a.version == 0) {
      out << "  version 0: no architectural performance monitoring: 0 GP counters, 0 fixed counters\n";
    } else {
      out << "  version " << a.version << ": " << a.gp_counters << " GP counters x " << a.gp_width << " bits, "
          << a.fixed_counters << " fixed x " << a.fixed_width << " bits";
      if (a.fixed_counter_mask) out << " (fixed counter mask " << hex(a.fixed_counter_mask) << ")";
      if (a.anythread_deprecated) out << ", AnyThread deprecated";
      out << "\n  events (EBX length " << a.ebx_length << "): available "
          << (a.available_events.empty() ? "none" : join(a.available_events, ", ")) << "\n";
      out << "  unavailable: " << (a.unavailable_events.empty() ? "none" : join(a.unavailable_events, ", ")) << "\n";
    }
  }
  if (const auto& x = r.cpuid.arch_ext) {
    out << "  leaf 0x23: subleaves " << hex(x->subleaf_mask);
    if (x->gp_counter_bitmap)
      out << ", GP counter bitmap " << hex(*x->gp_counter_bitmap) << " (" << std::popcount(*x->gp_counter_bitmap)
          << "), fixed bitmap " << hex(x->fixed_counter_bitmap.value_or(0));
    if (x->arch_events_bitmap)
      out << ", events " << hex(*x->arch_events_bitmap) << " (unavailable: "
          << (x->unavailable_events.empty() ? "none" : join(x->unavailable_events, ", ")) << ")";
    if (x->auto_counter_reload) out << ", auto counter reload";
    out << "\n";
  }
  if (const auto& amd = r.cpuid.amd) {
    out << "  AMD: PerfCtrExtCore " << yes_no(amd->perf_ctr_ext_core) << ", PerfCtrExtNB " << yes_no(amd->perf_ctr_ext_nb)
        << ", PerfCtrExtLLC " << yes_no(amd->perf_ctr_ext_llc) << ", IBS " << yes_no(amd->ibs) << "\n";
    out << "  AMD: 0x80000022 " << (amd->leaf_80000022_present ? "present" : "absent") << ", PerfMonV2 "
        << yes_no(amd->perfmon_v2);
    if (amd->perfmon_v2)
      out << " (" << amd->num_core_counters_v2 << " core, " << amd->num_nb_counters << " NB, " << amd->num_umc_counters
          << " UMC counters, LBR stack " << amd->lbr_stack_size << ")";
    out << "; core counters: " << amd->core_counters() << "\n";
  }
  out << "\n";
}

std::string group_capacity_text(const PerfProbeReport& perf) {
  if (!perf.group_capacity) return "cycles does not open";
  std::string text = std::to_string(*perf.group_capacity) + " cycles events";
  if (perf.group_capacity_limited) return text + " or more (the probe's limit)";
  return text + " (member " + std::to_string(*perf.group_capacity + 1) + ": " + errno_text(perf.group_refusal_errno) +
         ")";
}

void render_live(const LiveProbes& live, bool arm64, std::ostream& out) {
  out << "Live probes (this machine" << (live.privileged ? ", as root" : "") << ")\n";
  out << "  perf_event_open, user space only:\n";
  output::TextTable table({{""}, {""}, {""}});
  table.add_row({"cpu-clock", outcome_cell(live.perf.software_control), "software control"});
  for (const auto& p : live.perf.hardware) table.add_row({p.name, outcome_cell(p.outcome), p.counter});
  table.render(out, "    ");
  out << "  precise_ip on cycles: " << precise_levels_text(live.perf)
      << (arm64 ? " (arm64's PMU driver takes any level and ignores it: precision is SPE's)" : "") << "\n";
  out << "  branch stack (PERF_SAMPLE_BRANCH_STACK): "
      << (live.perf.branch_stack.opened ? "ok" : errno_text(live.perf.branch_stack.errno_value)) << "\n";
  out << "  one group holds: " << group_capacity_text(live.perf) << "\n";
  for (const auto& p : live.perf.sampling) out << "  sampling: " << sampling_probe_text(p) << "\n";
  if (!live.msrs.empty()) out << "  MSRs on CPU 0:\n";
  for (const auto& m : live.msrs) {
    out << "    " << m.name << " (" << hex(m.address) << "): ";
    if (m.value) out << "readable, " << hex(*m.value);
    else out << m.error << (m.hint.empty() ? "" : " (hint: " + m.hint + ")");
    out << "\n";
  }
  out << "  " << live.kvm.path << ": "
      << (live.kvm.api_version ? "KVM_GET_API_VERSION = " + std::to_string(*live.kvm.api_version) : live.kvm.error) << "\n\n";

  out << "PMUs in sysfs\n";
  output::TextTable pmus({{"NAME"}, {"KIND"}, {"TYPE", output::Align::Right}, {"EVENTS"}, {"CAPS"}});
  for (const auto& p : live.pmus) {
    std::vector<std::string> caps;
    for (const auto& [k, v] : p.caps) caps.push_back(k + "=" + v);
    pmus.add_row({p.name, std::string(pmu_kind_name(p.kind)), std::to_string(p.type),
                  p.events.empty() ? "-" : join(p.events, " "), caps.empty() ? "-" : join(caps, " ")});
  }
  pmus.render(out, "  ");
  bool has_core = live.core_pmu() != nullptr;
  if (!has_core) out << "  no core PMU (cpu, cpu_core, armv8_*): the kernel registered no hardware PMU driver\n";
  out << "\n";

  const KernelSettings& k = live.kernel;
  out << "Kernel settings\n";
  out << "  perf_event_paranoid  "
      << (k.perf_event_paranoid ? std::to_string(*k.perf_event_paranoid) : k.perf_event_paranoid_error) << "\n";
  out << "  kptr_restrict        " << (k.kptr_restrict ? std::to_string(*k.kptr_restrict) : k.kptr_restrict_error);
  if (k.kallsyms_addresses_visible)
    out << " (/proc/kallsyms shows " << (*k.kallsyms_addresses_visible ? "real addresses" : "zeros") << " to us)";
  out << "\n";
  const TracefsState& t = k.tracefs;
  out << "  tracefs              "
      << (t.mount_point ? t.mount_point->string() : t.mountable ? "not mounted (mountable)" : "not available") << "\n";
  if (t.mount_point) {
    out << "  tracing              events/ " << yes_no(t.events_dir) << ", uprobe_events " << yes_no(t.uprobe_events)
        << ", kprobe_events " << yes_no(t.kprobe_events) << "\n";
    out << "  available tracers    " << (t.available_tracers.empty() ? "none" : join(t.available_tracers, " ")) << "\n";
  }
  out << "\n";
}

void render_disagreements(const CheckResult& r, std::ostream& out) {
  if (!r.live) return;
  out << "Claims vs. live probes\n";
  if (!r.libpfm_present_pmus.empty())
    out << "  libpfm4 says present: " << join(r.libpfm_present_pmus, ", ") << "\n";
  if (r.disagreements.empty()) out << "  no disagreements\n";
  for (const auto& d : r.disagreements)
    out << "  " << d.claim_source << " says " << d.claim << ", but " << d.live_finding << "\n";
  out << "\n";
}

void render_verdicts(const CheckResult& r, std::ostream& out) {
  out << "Verdicts" << (r.live ? "" : " (predicted from CPUID; kernel facilities cannot be known from a dump)") << "\n";
  for (const auto& v : r.verdicts) {
    std::string name = v.name;
    name.resize(std::max<size_t>(name.size(), 16), ' ');
    out << "  " << name << (v.available ? "yes" : "NO ") << "  " << v.reason << "\n";
    if (!v.fix.empty()) out << "  " << std::string(16, ' ') << "     fix: " << v.fix << "\n";
  }
}

json::value optional_int(const std::optional<int>& v) { return v ? json::value(*v) : json::value(nullptr); }

json::array string_array(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

json::object outcome_json(const PerfOpenOutcome& o) {
  json::object j;
  j["opened"] = o.opened;
  j["errno"] = o.errno_value ? json::value(errno_text(o.errno_value)) : json::value(nullptr);
  j["count"] = o.count ? json::value(*o.count) : json::value(nullptr);
  return j;
}

json::object live_json(const LiveProbes& live) {
  json::object j;
  j["privileged"] = live.privileged;
  json::object perf;
  perf["software_control"] = outcome_json(live.perf.software_control);
  json::array events;
  for (const auto& p : live.perf.hardware) {
    json::object e = outcome_json(p.outcome);
    e["name"] = p.name;
    e["counter"] = p.counter;
    events.push_back(std::move(e));
  }
  perf["hardware_events"] = std::move(events);
  json::array precise;
  for (const auto& o : live.perf.precise) precise.push_back(outcome_json(o));
  perf["precise_ip"] = std::move(precise);
  perf["max_precise"] = live.perf.max_precise();
  perf["branch_stack"] = outcome_json(live.perf.branch_stack);
  perf["group_capacity"] = live.perf.group_capacity ? json::value(*live.perf.group_capacity) : json::value(nullptr);
  perf["group_capacity_limited"] = live.perf.group_capacity_limited;
  json::array sampling;
  for (const auto& p : live.perf.sampling) {
    json::object e = outcome_json(p.outcome);
    e["event"] = p.event;
    e["period"] = p.period;
    e["samples"] = p.samples ? json::value(*p.samples) : json::value(nullptr);
    e["expected"] = p.expected();
    e["throttled"] = p.throttled;
    e["lost"] = p.lost;
    std::optional<bool> follows = p.follows_period();
    e["follows_period"] = follows ? json::value(*follows) : json::value(nullptr);
    e["error"] = p.ring_error;
    sampling.push_back(std::move(e));
  }
  perf["sampling"] = std::move(sampling);
  j["perf"] = std::move(perf);

  json::array msrs;
  for (const auto& m : live.msrs) {
    json::object e;
    e["name"] = m.name;
    e["address"] = hex(m.address);
    e["readable"] = m.value.has_value();
    e["value"] = m.value ? json::value(hex(*m.value)) : json::value(nullptr);
    e["error"] = m.value ? json::value(nullptr) : json::value(m.error);
    e["hint"] = m.hint;
    msrs.push_back(std::move(e));
  }
  j["msr"] = std::move(msrs);

  json::object kvm;
  kvm["path"] = live.kvm.path;
  kvm["api_version"] = optional_int(live.kvm.api_version);
  kvm["error"] = live.kvm.api_version ? json::value(nullptr) : json::value(live.kvm.error);
  j["kvm"] = std::move(kvm);

  json::array pmus;
  for (const auto& p : live.pmus) {
    json::object e;
    e["name"] = p.name;
    e["kind"] = std::string(pmu_kind_name(p.kind));
    e["type"] = p.type;
    e["events"] = string_array(p.events);
    json::object caps;
    for (const auto& [k, v] : p.caps) caps[k] = v;
    e["caps"] = std::move(caps);
    pmus.push_back(std::move(e));
  }
  j["pmus"] = std::move(pmus);

  const KernelSettings& k = live.kernel;
  json::object kernel;
  kernel["perf_event_paranoid"] = optional_int(k.perf_event_paranoid);
  kernel["kptr_restrict"] = optional_int(k.kptr_restrict);
  kernel["kallsyms_addresses_visible"] =
      k.kallsyms_addresses_visible ? json::value(*k.kallsyms_addresses_visible) : json::value(nullptr);
  json::object tracefs;
  tracefs["mount_point"] = k.tracefs.mount_point ? json::value(k.tracefs.mount_point->string()) : json::value(nullptr);
  tracefs["mountable"] = k.tracefs.mountable;
  tracefs["events"] = k.tracefs.events_dir;
  tracefs["uprobe_events"] = k.tracefs.uprobe_events;
  tracefs["kprobe_events"] = k.tracefs.kprobe_events;
  tracefs["available_tracers"] = string_array(k.tracefs.available_tracers);
  kernel["tracefs"] = std::move(tracefs);
  j["kernel"] = std::move(kernel);
  return j;
}

}  // namespace

// The answer first, in one paragraph; the evidence follows.
static void render_summary(const CheckResult& r, std::ostream& out) {
  const HypervisorSignature* hv = r.cpuid.hypervisor.primary_signature();
  if (r.arm)
    out << "Summary: " << arm_platform_summary(*r.arm) << ", " << r.arm->summary();
  else
    out << "Summary: " << (hv ? "hypervisor " + hypervisor_label(*hv) : std::string("bare metal")) << ", ";
  if (r.arm) {
    if (r.live && r.live->perf.group_capacity)
      out << ", a group holds " << *r.live->perf.group_capacity << " counters";
  } else if (r.cpuid.amd)
    out << r.cpuid.amd->core_counters() << " AMD core counters by CPUID";
  else
    out << r.cpuid.arch.gp_counters << " GP counters (CPUID leaf 0xA version " << r.cpuid.arch.version << ")";
  if (r.live) out << ", hardware perf events " << (r.live->perf.any_hardware_opened() ? "open" : "do not open");
  out << ".\n";
  std::vector<std::string> yes, no;
  for (const auto& v : r.verdicts) (v.available ? yes : no).push_back(v.name);
  out << "  " << (r.live ? "measurable here: " : "predicted measurable: ") << (yes.empty() ? "nothing" : join(yes, ", "))
      << "\n  " << (r.live ? "not measurable: " : "not measurable or unknown: ") << (no.empty() ? "nothing" : join(no, ", "))
      << "\n\n";
}

void render_check_text(const CheckResult& r, std::ostream& out) {
  if (r.arm)
    out << "vperf check: arm64, MIDR from " << (r.arm->midr_source.empty() ? "nowhere" : r.arm->midr_source) << "; ";
  else
    out << "vperf check: CPUID from " << r.cpuid.source << "; ";
  out << (r.live ? "live probes on this machine\n"
                 : "no live probes (they would describe this machine, not the dumped one)\n");
  render_summary(r, out);
  if (r.arm) {
    render_arm_cpu(*r.arm, out);
  } else {
    render_cpu(r, out);
    render_hypervisor(r, out);
    render_arch(r, out);
  }
  if (r.live) render_live(*r.live, r.arm.has_value(), out);
  render_disagreements(r, out);
  render_verdicts(r, out);
}

namespace {

json::object cpu_json(const CpuIdentity& c) {
  json::object cpu;
  cpu["vendor"] = c.vendor;
  cpu["brand"] = c.brand;
  cpu["family"] = c.family;
  cpu["model"] = c.model;
  cpu["stepping"] = c.stepping;
  cpu["signature"] = hex_padded(c.signature, 8);
  cpu["max_basic_leaf"] = hex(c.max_basic_leaf);
  cpu["max_extended_leaf"] = hex(c.max_extended_leaf);
  cpu["hybrid_core_type"] = c.hybrid_core_type ? json::value(core_type_name(*c.hybrid_core_type)) : json::value(nullptr);
  cpu["pdcm"] = c.pdcm;
  cpu["ds"] = c.ds;
  cpu["aperf_mperf"] = c.aperf_mperf;
  cpu["vmx"] = c.vmx;
  cpu["svm"] = c.svm;
  return cpu;
}

json::object hypervisor_json(const HypervisorInfo& h) {
  json::object hv;
  const HypervisorSignature* p = h.primary_signature();
  hv["vendor"] = p ? json::value(p->vendor.empty() ? p->signature : p->vendor) : json::value(nullptr);
  hv["cpuid_bit"] = h.cpuid_bit;
  hv["signature"] = p ? json::value(p->signature) : json::value(nullptr);
  hv["base"] = p ? json::value(hex(p->base)) : json::value(nullptr);
  hv["max_leaf"] = p ? json::value(hex(p->max_leaf)) : json::value(nullptr);
  hv["interface_id"] = p && !p->interface_id.empty() ? json::value(p->interface_id) : json::value(nullptr);
  json::array sigs;
  for (const auto& s : h.signatures) {
    json::object e;
    e["base"] = hex(s.base);
    e["signature"] = s.signature;
    e["vendor"] = s.vendor.empty() ? json::value(nullptr) : json::value(s.vendor);
    e["max_leaf"] = hex(s.max_leaf);
    e["interface_eax"] = hex_padded(s.interface_eax, 8);
    sigs.push_back(std::move(e));
  }
  hv["signatures"] = std::move(sigs);
  return hv;
}

json::object arch_perfmon_json(const ArchPerfmon& a) {
  json::object arch;
  arch["leaf_present"] = a.leaf_present;
  arch["version"] = a.version;
  arch["gp_counters"] = a.gp_counters;
  arch["gp_width"] = a.gp_width;
  arch["ebx_length"] = a.ebx_length;
  arch["unavailable_events"] = string_array(a.unavailable_events);
  arch["available_events"] = string_array(a.available_events);
  arch["fixed_counters"] = a.fixed_counters;
  arch["fixed_width"] = a.fixed_width;
  arch["fixed_counter_mask"] = hex(a.fixed_counter_mask);
  arch["anythread_deprecated"] = a.anythread_deprecated;
  arch["raw"] = json::object{{"eax", hex_padded(a.eax, 8)}, {"ebx", hex_padded(a.ebx, 8)},
                             {"ecx", hex_padded(a.ecx, 8)}, {"edx", hex_padded(a.edx, 8)}};
  return arch;
}

json::value arch_perfmon_ext_json(const std::optional<ArchPerfmonExt>& x) {
  if (!x) return nullptr;
  json::object e;
  e["subleaf_mask"] = hex(x->subleaf_mask);
  e["umask2"] = x->umask2;
  e["eq_bit"] = x->eq_bit;
  e["gp_counter_bitmap"] = x->gp_counter_bitmap ? json::value(hex(*x->gp_counter_bitmap)) : json::value(nullptr);
  e["gp_counters"] = x->gp_counter_bitmap ? json::value(std::popcount(*x->gp_counter_bitmap)) : json::value(nullptr);
  e["fixed_counter_bitmap"] = x->fixed_counter_bitmap ? json::value(hex(*x->fixed_counter_bitmap)) : json::value(nullptr);
  e["auto_counter_reload"] = x->auto_counter_reload.has_value();
  e["arch_events_bitmap"] = x->arch_events_bitmap ? json::value(hex(*x->arch_events_bitmap)) : json::value(nullptr);
  e["unavailable_events"] = string_array(x->unavailable_events);
  return e;
}

json::value amd_perfmon_json(const std::optional<AmdPerfmon>& amd) {
  if (!amd) return nullptr;
  json::object e;
  e["perf_ctr_ext_core"] = amd->perf_ctr_ext_core;
  e["perf_ctr_ext_nb"] = amd->perf_ctr_ext_nb;
  e["perf_ctr_ext_llc"] = amd->perf_ctr_ext_llc;
  e["ibs"] = amd->ibs;
  e["leaf_80000022_present"] = amd->leaf_80000022_present;
  e["perfmon_v2"] = amd->perfmon_v2;
  e["core_counters"] = amd->core_counters();
  e["nb_counters"] = amd->num_nb_counters;
  e["umc_counters"] = amd->num_umc_counters;
  e["lbr_stack_size"] = amd->lbr_stack_size;
  return e;
}

json::object verdicts_json(const std::vector<Verdict>& verdicts) {
  json::object out;
  for (const auto& v : verdicts) {
    json::object e;
    e["available"] = v.available;
    e["reason"] = v.reason;
    e["fix"] = v.fix;  // "" when nothing needs fixing
    e["basis"] = std::string(verdict_basis_name(v.basis));
    e["question"] = v.question;
    out[v.name] = std::move(e);
  }
  return out;
}

}  // namespace

json::value check_to_json(const CheckResult& r) {
  json::object root;
  root["source"] = json::object{{"cpuid", r.arm ? "none" : r.cpuid_from_dump ? "dump" : "live"},
                                {"description", r.arm ? r.arm->midr_source : r.cpuid.source},
                                {"live_probes", r.live.has_value()}};
  // arm64 has no CPUID: its facts are under "arm", and the x86 objects are null.
  root["cpu"] = r.arm ? json::value(nullptr) : json::value(cpu_json(r.cpuid.cpu));
  root["hypervisor"] = r.arm ? json::value(nullptr) : json::value(hypervisor_json(r.cpuid.hypervisor));
  root["arch_perfmon"] = r.arm ? json::value(nullptr) : json::value(arch_perfmon_json(r.cpuid.arch));
  root["arch_perfmon_ext"] = arch_perfmon_ext_json(r.cpuid.arch_ext);
  root["amd_perfmon"] = amd_perfmon_json(r.cpuid.amd);
  root["arm"] = r.arm ? json::value(arm_cpu_json(*r.arm)) : json::value(nullptr);
  root["live"] = r.live ? json::value(live_json(*r.live)) : json::value(nullptr);
  root["libpfm_present_pmus"] = string_array(r.libpfm_present_pmus);
  json::array dis;
  for (const auto& d : r.disagreements)
    dis.push_back(json::object{{"source", d.claim_source}, {"claim", d.claim}, {"live", d.live_finding}});
  root["disagreements"] = std::move(dis);
  root["verdicts"] = verdicts_json(r.verdicts);
  return root;
}

}  // namespace vperf::host
