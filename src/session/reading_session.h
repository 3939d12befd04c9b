#pragma once
// What every command that reads a recording starts from (report, script, annotate, flamegraph,
// kvm report/script/flamegraph/annotate, kvm stat report; next top, export, diff and the
// analysis commands): the recording opened (a file, or perf's pipe format on standard input),
// the machines its samples are resolved in (the host with this user's kernel-symbol cache, the
// guests vperf kvm names, the machines whose samples are shown), the unwinder of --call-graph
// dwarf samples, and the one wording of what went wrong with the input. A command wires its
// options onto a ReadingInput, opens the session and hands its parts to the library pass it
// runs (report::build_report, report::SampleReplay, report::sample_stacks, ...).
//
// Failures that end the command are UserErrors that name the input and say what to do.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "data/perf_data_reader.h"
#include "guest/guest_symbols.h"
#include "report/report_header.h"
#include "symbols/machines.h"
#include "unwind/user_stack_unwinder.h"

namespace vperf::session {

// -i, --symfs and vperf kvm's guest options, as the commands that read recordings share them.
struct ReadingInput {
  std::string input = "perf.data";   // a file, or "-": perf's pipe format on standard input
  symbols::SymbolConfig symbols{};   // --symfs
  guest::GuestSymbolSources guests{};  // vperf kvm: the guests' symbols
  symbols::SampleScope scope{};      // vperf kvm: --host/--guest (perf kvm shows the guest only)
};

// The input of report, script and annotate when -i is not given, as perf picks it: standard
// input when it is a pipe (perf record -o - | vperf report), else perf.data.
std::string default_input();

// Adds the guest machines `guests` describes (nothing when it is empty). Throws UserError naming
// the file and the fix when a guest's symbols are unusable (record checks them this way before
// it starts).
void add_guests(symbols::Machines& machines, const guest::GuestSymbolSources& guests);

// The UserError that ends a command whose records could not be read from `name` (a recording
// damaged past what a warning covers).
UserError unreadable_recording(const std::string& name, const Error& error);

class ReadingSession {
 public:
  // Opens the input. `record_hint` is the command that makes such a recording ("vperf record -g
  // -- COMMAND"), said when there is none to read. Throws UserError.
  ReadingSession(ReadingInput input, std::string record_hint);
  ~ReadingSession();
  ReadingSession(const ReadingSession&) = delete;
  ReadingSession& operator=(const ReadingSession&) = delete;

  data::PerfDataReader& reader() { return reader_; }
  bool is_pipe() const { return reader_.is_pipe(); }
  // "the pipe", or the file's name as given.
  std::string name() const;
  // What perf's header shows about the input: its name, and when it was captured (the file's
  // last change).
  report::HeaderInfo header_info() const;

  // The machines samples are resolved in, made when first asked for (a header needs none):
  // the host with this user's cache of the running kernel's symbols (read once per boot, not
  // once per run), the guests, the scope. Throws UserError when a guest's symbols are unusable.
  symbols::Machines& machines();
  // libdwfl's unwinder for the user stacks --call-graph dwarf samples carry, made when first
  // asked for.
  unwind::UserStackUnwinder* unwinder();

  // The error that ends a command whose pass could not read the records (the reader found the
  // input damaged past what a warning covers).
  UserError unreadable(const Error& error) const;
  // The error for an input without samples.
  UserError no_samples() const;

  // The reader's warnings, "vperf: warning: " each. A truncated file is one event which the
  // reader may describe twice: `truncated` prints them as one line.
  void print_warnings(std::ostream& err, bool truncated = false) const;

 private:
  ReadingInput input_;
  std::string record_hint_;
  data::PerfDataReader reader_;
  std::optional<symbols::Machines> machines_;
  std::unique_ptr<unwind::UserStackUnwinder> unwinder_;
};

}  // namespace vperf::session
