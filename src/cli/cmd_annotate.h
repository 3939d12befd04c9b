#pragma once
// vperf annotate [--stdio] [-i perf.data|-] [-M att|intel] [--json] [SYMBOL]
//
// Disassembly of the sampled symbols with the share of each symbol's samples per instruction
// and the source lines from the DSO's DWARF, as `perf annotate --stdio` prints it (perf 6.1):
// every symbol with samples, hottest first, or only SYMBOL. Code comes from the DSO's file, the
// [vdso] image, or /proc/kcore for the kernel (see report/annotate_code.h); a symbol whose code
// cannot be read is reported on stderr with the reason, one line each. docs/annotate.md.
#include <ostream>
#include <string>

#include <filesystem>

#include "session/reading_session.h"

namespace vperf::cli {

struct AnnotateOptions {
  session::ReadingInput source;  // -i, --symfs, vperf kvm's guests
  std::string symbol;  // empty: every symbol with samples
  std::string disassembler_style = "att";
  bool json = false;
  bool stdio = false;  // perf's --stdio: accepted, text on stdout is the only interface
  std::filesystem::path kcore = "/proc/kcore";  // where kernel code is read (tests point it elsewhere)
};

// Returns 0 when at least one symbol was annotated.
int run_annotate(const AnnotateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace vperf::cli
