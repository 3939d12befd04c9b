// vperf version [--build-options]: perf's version command, for scripts that ask it. The build
// options are perf 6.1's list in its format, each saying whether vperf has that capability
// (through which library), then vperf's own: a script that greps "bpf: [ OFF" learns that
// vperf records without BPF.
#include <cstdio>
#include <string>

#include "cli/command.h"

namespace vperf::cli {

namespace {

struct BuildOption {
  const char* name;
  bool on;
  const char* macro;
};

// perf 6.1's names and macros first, in its order; vperf's additions after.
constexpr BuildOption kBuildOptions[] = {
    {"dwarf", true, "HAVE_DWARF_SUPPORT"},                        // libdw
    {"dwarf_getlocations", true, "HAVE_DWARF_GETLOCATIONS_SUPPORT"},  // probe's variable locations
    {"glibc", true, "HAVE_GLIBC_SUPPORT"},
    {"syscall_table", false, "HAVE_SYSCALL_TABLE_SUPPORT"},      // no perf trace yet
    {"libbfd", false, "HAVE_LIBBFD_SUPPORT"},
    {"debuginfod", true, "HAVE_DEBUGINFOD_SUPPORT"},             // DEBUGINFOD_URLS, vperf's own client
    {"libelf", true, "HAVE_LIBELF_SUPPORT"},
    {"libnuma", false, "HAVE_LIBNUMA_SUPPORT"},
    {"numa_num_possible_cpus", false, "HAVE_LIBNUMA_SUPPORT"},
    {"libperl", false, "HAVE_LIBPERL_SUPPORT"},
    {"libpython", false, "HAVE_LIBPYTHON_SUPPORT"},
    {"libslang", false, "HAVE_SLANG_SUPPORT"},
    {"libcrypto", false, "HAVE_LIBCRYPTO_SUPPORT"},
    {"libunwind", false, "HAVE_LIBUNWIND_SUPPORT"},
    {"libdw-dwarf-unwind", true, "HAVE_DWARF_SUPPORT"},          // --call-graph dwarf unwinds with libdw
    {"zlib", true, "HAVE_ZLIB_SUPPORT"},                         // compressed ELF sections, through libelf
    {"lzma", true, "HAVE_LZMA_SUPPORT"},                         // xz-compressed trace.dat sections
    {"get_cpuid", true, "HAVE_AUXTRACE_SUPPORT"},
    {"bpf", false, "HAVE_LIBBPF_SUPPORT"},
    {"aio", false, "HAVE_AIO_SUPPORT"},
    {"zstd", true, "HAVE_ZSTD_SUPPORT"},                         // record -z, read both ways
    {"libpfm4", true, "HAVE_LIBPFM"},
    {"libtraceevent", true, "HAVE_LIBTRACEEVENT"},
    {"libcapstone", true, "HAVE_LIBCAPSTONE_SUPPORT"},           // annotate's disassembler
    {"libvirt", true, "VPERF_LIBVIRT"},                          // kvm --domain
};

}  // namespace

void add_version_command(CLI::App& app, Invocation& inv) {
  auto build_options = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("version", "Print vperf's version (--build-options: what it was built with)");
  sub->add_flag("--build-options", *build_options, "Also list the capabilities vperf has, in perf version's format");
  sub->callback([build_options, &inv] {
    inv.action = [build_options, &inv] {
      std::string text = std::string("vperf version ") + VPERF_VERSION + "\n";
      if (*build_options) {
        char line[128];
        for (const BuildOption& option : kBuildOptions) {
          std::snprintf(line, sizeof line, "%22s: [ %s ]  # %s\n", option.name, option.on ? "on " : "OFF", option.macro);
          text += line;
        }
      }
      *inv.out << text;
      return 0;
    };
  });
}

}  // namespace vperf::cli
