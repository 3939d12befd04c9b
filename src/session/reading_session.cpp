#include "session/reading_session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>
#include <ostream>

#include "core/huge_page_heap.h"
#include "core/private_files.h"
#include "unwind/dwarf_unwinder.h"

namespace vperf::session {

namespace {

std::string name_of(const std::string& input) { return input == "-" ? std::string("the pipe") : input; }

data::PerfDataReader open_input(const std::string& input, const std::string& record_hint) {
  Result<data::PerfDataReader> reader =
      input == "-" ? data::PerfDataReader::open_pipe(STDIN_FILENO) : data::PerfDataReader::open_file(input);
  if (!reader)
    throw UserError("cannot read " + name_of(input) + ": " + reader.error().describe(),
                    "record one first: " + record_hint + " (or give -i FILE)");
  return std::move(reader).value();
}

// When the file (or the pipe) last changed: perf's "# captured on".
std::optional<int64_t> captured_on(const std::string& input) {
  struct stat st {};
  int rc = input == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(input.c_str(), &st);
  if (rc != 0) return std::nullopt;
  return static_cast<int64_t>(st.st_mtime);
}

}  // namespace

void add_guests(symbols::Machines& machines, const guest::GuestSymbolSources& guests) {
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

std::string default_input() {
  struct stat st {};
  return ::fstat(0, &st) == 0 && S_ISFIFO(st.st_mode) ? "-" : "perf.data";
}

ReadingSession::ReadingSession(ReadingInput input, std::string record_hint)
    : input_(std::move(input)), record_hint_(std::move(record_hint)), reader_(open_input(input_.input, record_hint_)) {
  core::back_heap_with_huge_pages();  // what the reading builds is most of the command's page faults
}

ReadingSession::~ReadingSession() = default;

std::string ReadingSession::name() const { return name_of(input_.input); }

report::HeaderInfo ReadingSession::header_info() const { return {input_.input, captured_on(input_.input)}; }

symbols::Machines& ReadingSession::machines() {
  if (machines_) return *machines_;
  symbols::SymbolConfig config = input_.symbols;
  config.kernel_image_cache = user_cache_location("kernel-symbols");
  // The host's user-space files, by the build-id the recording gives them (perf's BUILD_ID
  // table: the files its samples hit).
  auto recorded = std::make_shared<std::map<std::string, symbols::BuildId>>();
  for (const data::BuildIdEntry& entry : reader_.features().build_ids)
    if ((entry.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER && !entry.build_id.empty())
      recorded->emplace(entry.filename, symbols::BuildId{entry.build_id});
  if (!recorded->empty()) config.recorded_build_ids = std::move(recorded);
  symbols::Machines& machines = machines_.emplace(config);
  machines.set_sample_scope(input_.scope);
  add_guests(machines, input_.guests);
  return machines;
}

unwind::UserStackUnwinder* ReadingSession::unwinder() {
  // The samples' registers are numbered as the recording machine numbers them.
  if (!unwinder_) unwinder_ = unwind::make_dwarf_unwinder({.arch = unwind::register_arch(reader_.features().arch)});
  return unwinder_.get();
}

UserError unreadable_recording(const std::string& name, const Error& error) {
  return UserError("cannot read the samples of " + name + ": " + error.describe(), "the recording is damaged: record it again");
}

UserError ReadingSession::unreadable(const Error& error) const { return unreadable_recording(name(), error); }

UserError ReadingSession::no_samples() const {
  return UserError(name() + " has no samples", "record some: " + record_hint_);
}

void ReadingSession::print_warnings(std::ostream& err, bool truncated) const {
  const std::vector<std::string>& warnings = reader_.warnings();
  if (warnings.empty()) return;
  if (!truncated) {
    for (const std::string& warning : warnings) err << "vperf: warning: " << warning << '\n';
    return;
  }
  err << "vperf: warning: ";
  for (size_t i = 0; i < warnings.size(); ++i) err << (i ? "; " : "") << warnings[i];
  err << '\n';
}

}  // namespace vperf::session
