#include "cli/perf_data_input.h"

#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>

#include "core/error.h"
#include "core/private_files.h"

namespace vperf::cli {

data::PerfDataReader open_perf_data(const std::string& input, std::string_view record_command) {
  Result<data::PerfDataReader> reader =
      input == "-" ? data::PerfDataReader::open_pipe(STDIN_FILENO) : data::PerfDataReader::open_file(input);
  if (!reader)
    throw UserError("cannot read " + (input == "-" ? std::string("the pipe") : input) + ": " + reader.error().describe(),
                    "record one first: " + std::string(record_command) + " (or give -i FILE)");
  return std::move(reader).value();
}

UserError unreadable_samples(const std::string& input, const Error& error) {
  return UserError("cannot read the samples of " + (input == "-" ? std::string("the pipe") : input) + ": " +
                       error.describe(),
                   "the recording is damaged: record it again");
}

void add_guests(symbols::Machines& machines, const guest::GuestSymbolSources& guests, symbols::SampleScope scope) {
  machines.set_sample_scope(scope);
  if (guests.empty()) return;
  Result<void> added = guest::add_guest_machines(machines, guests);
  if (!added) {
    const bool hidden = added.error().errno_value == EACCES;
    throw UserError(hidden ? added.error().message : added.error().describe(),
                    hidden ? guest::guest_kallsyms_hint()
                           : "copy /proc/kallsyms and /proc/modules out of the guest as root and give them with "
                             "--guestkallsyms and --guestmodules (or --guestmount DIR with DIR/<VMM pid>/proc/)");
  }
}

symbols::SymbolConfig reader_symbol_config(symbols::SymbolConfig config) {
  config.kernel_image_cache = user_cache_location("kernel-symbols");
  return config;
}

std::optional<int64_t> captured_on(const std::string& input) {
  struct stat st {};
  int rc = input == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(input.c_str(), &st);
  if (rc != 0) return std::nullopt;
  return static_cast<int64_t>(st.st_mtime);
}

}  // namespace vperf::cli
