#pragma once
// The validated, immutable result of resolving one event string against the catalog:
// everything AttrBuilder needs to fill a perf_event_attr, and nothing that needs a syscall.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vperf::events {

// perf 6.1's event modifiers (":u", ":k", ":h", ":G", ":H", ":p".. ":ppp", ":P", ":S", ":D",
// ":I", ":W", ":e", ":b"), recorded as written; AttrBuilder turns them into attr bits the way
// perf does.
struct Modifiers {
  bool user = false;         // u
  bool kernel = false;       // k
  bool hypervisor = false;   // h
  bool guest = false;        // G: count in guest only
  bool host = false;         // H: count on host only
  int precise = 0;           // number of 'p' (0..3)
  bool sample_read = false;  // S: group leader samples read the group
  bool pinned = false;       // D: pin the event (group) to the PMU
  bool exclude_idle = false;  // I: do not count while the CPU idles
  bool weak = false;          // W: a {group} the kernel refuses (EINVAL) is counted member by member
  bool exclusive = false;     // e: the event (group) alone on the PMU
  bool precise_max = false;   // P: the highest precise level the PMU has
  // b: perf counts through a shared BPF counter (bperf); vperf has no BPF and opens an ordinary
  // counter, which gives the same counts.
  bool bpf_counter = false;
  bool operator==(const Modifiers&) const = default;
  bool empty() const { return *this == Modifiers{}; }
};

// An event's place in its group: "{a,b}" makes a the Leader and b a Member; a lone event
// is Alone. AttrBuilder uses it for disabled/enable_on_exec/pinned and read_format.
enum class GroupRole { Alone, Leader, Member };

// perf stat's tool events (duration_time, user_time, system_time) are measured by the
// command, not opened: their type is one no kernel PMU has, their config says which.
inline constexpr uint32_t kToolEventType = 0xffffffffu;
enum class ToolEvent : uint64_t { DurationTime = 1, UserTime = 2, SystemTime = 3 };

// Where an event's encoding came from.
// Absent: an event a stat -M metric names that no PMU of this machine publishes (msr/aperf/
// on a host whose msr PMU has only tsc): kept to be printed "<not supported>", never opened.
enum class EventOrigin { Builtin, Raw, SysfsPmu, Libpfm, Perfmon, Tracepoint, Breakpoint, Absent };

// How a sampled event's call chains are taken: record's -g / --call-graph, or the event's own
// call-graph= term.
enum class CallGraph { None, FramePointer, Dwarf };

// perf's per-event settings, written among an event's terms ("cpu-clock/period=100000/",
// "sched:sched_switch/max-stack=3/", "cpu/event=0x3c,name=c0,freq=999/"): each overrides
// record's option for that event alone, as perf's evsel__apply_config_terms does. Unset: the
// command line's option holds.
struct EventSettings {
  // period=N or freq=HZ, whichever was written last. A period is fixed: samples carry no PERIOD
  // field (perf clears it; readers take the attr's period).
  struct Rate {
    bool frequency = false;
    uint64_t value = 0;
  };
  std::optional<Rate> rate;
  std::optional<bool> time;              // time=0: samples without TIME
  std::optional<bool> inherit;           // inherit / no-inherit: child tasks counted or not
  std::optional<CallGraph> call_graph;   // call-graph=fp|dwarf|no
  std::optional<uint32_t> stack_size;    // stack-size=BYTES: the user stack a dwarf chain copies
  // max-stack=N: the kernel keeps at most N frames of each chain (attr.sample_max_stack); alone,
  // it asks for frame-pointer chains, as perf's term does.
  std::optional<uint16_t> max_stack;
};

struct ResolvedEvent {
  std::string name;           // canonical name: "cycles", "cpu/event=0x3c/", "ivb::INST_RETIRED:ANY_P", "sched:sched_switch"
  // How perf stat names it: the event as the user wrote it ("cycles:u", "INST_RETIRED.ANY_P"),
  // or, when one spec stood for several events (a glob, an alias on several PMUs), the
  // matched name with the written modifiers ("syscalls:sys_enter_read:u").
  std::string written;
  std::string pmu;            // PMU that counts it: "cpu", "software", "tracepoint", "msr", "power", "uncore_imc_0" ...
  uint32_t type = 0;          // perf_event_attr.type (PERF_TYPE_* or a sysfs PMU's dynamic type)
  uint64_t config = 0;
  uint64_t config1 = 0;       // extra MSR values: offcore_rsp, ldlat, frontend; a breakpoint's address
  uint64_t config2 = 0;       // a breakpoint's length
  uint32_t bp_type = 0;       // a breakpoint's HW_BREAKPOINT_* access bits
  Modifiers modifiers;        // the event's own ":mods" (or "/mods" after a PMU's terms)
  Modifiers group_modifiers;  // the enclosing "{...}:mods", applied after the event's own
  GroupRole group_role = GroupRole::Alone;
  EventOrigin origin = EventOrigin::Builtin;
  // Privilege levels a libpfm4 string asked for itself (":u", ":k"); perf modifiers override.
  bool exclude_user = false;
  bool exclude_kernel = false;
  bool exclude_hv = false;
  std::optional<int> max_precise;  // precise levels the catalog allows (PEBS), when known
  // The PMU's cpumask ("0", "0,28"): non-empty means a per-CPU PMU (uncore, RAPL, msr on
  // some kernels) whose events are opened on those CPUs, not per task; perf stat then counts
  // system-wide and does not set enable_on_exec.
  std::string cpumask;
  EventSettings settings;  // the event's own period=, freq=, call-graph=, max-stack= ... terms

  bool is_tool() const { return type == kToolEventType; }
};

// Events resolved from one user string: a lone event is a group of one. "{cycles,instructions}:u"
// is one group of two, whose leader is the first member.
struct ResolvedGroup {
  std::vector<ResolvedEvent> members;
  bool is_group = false;  // written with braces: read together with PERF_FORMAT_GROUP
};

}  // namespace vperf::events
