// Temporary wiring until the command lands in this session.
#include "cli/command.h"

namespace vperf::cli {
void add_list_command(CLI::App& app, Invocation& inv) {
  app.add_subcommand("list", "(in progress)")->callback([&inv] { inv.action = [] { return 1; }; });
}
}  // namespace vperf::cli
