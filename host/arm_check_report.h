#pragma once
// The arm64 part of `vperf check`'s report: the cores by MIDR and the platform, as text and
// JSON (the x86 CPUID sections' counterpart; check_report.cpp puts it in place).
#include <boost/json.hpp>

#include <ostream>
#include <string>

#include "host/arm_cpu.h"

namespace vperf::host {

// "virtual machine under KVM (QEMU virt machine)", "bare metal (AWS EC2 c7g.metal)" ...
std::string arm_platform_summary(const ArmCpuReport& arm);
void render_arm_cpu(const ArmCpuReport& arm, std::ostream& out);
boost::json::object arm_cpu_json(const ArmCpuReport& arm);

}  // namespace vperf::host
