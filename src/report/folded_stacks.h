#pragma once
// Folded stacks: the text format of Brendan Gregg's stackcollapse-perf.pl, which
// flamegraph.pl, difffolded.pl, inferno and speedscope read.
//
//   comm;root_function;...;leaf_function COUNT\n
//
// One line per distinct stack, frames root first separated by ';', then one space and the
// count in decimal. Lines are sorted by their stack text, byte by byte (perl's `sort { $a cmp
// $b }`); two stacks that print the same are one line with the counts summed.
//
// What stackcollapse-perf.pl does by default, and vperf too:
//  - the process name comes first (it has no option to leave it out; --pid/--tid add the ids,
//    see process_label() in stack_profile.h), with spaces turned into '_';
//  - no annotations: "_[k]" after kernel frames only with --kernel, "_[j]" after JIT frames only
//    with --jit, both with --all (here FoldedOptions::annotations);
//  - names are tidied (its $tidy_generic and $tidy_java, always on): ';' becomes ':', the
//    argument list from the first '(' on is dropped unless the name looks like a Go method
//    ("pkg.(*T).M") or the '(' opens "(anonymous namespace)", quote characters are deleted,
//    and in stacks whose process name starts with "java" a leading 'L' is dropped from names
//    containing '/'. FoldedOptions::tidy = false keeps names as they are (';' still becomes
//    ':' and line breaks become spaces, or the line would not parse back).
//  - its --inline (addr2line un-inlining, "_[i]" on inlined frames) has no separate switch:
//    inlined frames come from the DWARF of unwound frames (SampleReplay) as frames of kind
//    Inlined and get "_[i]" when Annotations::inlined is set.
#include <ostream>
#include <string>
#include <string_view>

#include "core/error.h"
#include "report/stack_profile.h"

namespace vperf::report {

struct FoldedOptions {
  Annotations annotations{};
  bool tidy = true;
};

// stackcollapse-perf.pl's clean-up of one function name. `java` is true in stacks whose
// process name starts with "java".
std::string tidy_frame_name(std::string_view name, bool java);

void write_folded(std::ostream& out, const StackProfile& profile, const FoldedOptions& options = {});
std::string folded_text(const StackProfile& profile, const FoldedOptions& options = {});

// The two-count lines of difffolded.pl: "stack COUNT_BEFORE COUNT_AFTER", sorted like
// folded_text(). Stacks missing on one side count 0 there.
std::string diff_folded_text(const StackProfile& before, const StackProfile& after,
                             const FoldedOptions& options = {});

// Parses folded text as flamegraph.pl reads it: the count is the run of digits at the end of
// the line after a whitespace character; everything before that character is the stack, split
// at ';' (trailing empty frames dropped, as perl's split does). Frames ending in an annotation
// become frames of that kind without it (frame_from_label()); the rest are User frames.
// Blank lines are skipped; a line without a count, or with a fractional one, is an error
// naming its line number.
Result<StackProfile> parse_folded(std::string_view text);

// What parse_folded(folded_text(profile, options)) gives, without the text: each distinct
// frame named, annotated and read back once (per stack kind: java or not), and the stacks that
// fold to the same line merged. The flame graph draws from this.
StackProfile folded_and_read_back(const StackProfile& profile, const FoldedOptions& options = {});

struct DiffProfiles {
  StackProfile before;
  StackProfile after;
};
// Parses difffolded.pl's output (two counts per line).
Result<DiffProfiles> parse_diff_folded(std::string_view text);

}  // namespace vperf::report
