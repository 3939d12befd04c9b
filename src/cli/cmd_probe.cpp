// vperf probe [-x FILE] [-f] [-n] [-v] [-q] 'PROBEDEF' | -a PROBEDEF... | -D PROBEDEF | -d EVENT... | -l [EVENT]
//             | -V POINT | -L RANGE | -F [FILTER] | --list-sdt | --calibrate
// perf probe's command line (6.1). The logic lives in probes/probe_plan.h.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/command.h"
#include "core/strings.h"
#include "probes/inline_probes.h"
#include "probes/probe_cost.h"
#include "probes/probe_plan.h"

namespace vperf::cli {

namespace {

struct ProbeOptions {
  // -x, -m, -k, -f, --max-probes and --symfs go straight into the request; the definitions
  // come from -a, -D or the words after the options when the mode is known.
  probes::ProbeRequest request;
  std::vector<std::string> words;  // perf joins the words after the options into one PROBEDEF
  std::vector<std::string> add, definition, del;
  std::string list, vars, line_range, funcs_filter, filter = "!_* & !*@plt";
  std::filesystem::path symfs;  // --symfs DIR: separate debuginfo under DIR/usr/lib/debug
  bool list_given = false, dry_run = false, verbose = false, quiet = false, externs = false, ranges = false, funcs = false,
       list_sdt = false, calibrate = false;
};

tracing::Tracefs open_tracefs() {
  Result<tracing::Tracefs> tracefs = tracing::Tracefs::open_mounted();
  if (!tracefs) throw user_error(tracefs.error());
  if (Result<void> allowed = tracing::require_tracefs_access(*tracefs, "vperf probe"); !allowed) throw user_error(allowed.error());
  if (!tracing::tracefs_file_exists(*tracefs, "uprobe_events") && !tracing::has_kprobes(*tracefs))
    throw UserError("this kernel has neither uprobes nor kprobes (no " + tracefs->file("uprobe_events").string() + ")",
                    "dynamic probes need a kernel built with CONFIG_UPROBE_EVENTS=y or CONFIG_KPROBE_EVENTS=y");
  // Inline probes of vperf runs that were killed (-e uprobe:... in stat or record) go first.
  probes::remove_leftover_inline_probes(*tracefs);
  return std::move(tracefs).value();
}


// The bundled workload beside this vperf: the build tree's src/workloads/vperf-workload, or an
// installed one in the same directory.
std::filesystem::path bundled_workload() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const std::filesystem::path& candidate : {self / "src/workloads/vperf-workload", self / "vperf-workload"})
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  throw UserError("the bundled vperf-workload is not beside " + self.string(), "build it (ninja -C build vperf-workload) or install vperf with it");
}

void print_lines(const std::vector<std::string>& lines, std::ostream& out) {
  for (const std::string& line : lines) out << line << "\n";
}

// --calibrate: the cost of one uprobe hit, kept for this boot.
int calibrate(std::ostream& out) {
  open_tracefs();  // uprobes needed; the run below makes and removes its own probe
  const double nanoseconds = checked(probes::measure_probe_hit_cost(bundled_workload()));
  checked(probes::store_probe_hit_cost(nanoseconds));
  char text[96];
  std::snprintf(text, sizeof text, "one uprobe hit costs the probed task %.0f ns here (median of 5 paired runs of 200000 calls)\n", nanoseconds);
  out << text;
  return 0;
}

// What a probe can name, without adding one: -F, -L, -V, --list-sdt. False when none was asked.
bool show_probe_targets(const ProbeOptions& o, std::ostream& out) {
  const probes::ProbeRequest& request = o.request;
  if (o.list_sdt) print_lines(checked(probes::list_sdt_markers(request, o.verbose)), out);
  else if (o.funcs) print_lines(checked(probes::probe_functions(request, o.funcs_filter.empty() ? o.filter : o.funcs_filter)), out);
  else if (!o.line_range.empty()) print_lines(checked(probes::probe_source_listing(request, o.line_range)), out);
  else if (!o.vars.empty()) print_lines(checked(probes::probe_point_variables(request, o.vars, o.externs, o.ranges)), out);
  else return false;
  return true;
}

