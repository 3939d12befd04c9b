#pragma once
// `vperf inject`: perf inject's copy of a recording, from a file or a pipe to a file or a pipe
// (perf's default: standard input to standard output), its records in their order. What it
// changes, as perf inject 6.1 does:
//   - COMPRESSED records (perf record -z) come out as the records they hold;
//   - --jit replaces each JIT dump's marker mapping by its functions' mappings (jit_inject.h);
//   - -b adds the build-ids of the DSOs samples hit (--buildid-all: of every DSO mapped), as
//     the BUILD_ID table of a file or HEADER_BUILD_ID records in a pipe, so a pipe recording
//     gets what perf record gives a file.
// A pipe input is read into memory first (-b needs two passes: the DSOs hit, then the copy).
#include <ostream>
#include <string>

namespace vperf::session {

struct InjectRequest {
  std::string input = "-";   // a file, or "-": standard input
  std::string output = "-";  // a file, or "-": standard output (pipe format)
  bool build_ids = false;    // -b
  bool buildid_all = false;  // --buildid-all
  bool jit = false;          // --jit
};

// Throws UserError when the input cannot be read or the output written; warnings about the
// input go to `err`.
void inject(const InjectRequest& request, std::ostream& err);

}  // namespace vperf::session
