#include "symbols/machines.h"

#include <utility>

namespace vperf::symbols {

Machines::Machines(SymbolConfig host_config) : host_(std::move(host_config), Machine::kHostPid) {}

Machine& Machines::add_guest(pid_t pid, SymbolConfig config) {
  auto& slot = guests_[pid];
  slot = std::make_unique<Machine>(std::move(config), pid);
  return *slot;
}

Machine* Machines::find_guest(pid_t pid) {
  auto it = guests_.find(pid);
  return it == guests_.end() ? nullptr : it->second.get();
}

const Machine* Machines::find_guest(pid_t pid) const {
  auto it = guests_.find(pid);
  return it == guests_.end() ? nullptr : it->second.get();
}

std::vector<const Machine*> Machines::guests() const {
  std::vector<const Machine*> out;
  for (const auto& [pid, m] : guests_) out.push_back(m.get());
  return out;
}

namespace {
bool is_guest_mode(uint8_t cpumode) {
  uint8_t mode = cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
  return mode == PERF_RECORD_MISC_GUEST_KERNEL || mode == PERF_RECORD_MISC_GUEST_USER;
}
}  // namespace

bool SampleScope::shows(uint8_t cpumode) const {
  switch (cpumode & PERF_RECORD_MISC_CPUMODE_MASK) {
    case PERF_RECORD_MISC_KERNEL:
    case PERF_RECORD_MISC_USER:
      return host;
    case PERF_RECORD_MISC_GUEST_KERNEL:
    case PERF_RECORD_MISC_GUEST_USER:
      return guest;
    default:
      return true;
  }
}

Machine* Machines::find_for_cpumode(uint8_t cpumode, pid_t pid) {
  return const_cast<Machine*>(std::as_const(*this).find_for_cpumode(cpumode, pid));
}

const Machine* Machines::find_for_cpumode(uint8_t cpumode, pid_t pid) const {
  if (!is_guest_mode(cpumode)) return &host_;
  const Machine* guest = find_guest(pid);
  return guest != nullptr ? guest : find_guest(kDefaultGuestPid);
}

ResolvedAddress Machines::resolve(pid_t pid, pid_t tid, uint8_t cpumode, uint64_t ip) const {
  if (const Machine* m = find_for_cpumode(cpumode, pid)) return m->resolve(pid, tid, cpumode, ip);
  ResolvedAddress r;
  r.ip = ip;
  r.level = level_for_cpumode(cpumode);
  return r;
}

}  // namespace vperf::symbols
