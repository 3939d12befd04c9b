#include "cli/cmd_check.h"

#include <unistd.h>

#include <memory>

#include "cli/command.h"
#include "core/error.h"
#include "pmc/pfm_session.h"
#include "host/capability_check.h"
#include "host/check_report.h"
#include "host/cpuid_dump.h"
#include "output/json.h"

namespace vperf::cli {

namespace {

const char* const kDumpHint =
    "give the output of `cpuid -r` / `cpuid -1 -r`, or an AIDA64/InstLatx64 CPUID dump";

host::CheckResult check_from_dump(const CheckOptions& options) {
  auto dump = host::load_cpuid_dump(options.cpuid_dump);
  if (!dump) {
    const Error& e = dump.error();
    if (e.errno_value != 0) throw UserError("cannot read the CPUID dump: " + e.describe(), kDumpHint);
    throw UserError("malformed CPUID dump " + e.message, kDumpHint);
  }
  auto index = host::select_dump_cpu(*dump, options.cpu);
  if (!index) throw usage_error(index.error().message, "pick one of those with --cpu");
  if (auto complete = host::require_decodable_leaves(*dump, *index); !complete)
    throw UserError("incomplete CPUID dump " + complete.error().message, kDumpHint);
  host::DumpCpuidSource source(*dump, *index);
  host::CheckInputs inputs;
  inputs.cpuid = host::decode_cpuid(source);
  inputs.cpuid_from_dump = true;
  inputs.libpfm_present_pmus = options.libpfm_present_pmus;
  return host::evaluate_check(std::move(inputs));
}

host::CheckResult check_this_machine(const CheckOptions& options) {
  perf::KernelPerfEventOpener opener;
  host::HostPaths paths;
  msr::DevCpuMsrReader msr_reader(paths.dev_cpu);
  host::KvmDeviceFile kvm(paths.dev_kvm);
  host::LiveProbeDeps deps{opener, msr_reader, kvm, paths, ::geteuid() == 0};
  host::CheckInputs inputs;
#if defined(__aarch64__)
  deps.probe_msrs = false;
  inputs.arm = host::read_arm_cpu(paths);
#else
  inputs.cpuid = host::decode_cpuid(host::LiveCpuid{});
#endif
  inputs.live = host::run_live_probes(deps);
  inputs.libpfm_present_pmus = options.libpfm_present_pmus;
  return host::evaluate_check(std::move(inputs));
}

}  // namespace

int run_check(const CheckOptions& options, std::ostream& out) {
  if (options.cpu && options.cpuid_dump.empty())
    throw usage_error("--cpu selects a CPU of a CPUID dump", "add --cpuid-dump FILE");
  host::CheckResult result = options.cpuid_dump.empty() ? check_this_machine(options) : check_from_dump(options);
  if (options.json)
    output::print_json(out, host::check_to_json(result));
  else
    host::render_check_text(result, out);
  return 0;
}

std::vector<std::string> libpfm_present_pmu_names() {
  std::vector<std::string> names;
  auto session = events::PfmSession::open(std::nullopt);
  if (!session) return names;
  for (const events::PfmPmu& pmu : session->list_pmus())
    if (pmu.present) names.push_back(pmu.name);
  return names;
}

void add_check_command(CLI::App& app, Invocation& inv) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check", "Which PMCs does this machine (often a VM) expose, and what can be measured here?");
  auto* dump = sub->add_option("--cpuid-dump", options->cpuid_dump,
                               "Decode CPUID from a dump (`cpuid -r` or AIDA64/InstLatx64) instead of this CPU; "
                               "skips the live probes")
                  ->check(non_empty());
  sub->add_option("--cpu", options->cpu, "With --cpuid-dump: the CPU number in the dump (default: the first)")
      ->needs(dump)
      ->check(whole_number_in(0, 65535));
  add_json_flag(*sub, options->json);
  sub->callback([&inv, options] {
    inv.action = [&inv, options]() -> int {
      // libpfm4's family/model-based view of this machine, held against the live probes.
      if (options->cpuid_dump.empty()) options->libpfm_present_pmus = libpfm_present_pmu_names();
      return run_check(*options, *inv.out);
    };
  });
}

}  // namespace vperf::cli
