#pragma once
// kvm stat live's output: every interval, the time of day and the table of the exits since
// the previous table (perf kvm stat live's layout), read from the analysis the live reader fills.
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>

#include "kvm_stat/kvm_exit_analysis.h"
#include "kvm_stat/kvm_live_reader.h"

namespace vperf::kvm {

struct KvmLiveChoice {
  KvmReportEvent event = KvmReportEvent::Vmexit;
  KvmSortKey key = KvmSortKey::Sample;
  std::string pids;  // -p as given, for the header
  std::optional<uint32_t> vcpu;
  bool run_entries_recorded = false;  // the recording has the VMM's KVM_RUN entries
};

class KvmLiveDisplay {
 public:
  // `analysis` and `reader.pass` are read under `lock`, which the reader's thread holds while it
  // updates them.
  KvmLiveDisplay(KvmExitAnalysis& analysis, std::mutex& lock, const KvmLiveReader& reader, KvmLiveChoice choice)
      : analysis_(analysis), lock_(lock), reader_(reader), choice_(std::move(choice)) {}

  // One table, then the counts start again from zero.
  void print_interval(std::ostream& out, std::ostream& err);

 private:
  KvmExitAnalysis& analysis_;
  std::mutex& lock_;
  const KvmLiveReader& reader_;
  KvmLiveChoice choice_;
  uint64_t lost_reported_ = 0;
  bool vcpu_noted_ = false;
};

// perf kvm stat live's time of day before each table: HH:MM:SS.uuuuuu, local time.
std::string live_time_of_day();

}  // namespace vperf::kvm
