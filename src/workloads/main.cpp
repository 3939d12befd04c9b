// vperf-workload SUBCOMMAND ARG [--verbose]: see workloads.h and usage() below.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "workloads.h"

namespace {

void usage(std::FILE* to) {
  std::fputs(
      "usage: vperf-workload [--verbose] [--run-to-hlt] SUBCOMMAND ARG\n"
      "  getppid N       exactly N getppid system calls\n"
      "  page-faults N   touch N fresh pages (N minor page faults)\n"
      "  spin MS         burn MS milliseconds of CPU time in a fixed call chain\n"
      "  spin-deep MS    the same under 20 levels of recursion (a deep call chain)\n"
      "  inline MS       the same in two levels of inlined functions (see workloads.h)\n"
      "  inline-shared MS  the same under inlined code as C programs have it (see workloads.h)\n"
      "  memfd-jit MS    burn MS milliseconds of CPU time in code run from a memfd mapping\n"
      "  jitdump MS      the same in two JIT functions named in ./jit-PID.dump (perf's jitdump)\n"
      "  probe-calls N   call probe_target N times with known arguments (vperf probe's target)\n"
      "  throws N        throw and catch N C++ exceptions (libstdc++'s USDT markers)\n"
      "  sleep MS        sleep MS milliseconds\n"
      "  loop N          a two-instruction loop run N times: exactly 2N instructions in it\n"
      "  watched-writes N  write the word at 0x3e00000000 N times (a breakpoint's target)\n"
      "  kvm-pio N       run a tiny KVM guest that does N port writes (needs /dev/kvm);\n"
      "                  exactly N KVM_RUN calls, N + 1 with --run-to-hlt\n"
      "  exit CODE       exit with status CODE\n",
      to);
}

bool parse_count(const char* text, uint64_t& out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace vperf::workloads;
  Options options;
  std::vector<const char*> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--verbose") == 0 || std::strcmp(argv[i], "-v") == 0) {
      options.verbose = true;
    } else if (std::strcmp(argv[i], "--run-to-hlt") == 0) {
      options.run_to_hlt = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (args.size() != 2) {
    usage(stderr);
    return 2;
  }
  const std::string command = args[0];
  uint64_t n = 0;
  if (!parse_count(args[1], n)) {
    std::fprintf(stderr, "vperf-workload: %s: '%s' is not a non-negative integer\n", command.c_str(), args[1]);
    return 2;
  }
  if (command == "getppid") return run_getppid(n, options);
  if (command == "page-faults") return run_page_faults(n, options);
  if (command == "spin") return run_spin(n, options);
  if (command == "spin-deep") return run_spin_deep(n, options);
  if (command == "inline") return run_inline(n, options);
  if (command == "inline-shared") return vperf_workload_inline_shared(n, options.verbose ? 1 : 0);
  if (command == "memfd-jit") return run_memfd_jit(n, options);
  if (command == "jitdump") return run_jitdump(n, options);
  if (command == "probe-calls") return run_probe_calls(n, options);
  if (command == "throws") return run_throws(n, options);
  if (command == "sleep") return run_sleep(n, options);
  if (command == "loop") return run_loop(n, options);
  if (command == "watched-writes") return run_watched_writes(n, options);
  if (command == "kvm-pio") return run_kvm_pio(n, options);
  if (command == "exit") {
    if (n > 255) {
      std::fprintf(stderr, "vperf-workload: exit: status %s is not in 0..255\n", args[1]);
      return 2;
    }
    return static_cast<int>(n);
  }
  std::fprintf(stderr, "vperf-workload: unknown subcommand '%s'\n", command.c_str());
  usage(stderr);
  return 2;
}