void print_added(const std::vector<probes::PlannedProbe>& probes, std::ostream& out) {
  out << (probes.size() == 1 ? "Added new event:\n" : "Added new events:\n");
  for (const probes::PlannedProbe& p : probes) {
    out << "  " << p.event.group << ":" << p.event.event << " (on " << p.point;
    if (!p.kernel) out << " in " << p.event.file.string();
    if (!p.shown_arguments.empty()) out << " with " << join(p.shown_arguments, " ");
    out << ")\n";
  }
  const probes::PlannedProbe& last = probes.back();
  out << "\nYou can now use it in all vperf tools, such as:\n\n\tvperf record -e " << last.event.group << ":"
      << last.event.event << " -aR sleep 1\n\n";
}

// -a/PROBEDEF adds the definitions' probes; -D prints their uprobe_events lines without tracefs
// (nothing is looked up there but the kernel's naming rule, when tracefs is mounted).
int add_or_print_probes(const ProbeOptions& o, std::ostream& out, std::ostream& err) {
  probes::ProbeRequest request = o.request;
  request.definitions = !o.definition.empty() ? o.definition : o.add;
  if (!o.words.empty()) request.definitions.push_back(join(o.words, " "));
  if (request.definitions.empty())
    throw usage_error("nothing to probe", "give a PROBEDEF: vperf probe -x FILE FUNC (see vperf help probe)");
  const bool print_only = !o.definition.empty();
  std::vector<std::string> existing;
  std::optional<tracing::Tracefs> tracefs;
  if (!print_only) {
    tracefs = open_tracefs();
    // As perf, a kernel probe's debuginfo is looked for before kprobe_events: what the
    // definitions lack is said first (perf's own tests skip on those words).
    if (request.executable.empty() && !tracing::has_kprobes(*tracefs)) checked(probes::plan_probes(request, {}));
    existing = request.executable.empty() ? checked(tracing::kprobe_definitions(*tracefs)) : checked(tracing::uprobe_definitions(*tracefs));
    request.append = tracing::kernel_appends_probes(*tracefs);
  } else if (Result<tracing::Tracefs> mounted = tracing::Tracefs::open_mounted()) {
    request.append = tracing::kernel_appends_probes(*mounted);  // -D shows the names this kernel would get
  }
  std::vector<probes::PlannedProbe> probes = checked(probes::plan_probes(request, existing));
  if (!o.quiet)
    for (const probes::PlannedProbe& p : probes)
      if (!p.note.empty()) err << p.note << "\n\n";
  if (print_only) {
    for (const probes::PlannedProbe& p : probes) out << p.definition << "\n";
    return 0;
  }
  if (o.verbose)
    for (const probes::PlannedProbe& p : probes) err << "Writing event: " << p.definition << "\n";
  if (!o.dry_run) checked(probes::add_probes(*tracefs, probes));
  if (!o.quiet) print_added(probes, out);
  return 0;
}

int run_probe(const ProbeOptions& o, std::ostream& out, std::ostream& err) {
  if (o.calibrate) return calibrate(out);
  if (!o.del.empty()) {
    tracing::Tracefs tracefs = open_tracefs();
    for (const std::string& pattern : o.del)
      for (const std::string& removed : checked(probes::delete_probes(tracefs, pattern)))
        if (!o.quiet) out << "Removed event: " << removed << "\n";
    return 0;
  }
  if (o.list_given) {
    print_lines(checked(probes::list_probes(open_tracefs(), o.list, o.verbose)), out);
    return 0;
  }
  if (!o.request.module.empty() && !o.request.executable.empty())
    throw usage_error("-m and -x name two targets", "give one: -x FILE for a program, -m MODULE.ko for a kernel module");
  if (show_probe_targets(o, out)) return 0;
  return add_or_print_probes(o, out, err);
}

}  // namespace

