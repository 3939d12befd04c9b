#pragma once
// All machines of a session, after Linux perf's struct machines: the host, and guests by the
// pid of their VMM process (QEMU). A sample's cpumode routes it: KERNEL/USER to the host,
// GUEST_KERNEL/GUEST_USER to the guest of the sample's pid, or, when that VMM has no machine
// of its own, to the default guest (pid 0, perf's DEFAULT_GUEST_KERNEL_ID: the one perf kvm's
// --guestkallsyms/--guestmodules describe, and the pid of the guest kernel MMAP records perf
// kvm record writes). Unlike perf, a guest sample with no guest machine at all resolves to
// nothing (level 'g'/'u', "[unknown]") instead of against the host's kernel, whose symbols
// would be wrong for it.
#include <sys/types.h>

#include <map>
#include <memory>

#include "symbols/machine.h"

namespace vperf::symbols {

// perf's perf_host/perf_guest: whose samples a reader shows. perf kvm shows the guest's only
// unless --host (and the host's only with --host --no-guest); a sample of a machine left out
// is filtered: report still counts it in its totals (perf's "# Samples"), script, flame graphs
// and annotate drop it. Samples of no machine (hypervisor mode) are always shown, as in perf.
struct SampleScope {
  bool host = true;
  bool guest = true;
  bool shows(uint8_t cpumode) const;
};

class Machines {
 public:
  static constexpr pid_t kDefaultGuestPid = 0;

  explicit Machines(SymbolConfig host_config);

  Machine& host() { return host_; }
  const Machine& host() const { return host_; }
  // The guest of VMM process `pid`, created with its own config (a guest's copied kallsyms and
  // modules, its root as symfs, usually VdsoSource::Skip). Replaces an existing one.
  Machine& add_guest(pid_t pid, SymbolConfig config);
  Machine* find_guest(pid_t pid);
  const Machine* find_guest(pid_t pid) const;
  std::vector<const Machine*> guests() const;

  // The machine an event or sample with this cpumode and pid belongs to: for a guest mode the
  // pid's guest, else the default guest; nullptr when there is neither.
  Machine* find_for_cpumode(uint8_t cpumode, pid_t pid);
  const Machine* find_for_cpumode(uint8_t cpumode, pid_t pid) const;

  ResolvedAddress resolve(pid_t pid, pid_t tid, uint8_t cpumode, uint64_t ip) const;

  void set_sample_scope(SampleScope scope) { scope_ = scope; }
  const SampleScope& sample_scope() const { return scope_; }

 private:
  SampleScope scope_;
  Machine host_;
  std::map<pid_t, std::unique_ptr<Machine>> guests_;
};

}  // namespace vperf::symbols
