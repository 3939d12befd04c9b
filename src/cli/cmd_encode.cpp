// Temporary wiring until the command lands in this session.
#include "cli/command.h"

namespace vperf::cli {
void add_encode_command(CLI::App& app, Invocation& inv) {
  app.add_subcommand("encode", "(in progress)")->callback([&inv] { inv.action = [] { return 1; }; });
}
}  // namespace vperf::cli