void add_probe_command(CLI::App& app, Invocation& inv) {
  auto o = std::make_shared<ProbeOptions>();
  CLI::App* sub = app.add_subcommand("probe", "Define dynamic probes on functions, source lines and USDT markers (uprobes) and kernel functions (kprobes), as perf probe");
  sub->add_option("-x,--exec", o->request.executable, "The executable or library to probe");
  sub->add_option("-m,--module", o->request.module, "A kernel module (its .ko file or name): its functions, lines and variables probed through kprobes");
  sub->add_option("-k,--vmlinux", o->request.vmlinux, "The kernel image with DWARF (vmlinux, from linux-image-*-dbg): kernel functions' lines and variables");
  // One value per -a, -D or -d, as perf: a PROBEDEF with arguments is one quoted word.
  sub->add_option("-a,--add", o->add, "A probe definition: [[GROUP:]EVENT=]FUNC[+OFF|%return] [ARG ...]")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("-D,--definition", o->definition, "Print the uprobe_events (kprobe_events) lines of a definition without adding it")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("-d,--del", o->del, "Delete probe events matching [GROUP:]EVENT (globs)")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("-l,--list", o->list, "List probe events (matching [GROUP:]EVENT)")->expected(0, 1);
  sub->add_option("-F,--funcs", o->funcs_filter, "List the functions a probe can name (with -x FILE), those FILTER keeps if given")->expected(0, 1);
  sub->add_option("--filter", o->filter, "With -F, the names to list: globs joined by & and |, negated by ! (default '!_* & !*@plt')");
  sub->add_flag("--calibrate", o->calibrate, "Measure what one uprobe hit costs on this machine (kept for this boot; vperf stat's --max-overhead uses it)");
  sub->add_flag("--list-sdt", o->list_sdt, "List the USDT markers of -x FILE (as perf list sdt, without its build-id cache); -v adds offsets and arguments");
  sub->add_option("-L,--line", o->line_range, "Show the source lines of FUNC[:RLN[+NUM|-RLN2]] or SRC:ALN[+NUM|-ALN2], numbered where a probe can go");
  sub->add_option("-V,--vars", o->vars, "Show the variables available at a probe point, FUNC[+OFFSET]");
  sub->add_flag("--externs", o->externs, "With -V, show global and static variables too");
  sub->add_flag("--range", o->ranges, "With -V, tag each variable [VAL], [INV] or [EXT] and show where its location is valid");
  // A bound a user can read in the error (CLI::PositiveNumber's is DBL_MAX, 309 digits); past it a
  // definition would need more events than the kernel numbers (16 bits).
  sub->add_option("--max-probes", o->request.max_probes, "The most probe points one definition may give, 1 to 65536 (default 128)")
      ->check(CLI::Range(size_t{1}, size_t{65536}));
  // perf reads separate debuginfo only under the symfs root.
  add_symfs_option(*sub, o->symfs)->description("Look for separate debuginfo under this directory (DIR/usr/lib/debug)");
  sub->add_flag("-n,--dry-run", o->dry_run, "Show what would be added, add nothing");
  sub->add_flag("-f,--force", o->request.force, "Add events under a numbered name when the name is taken");
  sub->add_flag("-v,--verbose", o->verbose, "Show the uprobe_events lines written");
  sub->add_flag_callback("--no-inlines", [o] { o->request.inlines = false; }, "Probe only out-of-line instances of a function, not the places it was inlined");
  sub->add_flag("-q,--quiet", o->quiet, "Print nothing but errors");
  sub->add_option("probedef", o->words, "PROBEDEF and its arguments");
  sub->callback([&inv, o, sub] {
    o->list_given = sub->count("--list") > 0;
    o->funcs = sub->count("--funcs") > 0;
    if (!o->symfs.empty()) o->request.debug_dirs = {o->symfs / "usr/lib/debug"};
    inv.action = [&inv, o] { return run_probe(*o, *inv.out, *inv.err); };
  });
}

}  // namespace vperf::cli
