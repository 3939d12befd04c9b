// vperf kvm: see cmd_kvm.h.
#include "cli/cmd_kvm.h"

#include <memory>

#include "cli/cmd_kvm_list.h"
#include "cli/cmd_kvm_stat.h"
#include "cli/kvm_options.h"

namespace vperf::cli {

void add_kvm_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<KvmOptions>();
  CLI::App* kvm = app.add_subcommand("kvm", "Profile KVM guests from the host (perf kvm), and VM-exit analysis");
  kvm->require_subcommand(1);
  kvm->add_flag("--guest,!--no-guest", options->guest, "Sample the guest (default; perf.data.guest)");
  kvm->add_flag("--host,!--no-host", options->host, "Sample the host too (perf.data.kvm; with --no-guest perf.data.host)");
  kvm->add_option("--guestkallsyms", options->guests.kallsyms, "The guest's /proc/kallsyms, copied out (as root)")
      ->check(non_empty());
  kvm->add_option("--guestmodules", options->guests.modules, "The guest's /proc/modules, copied out")->check(non_empty());
  kvm->add_option("--guestvmlinux", options->guests.vmlinux, "The guest kernel's vmlinux (with .symtab)")
      ->check(non_empty());
  kvm->add_option("--guestmount", options->guests.mount,
                  "Directory with one <VMM pid>/ per guest: <pid>/proc/kallsyms, <pid>/proc/modules")
      ->check(non_empty());
  std::shared_ptr<const KvmOptions> shared = options;
  add_record_command(*kvm, inv, shared);
  add_report_command(*kvm, inv, shared);
  add_script_command(*kvm, inv, shared);
  add_flamegraph_command(*kvm, inv, shared);
  add_annotate_command(*kvm, inv, shared);
  add_kvm_stat_subcommand(*kvm, inv);

  auto list = std::make_shared<KvmListOptions>();
  CLI::App* sub = kvm->add_subcommand("list", "The libvirt domains: state, VMM pid, vCPU threads, guest agent");
  sub->add_option("-c,--connect", list->uri, "libvirt URI (default qemu:///system; qemu+ssh://HOST/system)")
      ->check(non_empty());
  add_json_flag(*sub, list->json);
  sub->callback([list, &inv] { inv.action = [list, &inv] { return run_kvm_list(*list, *inv.out); }; });
}

}  // namespace vperf::cli
