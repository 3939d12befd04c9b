#include "host/arm_check_report.h"

#include "core/strings.h"

namespace vperf::host {

namespace json = boost::json;

namespace {

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    parts.push_back(i == j ? std::to_string(cpus[i]) : std::to_string(cpus[i]) + "-" + std::to_string(cpus[j]));
    i = j + 1;
  }
  return join(parts, ",");
}

std::string or_none(const std::string& s) { return s.empty() ? "-" : s; }

}  // namespace

std::string arm_platform_summary(const ArmCpuReport& arm) {
  const ArmPlatform& p = arm.platform;
  std::string s(arm_platform_kind_name(p.kind));
  if (!p.hypervisor.empty()) s += " under " + p.hypervisor;
  if (!p.machine.empty()) s += " (" + p.machine + ")";
  return s;
}

void render_arm_cpu(const ArmCpuReport& arm, std::ostream& out) {
  out << "CPU (arm64)\n";
  if (arm.cores.empty()) out << "  MIDR        " << arm.midr_error << "\n";
  for (const ArmCoreGroup& g : arm.cores) {
    const Midr m = g.midr;
    out << "  MIDR        " << hex_padded(m.value, 8) << "  " << describe_midr(m) << " on CPU " << cpu_list(g.cpus)
        << "\n";
    std::string_view implementer = arm_implementer_name(m.implementer());
    out << "              implementer " << hex(m.implementer()) << (implementer.empty() ? "" : " (" + std::string(implementer) + ")")
        << ", variant " << m.variant() << ", architecture " << hex(m.architecture()) << ", part " << hex(m.part())
        << ", revision " << m.revision() << "\n";
    if (const ArmCoreModel* core = find_arm_core(m); core && !core->where.empty())
      out << "              found in " << core->where << "\n";
  }
  out << "\nPlatform\n";
  const ArmPlatform& p = arm.platform;
  out << "  DMI         " << or_none(p.dmi_vendor) << " / " << or_none(p.dmi_product) << "\n";
  out << "  device tree " << or_none(p.dt_compatible) << (p.dt_hypervisor.empty() ? "" : ", hypervisor " + p.dt_hypervisor)
      << "\n";
  if (!p.sys_hypervisor_type.empty()) out << "  /sys/hypervisor/type " << p.sys_hypervisor_type << "\n";
  out << "  => " << arm_platform_summary(arm) << ": " << p.evidence << "\n\n";
}

json::object arm_cpu_json(const ArmCpuReport& arm) {
  json::object j;
  j["midr_source"] = arm.midr_source;
  j["midr_error"] = arm.midr_error;
  json::array cores;
  for (const ArmCoreGroup& g : arm.cores) {
    json::object c;
    c["midr"] = hex_padded(g.midr.value, 8);
    c["implementer"] = hex(g.midr.implementer());
    c["implementer_name"] = std::string(arm_implementer_name(g.midr.implementer()));
    c["part"] = hex(g.midr.part());
    c["variant"] = g.midr.variant();
    c["revision"] = g.midr.revision();
    const ArmCoreModel* core = find_arm_core(g.midr);
    c["name"] = core ? json::value(std::string(core->name)) : json::value(nullptr);
    c["description"] = describe_midr(g.midr);
    json::array cpus;
    for (unsigned cpu : g.cpus) cpus.emplace_back(cpu);
    c["cpus"] = std::move(cpus);
    cores.push_back(std::move(c));
  }
  j["cores"] = std::move(cores);
  const ArmPlatform& p = arm.platform;
  j["platform"] = json::object{{"kind", std::string(arm_platform_kind_name(p.kind))},
                               {"hypervisor", p.hypervisor.empty() ? json::value(nullptr) : json::value(p.hypervisor)},
                               {"machine", p.machine},
                               {"evidence", p.evidence},
                               {"dmi_vendor", p.dmi_vendor},
                               {"dmi_product", p.dmi_product},
                               {"device_tree_compatible", p.dt_compatible},
                               {"device_tree_hypervisor", p.dt_hypervisor},
                               {"sys_hypervisor_type", p.sys_hypervisor_type}};
  return j;
}

}  // namespace vperf::host
