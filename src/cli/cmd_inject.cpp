// vperf inject: perf inject's copy of a recording with build-ids added, JIT dumps injected and
// compressed records expanded (session/inject.h).
#include "cli/command.h"
#include "session/inject.h"

namespace vperf::cli {

void add_inject_command(CLI::App& app, Invocation& inv) {
  auto request = std::make_shared<session::InjectRequest>();
  CLI::App* sub = app.add_subcommand("inject", "Copy a recording, adding build-ids (-b), JIT code's names (--jit) and expanding compressed records, as perf inject");
  sub->add_option("-i,--input", request->input, "Recording to read (default -: standard input)")->check(non_empty());
  sub->add_option("-o,--output", request->output, "Where to write it (default -: standard output, pipe format)")->check(non_empty());
  sub->add_flag("-b,--build-ids", request->build_ids, "Add the build-ids of the DSOs samples hit");
  sub->add_flag("--buildid-all", request->buildid_all, "Add the build-ids of every DSO mapped");
  sub->add_flag("-j,--jit", request->jit,
                "Name JIT code from its jit-PID.dump: an ELF file per function beside the dump, mapped where the JIT loaded it "
                "(record with -k mono)");
  sub->callback([request, &inv] {
    inv.action = [request, &inv] {
      session::inject(*request, *inv.err);
      return 0;
    };
  });
}

}  // namespace vperf::cli
