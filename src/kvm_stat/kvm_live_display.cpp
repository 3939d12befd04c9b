#include "kvm_stat/kvm_live_display.h"

#include <sys/time.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "kvm_stat/kvm_stat_table.h"

namespace vperf::kvm {

void KvmLiveDisplay::print_interval(std::ostream& out, std::ostream& err) {
  std::lock_guard<std::mutex> guard(lock_);
  if (choice_.vcpu && analysis_.mode() == KvmStatMode::UserspaceExits && analysis_.events() > 0 && !vcpu_noted_) {
    err << "vperf: warning: --vcpu is ignored: no kvm:kvm_entry fired, so exits to user space have no vCPU; showing all\n";
    vcpu_noted_ = true;
  }
  analysis_.set_run_entries_recorded(choice_.run_entries_recorded);
  KvmExitTable table = analysis_.table(choice_.event, choice_.key);
  out << live_time_of_day() << '\n';
  // Exits to user space have no vCPU: the header says so rather than naming one.
  std::optional<uint32_t> vcpu = table.mode == KvmStatMode::GuestExits ? choice_.vcpu : std::nullopt;
  const uint64_t lost = reader_.pass.lost;
  print_kvm_table(table, KvmTableContext{choice_.pids, vcpu, lost - std::min(lost, lost_reported_)}, out);
  out.flush();
  lost_reported_ = lost;
  analysis_.clear_counts();
}

std::string live_time_of_day() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  tm local{};
  char text[64] = "00:00:00.000000";
  if (::localtime_r(&tv.tv_sec, &local)) {
    char hms[16];
    std::strftime(hms, sizeof hms, "%H:%M:%S", &local);
    std::snprintf(text, sizeof text, "%s.%06ld", hms, static_cast<long>(tv.tv_usec));
  }
  return text;
}

}  // namespace vperf::kvm
