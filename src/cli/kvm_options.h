#pragma once
// The options of `vperf kvm` that its record, report, script, flamegraph and annotate share,
// with perf kvm's meaning:
//   --guest (the default) / --host   which machines unmodified events sample: perf kvm keeps
//                                    the guest unless --no-guest, and adds the host with
//                                    --host; the data file is named after them:
//                                    perf.data.guest, perf.data.host or perf.data.kvm (both)
//   --guestkallsyms/--guestmodules/--guestvmlinux/--guestmount   where guest symbols are
//                                    (guest/guest_symbols.h)
#include <string>

#include "events/attr_builder.h"
#include "guest/guest_symbols.h"

namespace vperf::cli {

struct KvmOptions {
  bool host = false;
  bool guest = true;
  guest::GuestSymbolSources guests;

  // perf kvm: without --host, the guest is always sampled.
  events::MachineScope scope() const { return {host, guest || !host}; }
  std::string data_file() const {
    const events::MachineScope s = scope();
    if (s.host && !s.guest) return "perf.data.host";
    if (!s.host && s.guest) return "perf.data.guest";
    return "perf.data.kvm";
  }
};

// A perf.data reader's options under `vperf kvm` (report, script, flamegraph, annotate): the
// guests' symbols, and kvm's data file unless -i named one. Nothing without `kvm`.
template <typename ReaderOptions>
void apply_kvm_defaults(const KvmOptions* kvm, bool input_given, ReaderOptions& options) {
  if (kvm == nullptr) return;
  if (!input_given) options.input = kvm->data_file();
  options.guests = kvm->guests;
}

}  // namespace vperf::cli
