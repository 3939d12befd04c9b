// vperf kvm: see cmd_kvm.h.
#include "cli/cmd_kvm.h"

#include <memory>

#include "cli/cmd_kvm_list.h"
#include "cli/cmd_kvm_stat.h"
#include "cli/libvirt_connect.h"
#include "guest/domain_guest_mount.h"
#include "cli/kvm_options.h"
#include "guest/guest_symbol_cache.h"

namespace vperf::cli {

namespace {

// `vperf kvm --domain NAME report|script|flamegraph|annotate`: the reader runs with the
// domain's guest symbols as a --guestmount of its VMM pid, fetched when the command runs (not
// while parsing) and removed when it ends. Runs after the subcommand's own callback (CLI11
// calls a parent's callback last), so it wraps the action that one left.
void use_domain_symbols(const CLI::App& kvm, const std::shared_ptr<KvmOptions>& options, Invocation& inv) {
  const bool connect_given = kvm.count("--connect") > 0;
  if (options->domain.empty()) {
    if (connect_given) throw usage_error("--connect goes with --domain", "vperf kvm --domain NAME --connect URI report");
    return;
  }
  const std::string sub = kvm.get_subcommands().front()->get_name();
  if (sub == "record" || sub == "stat" || sub == "list")
    throw usage_error("vperf kvm --domain before the command is for report, script, flamegraph and annotate",
                      sub == "list" ? std::string("vperf kvm list shows every domain")
                                    : "give it after the command: vperf kvm " + sub + (sub == "stat" ? " record" : "") +
                                          " --domain " + options->domain);
  if (!options->guests.empty())
    throw usage_error("--domain and --guestkallsyms/--guestmodules/--guestvmlinux/--guestmount both give the guest's symbols",
                      "give one: --domain reads them through the domain's guest agent");
  std::function<int()> reader = std::move(inv.action);
  inv.action = [options, reader, &inv] {
    Result<guest::DomainGuestMount> mount = guest::DomainGuestMount::fetch(
        connect_to_libvirt(options->uri, guest::LibvirtAccess::read_write, options->allow_unsafe_uri), options->domain,
        guest::default_guest_symbol_cache());
    if (!mount) throw user_error(mount.error());
    for (const std::string& warning : mount->cache_warnings()) *inv.err << "vperf: warning: " << warning << '\n';
    options->guests.mount = mount->directory();
    return reader();
  };
}

}  // namespace

void add_kvm_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<KvmOptions>();
  CLI::App* kvm = app.add_subcommand("kvm", "Profile KVM guests from the host (perf kvm), and VM-exit analysis");
  kvm->require_subcommand(1);
  kvm->add_option("-i,--input,-o,--output", options->file, "The data file of the subcommand (perf kvm's -i/-o; default after --guest/--host)")
      ->check(non_empty());
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
  kvm->add_option("--domain", options->domain,
                  "With report, script, flamegraph, annotate: this libvirt domain's guest symbols, through its guest agent")
      ->check(non_empty());
  add_connect_options(*kvm, "--connect", options->uri, options->allow_unsafe_uri, "With --domain: ");
  kvm->callback([kvm, options, &inv] { use_domain_symbols(*kvm, options, inv); });
  std::shared_ptr<const KvmOptions> shared = options;
  add_record_command(*kvm, inv, shared);
  add_report_command(*kvm, inv, shared);
  add_script_command(*kvm, inv, shared);
  add_flamegraph_command(*kvm, inv, shared);
  add_annotate_command(*kvm, inv, shared);
  add_kvm_stat_subcommand(*kvm, inv, shared);

  auto list = std::make_shared<KvmListOptions>();
  CLI::App* sub = kvm->add_subcommand("list", "The libvirt domains: state, VMM pid, vCPU threads, guest agent");
  add_connect_options(*sub, "-c,--connect", list->uri, list->allow_unsafe_uri, "");
  add_json_flag(*sub, list->json);
  sub->callback([list, &inv] { inv.action = [list, &inv] { return run_kvm_list(*list, *inv.out); }; });
}

}  // namespace vperf::cli
