#pragma once
// The options of `vperf kvm` that its record, report, script, flamegraph and annotate share,
// with perf kvm's meaning:
//   -i FILE / -o FILE                the data file of every subcommand (perf kvm's file_name)
//   --guest (the default) / --host   which machines unmodified events sample: perf kvm keeps
//                                    the guest unless --no-guest, and adds the host with
//                                    --host; the data file is named after them:
//                                    perf.data.guest, perf.data.host or perf.data.kvm (both)
//   --guestkallsyms/--guestmodules/--guestvmlinux/--guestmount   where guest symbols are
//                                    (guest/guest_symbols.h)
//   --domain NAME [--connect URI]    report, script, flamegraph, annotate: the guest symbols of
//                                    a libvirt domain, fetched through its guest agent when the
//                                    command runs (guest/domain_guest_mount.h) and given to it as a
//                                    --guestmount of that domain's VMM pid
#include <filesystem>
#include <string>
#include <system_error>

#include "events/attr_builder.h"
#include "guest/guest_symbols.h"
#include "session/reading_session.h"
#include "guest/recording/vm_record.h"

namespace vperf::cli {

struct KvmOptions {
  // perf kvm's -i/--input and -o/--output, one file name for both (perf kvm -i F stat report,
  // perf kvm -o F record): the subcommands' file unless their own -i/-o names one.
  std::string file;
  bool host = false;
  bool guest = true;
  guest::GuestSymbolSources guests;
  std::string domain;                      // --domain
  std::string uri = "qemu:///system";      // --connect
  bool allow_unsafe_uri = false;           // --allow-unsafe-uri

  // perf kvm: without --host, the guest is always sampled.
  events::MachineScope scope() const { return {host, guest || !host}; }
  std::string data_file() const {
    if (!file.empty()) return file;
    const events::MachineScope s = scope();
    if (s.host && !s.guest) return "perf.data.host";
    if (!s.host && s.guest) return "perf.data.guest";
    return "perf.data.kvm";
  }
};

// A perf.data reader's options under `vperf kvm` (report, script, flamegraph, annotate): the
// guests' symbols — those given, else the ones a monitor recording kept beside the file —, the
// machines whose samples it shows (perf kvm: the guest's unless --host), and kvm's data file
// unless -i named one. Nothing without `kvm`.
inline void apply_kvm_defaults(const KvmOptions* kvm, bool input_given, session::ReadingInput& source) {
  if (kvm == nullptr) return;
  if (!input_given) source.input = kvm->data_file();
  source.guests = kvm->guests;
  const events::MachineScope scope = kvm->scope();
  source.scope = symbols::SampleScope{.host = scope.host, .guest = scope.guest};
  std::error_code ec;
  if (source.guests.empty() && std::filesystem::is_directory(guest::guestmount_beside(source.input), ec))
    source.guests.mount = guest::guestmount_beside(source.input);
}

}  // namespace vperf::cli
