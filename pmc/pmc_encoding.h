#pragma once
// The raw encoding of a core PMC event and the two ways perf spells it.
//
// Layout of perf_event_attr.config for the x86 "cpu" PMU, as the kernel publishes it in
// /sys/bus/event_source/devices/cpu/format/ (Intel SDM vol. 3B, IA32_PERFEVTSELx; AMD APM
// vol. 2, PERF_CTL):
//   event     config:0-7        (AMD also config:32-35: event select bits 8-11)
//   umask     config:8-15
//   edge      config:18         pc config:19, any config:21 (Intel, thread-any, up to SKL)
//   inv       config:23
//   cmask     config:24-31
//   in_tx     config:32         in_tx_cp config:33 (Intel TSX, Haswell and later)
// config1 carries the extra MSR that some events program besides the event select:
//   offcore_rsp  config1:0-63   MSR_OFFCORE_RSP_0/1 (0x1a6/0x1a7)
//   ldlat        config1:0-15   MSR_PEBS_LD_LAT_THRESHOLD (0x3f6)
//   frontend     config1:0-23   MSR_PEBS_FRONTEND (0x3f7)
// Which of the three applies depends on the event, so it is looked up in small tables below.
//
// arm64's PMUv3 ("armv8_pmuv3", "armv8_pmuv3_0" on ACPI servers; drivers/perf/arm_pmuv3.c):
//   event     config:0-15       the common and implementation-defined event numbers
//   long      config1:0         a chained 64-bit counter; rdpmc config1:1
// No umask, cmask, inv or edge: an arm64 event is its number.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "events/sysfs_pmu.h"

namespace vperf::events {

// perf_event_attr.type for a raw core PMU event (linux/perf_event.h PERF_TYPE_RAW). Kept here
// so that headers need not pull in the kernel's perf_event.h next to libpfm4's copy of it.
inline constexpr uint32_t kPerfTypeRaw = 4;

enum class CoreLayout { Intel, Amd, Arm };
// The core PMU's name in perf's syntax for a layout: "cpu", or "armv8_pmuv3_0", the name ACPI
// servers (Graviton, Altra, Cobalt) give it; device-tree machines say "armv8_pmuv3".
std::string_view core_pmu_name(CoreLayout layout);

struct CoreEventFields {
  uint32_t event = 0;  // 8 bits on Intel, 12 on AMD, 16 on Arm
  uint32_t umask = 0;
  bool edge = false;
  bool pin_control = false;  // pc
  bool any_thread = false;
  bool invert = false;
  uint32_t cmask = 0;
  bool in_tx = false;
  bool in_tx_checkpointed = false;
  bool operator==(const CoreEventFields&) const = default;
};

CoreEventFields split_core_config(uint64_t config, CoreLayout layout);
uint64_t join_core_config(const CoreEventFields& fields, CoreLayout layout);

// Name of the "cpu" PMU format term that carries config1 for an event, or empty:
// by the MSR the perfmon JSON names (MSRIndex "0x1a6,0x1a7" -> offcore_rsp) ...
std::string_view config1_term_for_msr(uint32_t msr_index);
// ... or, when only the encoding is known (libpfm4), by the event select code (x86 only).
std::string_view config1_term_for_event_code(uint32_t event_code, CoreLayout layout);

// "rc0": perf's raw syntax (hex digits of config, no leading zeros).
std::string perf_raw_syntax(uint64_t config);
// "cpu/event=0xc0,umask=0x00/", "cpu/event=0xa3,umask=0x04,cmask=0x04/",
// "cpu/event=0xb7,umask=0x01,offcore_rsp=0x10001/": perf's PMU syntax with the terms of the
// kernel's cpu/format; zero-valued optional fields are left out, as perf list prints them.
// Arm: "armv8_pmuv3_0/event=0x8/", unpadded as perf list prints it.
std::string perf_cpu_pmu_syntax(uint64_t config, uint64_t config1, std::string_view config1_term,
                                CoreLayout layout, std::string_view pmu = {});  // {}: core_pmu_name(layout)

// The "cpu" PMU of a CPU with this layout, as its kernel would publish it in sysfs (type
// PERF_TYPE_RAW, format terms as in the table above): lets `encode --model` resolve
// "cpu/event=..,umask=../" for a CPU other than this machine's, or on a VM with no core PMU.
SysfsPmu core_pmu_for_layout(CoreLayout layout);

// A raw encoding given on the command line of `vperf decode`.
struct RawEncoding {
  uint64_t config = 0;
  uint64_t config1 = 0;
  bool has_config1 = false;
  std::string text;  // as the user wrote it
};

// Parses "r13c", "0x13c", or "cpu/event=0x3c,umask=0x01,cmask=1,inv,edge,any,offcore_rsp=0x..,
// ldlat=3,frontend=0x11/" (perf's term syntax, "config=" and "config1=" also accepted); with the
// Arm layout "armv8_pmuv3/event=0x11/" (any armv8_*/armv9_* core PMU name, terms event, config
// and config1). The error names the offending token.
Result<RawEncoding> parse_raw_encoding(std::string_view text, CoreLayout layout);

}  // namespace vperf::events
