// --call-graph dwarf recordings (perf's and vperf's) unwound by vperf's libdwfl unwinder,
// against the ground truth of the same file: `perf script` unwinds every sample itself (perf
// 6.1 with libunwind), and the spin workload's designed profile (run_spin -> spin_phase_outer
// -> spin_phase_hash x2 / spin_phase_math -> leaves, about 2:1).
//
// vperf-workload-dwarf is built -O2 -fomit-frame-pointer: only its .eh_frame can unwind it.
// vperf-workload keeps frame pointers; DWARF unwinding must not care either way.
#include <time.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "data/perf_data_reader.h"
#include "report/sample_replay.h"
#include "report/sample_stacks.h"
#include "support/background.h"
#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "support/processes.h"
#include "support/run_program.h"
#include "symbols/machines.h"
#include "unwind/dwarf_unwinder.h"

namespace vperf {
namespace {

using SampleKey = std::pair<int, uint64_t>;          // (tid, time in ns): one sample
using UserFrames = std::vector<std::string>;           // symbol names, leaf first

enum class Recorder { Perf, Vperf };

std::string join(const UserFrames& frames) {
  std::string out;
  for (const std::string& f : frames) out += (out.empty() ? "" : ";") + f;
  return out;
}

class DwarfUnwind : public ::testing::Test {
 protected:
  // `workload spin 500` (or `workload JOB MS`) recorded with cpu-clock at 999 Hz and
  // --call-graph dwarf.
  std::string record(Recorder recorder, const std::string& workload, const std::string& name,
                     const std::string& job = "spin", const std::string& ms = "500") {
    std::string data = (scratch_.root() / name).string();
    std::vector<std::string> argv = {"record", "-q", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf",
                                     "-o", data, "--", workload, job, ms};
    if (recorder == Recorder::Perf) argv.insert(argv.begin(), "perf");
    test::ProgramResult r = recorder == Recorder::Perf ? test::run_program(argv) : test::run_vperf(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return data;
  }

  // perf script's user frames per sample (--no-inline: one line per address, as the unwinder
  // gives them; the kernel frames of samples taken in the kernel are left out).
  static std::map<SampleKey, UserFrames> perf_script_frames(const std::string& data) {
    test::ProgramResult r =
        test::run_program({"perf", "script", "-i", data, "--ns", "--no-inline", "-F", "tid,time,ip,sym,dso"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<SampleKey, UserFrames> out;
    std::istringstream in(r.out);
    UserFrames* current = nullptr;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      if (line[0] != '\t') {  // "  575 16534.546341133: "
        int tid = 0;
        unsigned long long sec = 0, ns = 0;
        current = nullptr;
        if (std::sscanf(line.c_str(), " %d %llu.%llu:", &tid, &sec, &ns) == 3)
          current = &out[{tid, sec * 1000000000ULL + ns}];
        continue;
      }
      // "\t            2d6b spin_leaf_hash (/tmp/unw/wd)": address, symbol (may hold spaces), (dso)
      if (current == nullptr) continue;
      std::string text = line.substr(line.find_first_not_of(" \t"));
      size_t sym_at = text.find(' ');
      size_t dso_at = text.rfind(" (");
      if (sym_at == std::string::npos || dso_at == std::string::npos || dso_at < sym_at) continue;
      std::string dso = text.substr(dso_at + 2, text.size() - dso_at - 3);
      if (dso == "[kernel.kallsyms]" || dso.starts_with("[kernel.")) continue;
      current->push_back(text.substr(sym_at + 1, dso_at - sym_at - 1));
    }
    return out;
  }

  // vperf's user frames per sample, through report::SampleReplay with the dwarf unwinder.
  static std::map<SampleKey, UserFrames> vperf_frames(const std::string& data, unwind::DwarfUnwinder& unwinder) {
    Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(data);
    EXPECT_TRUE(reader.ok());
    std::map<SampleKey, UserFrames> out;
    if (!reader) return out;
    symbols::Machines machines{symbols::SymbolConfig{}};
    report::SampleReplay replay(machines, report::ReplayOptions{.unwinder = &unwinder});
    Result<data::ReadStats> stats = replay.run(reader.value(), [&](const report::ResolvedSample& s) {
      UserFrames& frames = out[{s.tid, s.time}];
      for (uint32_t id : s.frames()) {
        const report::ProfileFrame& f = s.profile->frame(id);
        if (f.cpumode != PERF_RECORD_MISC_USER || f.inline_depth != 0) continue;
        frames.push_back(f.at.symbol ? std::string(f.at.symbol_name()) : "[unknown]");
      }
      return true;
    });
    EXPECT_TRUE(stats.ok());
    return out;
  }

  // perf 6.1's libunwind gives up on some stacks (exit handlers', the dynamic loader's at
  // start-up, a user ip outside every map just after exec): it ends them with a frame it cannot
  // name, or shows no user frame at all, where vperf's unwinder shows the same frames and goes
  // on (or shows the ip as "[unknown]").
  static bool gave_up_where_vperf_went_on(const UserFrames& perf, const UserFrames& vperf) {
    if (perf.empty()) return !vperf.empty();
    return perf.back() == "[unknown]" && vperf.size() >= perf.size() && std::equal(perf.begin(), perf.end() - 1, vperf.begin());
  }

  // Samples whose user frames are the same in both, out of perf's, and those where perf gave up
  // and vperf went on from the same frames; prints the rest.
  struct Agreement {
    size_t same = 0, perf_gave_up = 0, total = 0;
  };
  static Agreement agreement(const std::map<SampleKey, UserFrames>& perf, const std::map<SampleKey, UserFrames>& vperf) {
    Agreement a;
    size_t shown = 0;
    for (const auto& [key, frames] : perf) {
      ++a.total;
      auto it = vperf.find(key);
      if (it != vperf.end() && it->second == frames) {
        ++a.same;
      } else if (it != vperf.end() && gave_up_where_vperf_went_on(frames, it->second)) {
        ++a.perf_gave_up;
      } else if (shown++ < 5) {
        std::cout << "sample tid " << key.first << " time " << key.second << "\n  perf:  " << join(frames)
                  << "\n  vperf: " << (it == vperf.end() ? "(missing)" : join(it->second)) << "\n";
      }
    }
    return a;
  }

  static bool records_data_maps(const std::string& data) {
    Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(data);
    if (!reader) return false;
    for (const data::EventAttrEntry& entry : reader.value().attrs())
      if (!entry.attr.mmap_data) return false;
    return !reader.value().attrs().empty();
  }

  // The workload's designed chains in the folded profile report::sample_stacks builds.
  struct SpinSplit {
    uint64_t hash = 0, math = 0, total = 0;  // periods, as the flame graph counts them
    uint64_t samples = 0;
  };
  static SpinSplit spin_split(const std::string& data, unwind::UserStackUnwinder& unwinder) {
    SpinSplit split;
    Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(data);
    EXPECT_TRUE(reader.ok());
    if (!reader) return split;
    symbols::Machines machines{symbols::SymbolConfig{}};
    Result<report::SampleStacks> stacks = report::sample_stacks(reader.value(), machines, &unwinder);
    EXPECT_TRUE(stacks.ok());
    if (!stacks) return split;
    split.samples = stacks->samples;
    auto has_chain = [](const report::StackView& stack, const std::vector<std::string>& chain) {
      for (size_t i = 0; i + chain.size() <= stack.size(); ++i) {
        if (!stack[i].name.ends_with("run_spin")) continue;
        bool all = true;
        for (size_t j = 1; j < chain.size(); ++j) all = all && stack[i + j].name == chain[j];
        if (all) return true;
      }
      return false;
    };
    for (const auto& [stack, count] : stacks->profile.stacks()) {
      split.total += count;
      if (has_chain(stack, {"run_spin", "spin_phase_outer", "spin_phase_hash", "spin_leaf_hash"})) split.hash += count;
      if (has_chain(stack, {"run_spin", "spin_phase_outer", "spin_phase_math", "spin_leaf_math"})) split.math += count;
    }
    return split;
  }

  void check(Recorder recorder, const std::string& workload) {
    VPERF_REQUIRE(!test::find_program("perf").empty(), "perf for the reference unwinding");
    std::string data = record(recorder, workload, "dwarf.data");
    unwind::DwarfUnwinder unwinder;

    SpinSplit split = spin_split(data, unwinder);
    ASSERT_GT(split.samples, 300u) << "about 500 samples of 1 ms";
    const double in_leaves = static_cast<double>(split.hash + split.math) / static_cast<double>(split.total);
    // Most of the time is in the two designed leaves (the rest in clock_gettime, a syscall on
    // VMs, and the loops): a check that the recording is of the workload, not of the product.
    EXPECT_GT(in_leaves, 0.5) << split.hash << " hash + " << split.math << " math of " << split.total;
    const double hash_share = static_cast<double>(split.hash) / static_cast<double>(split.hash + split.math);
    EXPECT_NEAR(hash_share, 2.0 / 3.0, 0.15) << split.hash << " hash vs " << split.math << " math";
    std::cout << split.samples << " samples, " << in_leaves * 100 << "% in the designed chains, hash share "
              << hash_share << "\n";

    // perf's libunwind reads a file's .eh_frame_hdr through the process's maps, so perf script
    // unwinds only recordings that have the read-only (non-code) maps of each file too: perf
    // record --call-graph dwarf turns on attr.mmap_data for that, and so must vperf record.
    ASSERT_TRUE(records_data_maps(data)) << "a --call-graph dwarf recording without data maps (attr.mmap_data)";
    std::map<SampleKey, UserFrames> theirs = perf_script_frames(data);
    std::map<SampleKey, UserFrames> ours = vperf_frames(data, unwinder);
    ASSERT_GT(theirs.size(), 300u);
    EXPECT_EQ(ours.size(), theirs.size());
    const Agreement agreed = agreement(theirs, ours);
    std::cout << "same user frames as perf script: " << agreed.same << " of " << agreed.total << " samples, "
              << agreed.perf_gave_up << " more where perf gave up\n";
    EXPECT_EQ(agreed.same + agreed.perf_gave_up, agreed.total);
  }

  test::TempTree scratch_;
};

TEST_F(DwarfUnwind, PerfRecordingOfTheFramePointerlessBuildAgreesWithPerfScript) {
  check(Recorder::Perf, VPERF_WORKLOAD_DWARF);
}

TEST_F(DwarfUnwind, VperfRecordingOfTheFramePointerlessBuildAgreesWithPerfScript) {
  check(Recorder::Vperf, VPERF_WORKLOAD_DWARF);
}

TEST_F(DwarfUnwind, PerfRecordingOfTheFramePointerBuildAgreesWithPerfScript) {
  check(Recorder::Perf, VPERF_WORKLOAD);
}

TEST_F(DwarfUnwind, VperfRecordingOfTheFramePointerBuildAgreesWithPerfScript) {
  check(Recorder::Vperf, VPERF_WORKLOAD);
}

// The stacks perf script unwinds from a recording, each with its share of the samples, as
// "leaf;caller;...": the profile a reader sees, whoever recorded the file.
using StackShares = std::map<std::string, double>;

StackShares stack_shares(const std::map<SampleKey, UserFrames>& samples) {
  StackShares shares;
  for (const auto& [key, frames] : samples) shares[join(frames)] += 1.0 / static_cast<double>(samples.size());
  return shares;
}

std::string describe(const StackShares& shares) {
  std::string out;
  for (const auto& [stack, share] : shares)
    if (share >= 0.02) out += "  " + std::to_string(static_cast<int>(share * 100)) + "% " + stack + "\n";
  return out;
}

// perf 6.1 must unwind vperf's --call-graph dwarf recording as deep as its own recording of the
// same target. The workload is the frame-pointerless spin, whose designed stacks
// (spin_leaf_hash <- spin_phase_hash <- spin_phase_outer <- run_spin <- main <- libc's start)
// hold most samples; sampling jitter moves their shares by a few percent, so each stack that
// holds a tenth of one file's samples must hold at least a twentieth of the other's. A file perf
// cannot unwind gives stacks of the sampled ip alone, which perf's own file never has.
class DwarfParity : public DwarfUnwind {
 protected:
  enum class Target { RunningProcess, SystemWide, Command };

  // perf script's stacks of the workload's samples in a recording of `target` by `recorder`.
  StackShares recorded_stacks(Recorder recorder, Target target, const std::string& name) {
    const std::string data = (scratch_.root() / name).string();
    std::vector<std::string> argv = {"record", "-q", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf", "-o", data};
    if (target == Target::RunningProcess) argv.insert(argv.end(), {"-p", std::to_string(spinning_->pid())});
    if (target == Target::SystemWide) argv.push_back("-a");
    if (target == Target::Command)
      argv.insert(argv.end(), {"--", VPERF_WORKLOAD_DWARF, "spin", "1000"});
    else
      argv.insert(argv.end(), {"--", "sleep", "2"});  // times the recording of a process that already runs
    if (recorder == Recorder::Perf) argv.insert(argv.begin(), "perf");
    test::ProgramResult r = recorder == Recorder::Perf ? test::run_program(argv) : test::run_vperf(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<SampleKey, UserFrames> samples = perf_script_frames(data);
    if (target != Target::Command) std::erase_if(samples, [&](const auto& s) { return s.first.first != spinning_->pid(); });
    EXPECT_GT(samples.size(), 50u) << "samples of the workload in " << name;
    return stack_shares(samples);
  }

  // The spin workload, started before either recorder and running through both recordings;
  // ready once it has used CPU time beyond its start-up (its loader is done, every library is
  // mapped), so the recorders find its maps in /proc, not in the kernel's records of an exec.
  void start_spinning() {
    spinning_.emplace(std::vector<std::string>{VPERF_WORKLOAD_DWARF, "spin", "600000"});
    ASSERT_GT(spinning_->pid(), 0);
    ASSERT_TRUE(test::wait_until([&] { return test::cpu_ticks(spinning_->pid()) >= 2; }, std::chrono::seconds(30)))
        << "the workload never started spinning";
  }

  void check_parity(Target target) {
    VPERF_REQUIRE(!test::find_program("perf").empty(), "perf for the reference recording and unwinding");
    if (target == Target::SystemWide) VPERF_REQUIRE(test::running_as_root(), "root to sample every CPU (-a)");
    if (target != Target::Command) start_spinning();
    const StackShares theirs = recorded_stacks(Recorder::Perf, target, "perf.data");
    const StackShares ours = recorded_stacks(Recorder::Vperf, target, "vperf.data");
    auto share_in = [](const StackShares& shares, const std::string& stack) {
      auto it = shares.find(stack);
      return it == shares.end() ? 0.0 : it->second;
    };
    size_t designed = 0;
    for (const auto& [stack, share] : theirs) {
      if (share < 0.1) continue;
      ++designed;
      EXPECT_GE(share_in(ours, stack), 0.05) << stack << " holds " << share << " of perf's file";
    }
    for (const auto& [stack, share] : ours) {
      if (share < 0.1) continue;
      EXPECT_GE(share_in(theirs, stack), 0.05) << stack << " holds " << share << " of vperf's file";
    }
    EXPECT_GE(designed, 1u);
    std::cout << "perf script on perf's file:\n" << describe(theirs) << "perf script on vperf's file:\n" << describe(ours);
  }

  std::optional<test::Background> spinning_;
};

TEST_F(DwarfParity, PerfUnwindsVperfsRecordingOfARunningProcessAsItsOwn) { check_parity(Target::RunningProcess); }

TEST_F(DwarfParity, PerfUnwindsVperfsSystemWideRecordingAsItsOwn) { check_parity(Target::SystemWide); }

TEST_F(DwarfParity, PerfUnwindsVperfsRecordingOfACommandAsItsOwn) { check_parity(Target::Command); }

TEST_F(DwarfUnwind, WithoutTheUnwinderOnlyTheSampledIpRemains) {
  // The control: the same recording without an unwinder has no caller frames at all, so the
  // chains above come from the stack copies.
  std::string data = record(Recorder::Vperf, VPERF_WORKLOAD_DWARF, "plain.data");
  Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(data);
  ASSERT_TRUE(reader.ok());
  symbols::Machines machines{symbols::SymbolConfig{}};
  Result<report::SampleStacks> stacks = report::sample_stacks(reader.value(), machines, nullptr);
  ASSERT_TRUE(stacks.ok());
  // The sampled ip itself may be in spin_phase_outer; no frame above the leaf may be.
  for (const auto& [stack, count] : stacks->profile.stacks())
    for (size_t i = 0; i + 1 < stack.size(); ++i) EXPECT_FALSE(stack[i].name.ends_with("spin_phase_outer")) << count;
}

// perf script's default output (and vperf script's) as samples of frames grouped by address:
// an inline chain is the frames sharing one address, innermost first, the out-of-line function
// last.
struct ScriptFrame {
  std::string name;  // without "+0x..."
  std::string dso;   // "inlined" for an inlined frame, as the line ends
};
struct AddressGroup {
  std::string address;
  std::vector<ScriptFrame> frames;
};
struct ScriptSample {
  std::string header;
  std::vector<AddressGroup> groups;
};

std::vector<ScriptSample> parse_script(const std::string& text) {
  std::vector<ScriptSample> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != '\t') {
      samples.push_back(ScriptSample{line, {}});
      continue;
    }
    if (samples.empty()) continue;
    // "\t            2ff3 inline_inner+0x33 (inlined)"
    std::string body = line.substr(line.find_first_not_of(" \t"));
    size_t sym_at = body.find(' ');
    size_t dso_at = body.rfind(" (");
    if (sym_at == std::string::npos || dso_at == std::string::npos || dso_at < sym_at) continue;
    std::string address = body.substr(0, sym_at);
    std::string name = body.substr(sym_at + 1, dso_at - sym_at - 1);
    if (size_t plus = name.rfind("+0x"); plus != std::string::npos) name.resize(plus);
    ScriptFrame frame{name, body.substr(dso_at + 2, body.size() - dso_at - 3)};
    std::vector<AddressGroup>& groups = samples.back().groups;
    if (groups.empty() || groups.back().address != address) groups.push_back(AddressGroup{address, {}});
    groups.back().frames.push_back(std::move(frame));
  }
  return samples;
}

std::vector<std::string> inlined_names(const AddressGroup& group) {
  std::vector<std::string> names;
  for (size_t i = 0; i + 1 < group.frames.size(); ++i) names.push_back(group.frames[i].name);
  return names;
}

// The source lines of function `name`'s body in `file`: from the line that defines it to the
// first "}" in column 0 after it. The workload's functions are written that way.
std::pair<int, int> body_lines(const std::string& file, const std::string& name) {
  std::ifstream in(file);
  int number = 0, first = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (first == 0 && line.find(" " + name + "(") != std::string::npos && line.find(';') == std::string::npos)
      first = number;
    else if (first != 0 && line.starts_with("}"))
      return {first, number};
  }
  return {0, 0};
}

// binutils' addr2line -i: the source line of the innermost frame at a file address, from the
// line table (its function names can be wrong, its lines are not). {file, line}.
// perf 6.1's libunwind gives up on some stacks (see gave_up_where_vperf_went_on above): no user
// frame (none at all, or only the kernel's: a sample in execve, whose user ip is in no map yet),
// or a last frame it cannot name, where vperf's unwinder goes on or shows the ip as "[unknown]".
bool perf_gave_up(const std::vector<AddressGroup>& groups) {
  if (groups.empty() || groups.back().frames.empty()) return true;
  const ScriptFrame& last = groups.back().frames.back();
  return last.name == "[unknown]" || last.dso == "[kernel.kallsyms]";
}

std::pair<std::string, int> addr2line_innermost(const std::string& binary, const std::string& address) {
  test::ProgramResult r = test::run_program({"addr2line", "-e", binary, "-i", "0x" + address});
  std::string first = r.out.substr(0, r.out.find('\n'));
  size_t colon = first.rfind(':');
  if (colon == std::string::npos) return {"", 0};
  return {first.substr(0, colon), std::atoi(first.c_str() + colon + 1)};
}

// The functions inlined at each address of `binary`, innermost first (the out-of-line function
// that holds the address left out), as llvm-symbolizer reads them: LLVM's own DWARF reader,
// neither libdw (vperf) nor binutils (perf).
std::map<std::string, std::vector<std::string>> llvm_inlined_functions(const test::TempTree& scratch, const std::string& binary,
                                                                        const std::set<std::string>& addresses) {
  std::string input;
  for (const std::string& address : addresses) input += "0x" + address + "\n";
  scratch.write("addresses", input);
  test::ProgramResult r = test::run_program(
      {"sh", "-c", "llvm-symbolizer --inlining --obj='" + binary + "' < '" + (scratch.root() / "addresses").string() + "'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(r.out);
  auto address = addresses.begin();
  std::vector<std::string> chain;  // function names; every other line is a file:line:column
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      chain.push_back(line);
      std::getline(in, line);
      continue;
    }
    if (address == addresses.end()) break;
    if (!chain.empty()) chain.pop_back();
    out[*address++] = chain;
    chain.clear();
  }
  EXPECT_EQ(out.size(), addresses.size()) << r.out;
  return out;
}

// The inline workload (inline_outer's hot loop is inline_inner's, inlined through
// inline_middle) recorded by vperf with --call-graph dwarf. The truth for each unwound frame is
// the DWARF of the binary; perf 6.1 reads it through binutils' addr2line, vperf through libdw:
//  - every sample, every frame address and the number of frames at each address (the inline
//    chain's length) must be the same as perf script prints;
//  - the inlined functions' names at each address in inline_outer must be llvm-symbolizer's
//    (LLVM's DWARF reader, a third one);
//  - perf's names must be vperf's, except where addr2line (binutils 2.40) names an inlined
//    frame after the out-of-line function: there the line it gives for the innermost frame
//    must lie in the body of the function vperf names (inline_inner). Which frame it misnames
//    depends on the addresses its one long-running process (perf keeps one per DSO) was asked
//    before: asked 0x30 first it names inline_inner "inline_outer"; asked 0x0 and then 0x30,
//    it names inline_inner right and inline_middle "inline_outer" (the order is the samples',
//    so a check that allowed only the first misnaming failed now and then);
//  - by design, most samples are inline_inner <- inline_middle <- inline_outer.
TEST_F(DwarfUnwind, InlinedFramesFollowTheLineTableAndMatchPerf) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf for the reference inline chains");
  VPERF_REQUIRE(!test::find_program("addr2line").empty(), "addr2line (binutils) for the line table");
  VPERF_REQUIRE(!test::find_program("llvm-symbolizer").empty(), "llvm-symbolizer (LLVM's DWARF reader) for the inline chains");
  std::string data = record(Recorder::Vperf, VPERF_WORKLOAD_DWARF, "inline.data", "inline", "500");
  test::ProgramResult perf = test::run_program({"perf", "script", "-i", data});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  test::ProgramResult vperf = test::run_vperf({"script", "-i", data});
  ASSERT_EQ(vperf.exit_code, 0) << vperf.err;
  std::vector<ScriptSample> theirs = parse_script(perf.out), ours = parse_script(vperf.out);
  ASSERT_GT(ours.size(), 300u);
  ASSERT_EQ(ours.size(), theirs.size());

  const std::string workload = VPERF_WORKLOAD_DWARF;
  size_t designed = 0, mislabelled = 0, chains = 0, gave_up = 0;
  std::map<std::string, std::vector<std::string>> outer_chains;  // vperf's inlined names at each address in inline_outer
  for (size_t s = 0; s < ours.size(); ++s) {
    const ScriptSample& o = ours[s];
    const ScriptSample& t = theirs[s];
    ASSERT_EQ(o.header, t.header);
    size_t compared = o.groups.size();
    if (o.groups.size() != t.groups.size()) {
      ASSERT_TRUE(perf_gave_up(t.groups) && o.groups.size() > t.groups.size()) << o.header;
      compared = t.groups.empty() ? 0 : t.groups.size() - 1;
      ++gave_up;
    }
    for (size_t g = 0; g < compared; ++g) {
      const AddressGroup& og = o.groups[g];
      const AddressGroup& tg = t.groups[g];
      ASSERT_EQ(og.address, tg.address) << o.header;
      ASSERT_EQ(og.frames.size(), tg.frames.size()) << o.header << " at " << og.address;
      if (og.frames.size() > 1) ++chains;
      std::vector<std::string> mine = inlined_names(og), perfs = inlined_names(tg);
      if (og.frames.back().name == "inline_outer") outer_chains[og.address] = mine;
      if (mine == perfs) continue;
      // binutils' wrong names: an inlined frame of perf's named after the out-of-line function.
      for (size_t f = 0; f < perfs.size(); ++f) {
        if (perfs[f] != mine[f]) {
          ASSERT_EQ(perfs[f], tg.frames.back().name) << o.header << " at " << og.address << ", frame " << f;
        }
      }
      ++mislabelled;
      if (og.frames.back().dso == workload && perfs[0] != mine[0]) {
        auto [file, line] = addr2line_innermost(workload, og.address);
        auto [first, last] = body_lines(file, mine[0]);
        EXPECT_TRUE(line >= first && line <= last)
            << og.address << ": line " << line << " of " << file << " is not in " << mine[0] << " (" << first << "-"
            << last << ")";
      }
    }
    if (!o.groups.empty()) {
      const std::vector<ScriptFrame>& leaf = o.groups[0].frames;
      if (leaf.size() == 3 && leaf[0].name == "inline_inner" && leaf[1].name == "inline_middle" &&
          leaf[2].name == "inline_outer" && leaf[0].dso == "inlined" && leaf[2].dso == workload)
        ++designed;
    }
  }
  std::cout << ours.size() << " samples, " << designed << " in inline_inner <- inline_middle <- inline_outer, "
            << chains << " inline chains, " << mislabelled << " named wrong by addr2line, " << gave_up
            << " where perf gave up unwinding\n";
  // The workload spends most of its time in the designed chain (the rest in clock_gettime and
  // the outer loops): a check that the recording is of it, not a threshold on the product.
  EXPECT_GT(2 * designed, ours.size());
  // The inline chain at every address sampled in inline_outer, as LLVM reads the DWARF (its
  // names of C++ functions elsewhere carry their parameters, vperf's and perf's do not).
  std::set<std::string> addresses;
  for (const auto& [address, chain] : outer_chains) addresses.insert(address);
  std::map<std::string, std::vector<std::string>> llvm = llvm_inlined_functions(scratch_, workload, addresses);
  for (const auto& [address, chain] : outer_chains) EXPECT_EQ(chain, llvm[address]) << "at " << address;

  // --no-inline: the frames the unwinder found, nothing added (as perf script --no-inline).
  test::ProgramResult plain = test::run_vperf({"script", "--no-inline", "-i", data});
  test::ProgramResult perf_plain = test::run_program({"perf", "script", "--no-inline", "-i", data});
  EXPECT_EQ(plain.out.find("(inlined)"), std::string::npos);
  std::vector<ScriptSample> plain_ours = parse_script(plain.out), plain_theirs = parse_script(perf_plain.out);
  ASSERT_EQ(plain_ours.size(), plain_theirs.size());
  for (size_t s = 0; s < plain_ours.size(); ++s) {
    if (plain_ours[s].groups.size() != plain_theirs[s].groups.size()) {
      ASSERT_TRUE(perf_gave_up(plain_theirs[s].groups) && plain_ours[s].groups.size() > plain_theirs[s].groups.size())
          << plain_ours[s].header;
    }
    for (const AddressGroup& group : plain_ours[s].groups) EXPECT_EQ(group.frames.size(), 1u) << group.address;
  }
}

// report --children gives inlined functions entries of their own, "NAME (inlined)", as perf,
// covering the samples in which the DWARF says they are inlined. perf's own rows are not the
// reference for inlined functions: binutils names some addresses after the out-of-line function
// (see above), so perf's inline_middle row is short of the samples at those addresses.
TEST_F(DwarfUnwind, ReportGivesInlinedFunctionsTheirOwnChildrenEntries) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf report as the reference");
  VPERF_REQUIRE(!test::find_program("llvm-symbolizer").empty(), "llvm-symbolizer (LLVM's DWARF reader) for the inline chains");
  std::string data = record(Recorder::Vperf, VPERF_WORKLOAD_DWARF, "inline.data", "inline", "500");
  auto row = [](const std::string& report, const std::string& symbol) {
    std::istringstream in(report);
    for (std::string line; std::getline(in, line);)
      if (line.ends_with("[.] " + symbol)) return line;
    return std::string();
  };
  test::ProgramResult perf = test::run_program({"perf", "report", "--stdio", "--children", "-g", "none", "-i", data});
  test::ProgramResult vperf = test::run_vperf({"report", "--stdio", "--children", "-g", "none", "-i", data});
  ASSERT_EQ(vperf.exit_code, 0) << vperf.err;
  EXPECT_EQ(row(vperf.out, "inline_outer"), row(perf.out, "inline_outer"));

  // Each sample's period and unwound addresses (perf's unwinding, checked equal to vperf's above).
  test::ProgramResult frames = test::run_program({"perf", "script", "--no-inline", "-F", "period,ip,sym,dso", "-i", data});
  ASSERT_EQ(frames.exit_code, 0) << frames.err;
  const std::string workload = VPERF_WORKLOAD_DWARF;
  std::vector<ScriptSample> samples = parse_script(frames.out);
  std::set<std::string> addresses;
  for (const ScriptSample& sample : samples)
    for (const AddressGroup& group : sample.groups)
      if (group.frames.back().dso == workload) addresses.insert(group.address);
  std::map<std::string, std::vector<std::string>> inlined = llvm_inlined_functions(scratch_, workload, addresses);
  uint64_t total = 0;
  std::map<std::string, uint64_t> period_in;
  for (const ScriptSample& sample : samples) {
    const uint64_t period = std::stoull(sample.header);
    total += period;
    std::set<std::string> in_sample;
    for (const AddressGroup& group : sample.groups)
      if (auto it = inlined.find(group.address); it != inlined.end()) in_sample.insert(it->second.begin(), it->second.end());
    for (const std::string& function : in_sample) period_in[function] += period;
  }
  ASSERT_GT(total, 0u);
  for (const std::string function : {"inline_middle", "inline_inner"}) {
    char expected[32];
    std::snprintf(expected, sizeof expected, "%.2f%%", 100.0 * static_cast<double>(period_in[function]) / static_cast<double>(total));
    std::istringstream line(row(vperf.out, function + " (inlined)"));
    std::string children;
    line >> children;
    EXPECT_EQ(children, expected) << function << "\n" << vperf.out;
  }

  test::ProgramResult plain = test::run_vperf({"report", "--stdio", "--children", "--no-inline", "-i", data});
  EXPECT_EQ(plain.out.find("(inlined)"), std::string::npos);
}

// The flame graph's folded stacks mark inlined frames "_[i]" (stackcollapse-perf.pl --inline),
// caller first; nearly all the weight is in the designed chain.
// perf's rules for inline frames, on inline_shared.c (C: binutils' addr2line, which perf runs,
// names C's inlined frames as DWARF does, so perf's output is the ground truth here): a helper
// inlined into two functions is one branch of the call graph (perf matches inlined entries by
// name); an out-of-line function whose symbol (the alias inline_shared_b_entry) is not its DWARF
// name is "inline_shared_b (inlined)"; a recursion inlined into itself shows the symbol's own
// name without "(inlined)", and its out-of-line frames merge with the inlined ones of that name.
TEST_F(DwarfUnwind, InlineFramesFollowPerfsRulesForSharedAliasedAndRecursiveCode) {
  VPERF_REQUIRE(!test::find_program("perf").empty(), "perf report and script as the reference");
  std::string data = record(Recorder::Perf, VPERF_WORKLOAD_DWARF, "inline-shared.data", "inline-shared", "600");
  // The entries of the workload's own functions, each with its call graph, from the whole
  // table: the time goes there after start-up (perf gives up on some stacks in the dynamic
  // loader, where vperf unwinds on: not this test's subject), and a symbol filter would bring
  // in perf's rule that the first sample to reach an entry decides whether it is shown, which
  // differs where vperf spreads call chains after reading (see docs/report.md).
  const std::set<std::string> functions = {"inline_shared_leaf",    "inline_shared_a",    "inline_shared_b",
                                           "inline_shared_b_entry", "inline_shared_step", "inline_shared_rec",
                                           "inline_shared_rec_top"};
  auto workload_entries = [&](const std::string& report) {
    std::string out;
    bool keep = false;
    std::istringstream in(report);
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("#")) {  // perf's closing tip, and the headers
        keep = false;
        continue;
      }
      const size_t level = line.find("] ");
      const bool entry = line.find('%') != std::string::npos && (line.find("[.] ") != std::string::npos || line.find("[k] ") != std::string::npos) &&
                         line.find("--") == std::string::npos;
      if (entry) {
        std::string symbol = line.substr(level + 2);
        while (!symbol.empty() && symbol.back() == ' ') symbol.pop_back();
        if (symbol.ends_with(" (inlined)")) symbol.resize(symbol.size() - 10);
        keep = functions.contains(symbol);
      }
      if (keep) out += line + "\n";
    }
    while (out.ends_with("\n\n")) out.pop_back();  // the blank lines before perf's tip
    return out;
  };
  std::string no_children;
  for (std::vector<std::string> mode : {std::vector<std::string>{"--no-children"}, {"--no-children", "-g", "caller"},
                                        {"--children"}, {"--children", "-g", "callee"}}) {
    std::vector<std::string> args = {"report", "--stdio", "-i", data};
    args.insert(args.end(), mode.begin(), mode.end());
    std::vector<std::string> perf_args = args;
    perf_args.insert(perf_args.begin(), "perf");
    test::ProgramResult perf = test::run_program(perf_args);
    test::ProgramResult vperf = test::run_vperf(args);
    ASSERT_EQ(perf.exit_code, 0) << perf.err;
    ASSERT_EQ(vperf.exit_code, 0) << vperf.err;
    std::string mine = workload_entries(vperf.out), perfs = workload_entries(perf.out);
    EXPECT_FALSE(perfs.empty()) << perf.out;
    if (mode[0] == "--children") {
      // A call-graph node that merged an inlined and an out-of-line inline_shared_rec is shown
      // under the first of them that made it; in some recordings perf shows the other one
      // there (cause not found yet: see issue 31's note). The graphs' shape and shares are
      // compared with that word left out of graph lines.
      auto unlabelled = [](std::string text) {
        std::string out;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
          const bool graph = line.find("[.] ") == std::string::npos;
          if (graph && line.ends_with(" (inlined)")) line.resize(line.size() - 10);
          out += line + "\n";
        }
        return out;
      };
      mine = unlabelled(mine);
      perfs = unlabelled(perfs);
    }
    EXPECT_EQ(mine, perfs) << "report " << mode[0] << " " << (mode.size() > 1 ? mode[2] : "");
    if (no_children.empty()) no_children = mine;
  }
  // The three shapes are there, in the leaf's call graph: one merged branch of the shared
  // helper, the aliased function under its DWARF name (a sample in its own code is an entry of
  // its ELF symbol, as in perf: not in this graph). The recursion is checked in script below.
  const size_t leaf_at = no_children.find("[.] inline_shared_leaf\n");
  ASSERT_NE(leaf_at, std::string::npos) << no_children;
  const size_t leaf_end = no_children.find("%  vperf-workload-", leaf_at);
  const std::string leaf_graph = no_children.substr(leaf_at, leaf_end == std::string::npos ? std::string::npos : leaf_end - leaf_at);
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = leaf_graph.find(needle); at != std::string::npos; at = leaf_graph.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("--inline_shared_step (inlined)"), 1u) << leaf_graph;
  EXPECT_GE(count("inline_shared_b (inlined)"), 1u) << leaf_graph;
  EXPECT_EQ(count("inline_shared_b_entry"), 0u) << leaf_graph;

  test::ProgramResult perf = test::run_program({"perf", "script", "-i", data});
  test::ProgramResult vperf = test::run_vperf({"script", "-i", data});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  ASSERT_EQ(vperf.exit_code, 0) << vperf.err;
  std::vector<ScriptSample> theirs = parse_script(perf.out), ours = parse_script(vperf.out);
  ASSERT_EQ(ours.size(), theirs.size());
  size_t compared = 0, recursion_as_symbol = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    const ScriptSample& t = theirs[i];
    if (t.groups.empty() || t.groups[0].frames.empty() || t.groups[0].frames[0].name != "inline_shared_leaf") continue;
    ++compared;
    ASSERT_EQ(ours[i].header, t.header);
    ASSERT_EQ(ours[i].groups.size(), t.groups.size()) << t.header;
    for (size_t g = 0; g < t.groups.size(); ++g) {
      ASSERT_EQ(ours[i].groups[g].address, t.groups[g].address) << t.header;
      ASSERT_EQ(ours[i].groups[g].frames.size(), t.groups[g].frames.size()) << t.header << " at " << t.groups[g].address;
      for (size_t f = 0; f < t.groups[g].frames.size(); ++f) {
        const ScriptFrame& mine = ours[i].groups[g].frames[f];
        const ScriptFrame& perfs = t.groups[g].frames[f];
        EXPECT_EQ(mine.name, perfs.name) << t.header << " at " << t.groups[g].address << ", frame " << f;
        EXPECT_EQ(mine.dso, perfs.dso) << t.header << " at " << t.groups[g].address << ", frame " << f;
        if (f + 1 < t.groups[g].frames.size() && mine.name == "inline_shared_rec" && mine.dso != "inlined") ++recursion_as_symbol;
      }
    }
  }
  std::cout << compared << " samples in inline_shared_leaf compared, " << recursion_as_symbol
            << " inlined copies of inline_shared_rec named as its symbol\n";
  EXPECT_GT(compared, 300u);
  EXPECT_GT(recursion_as_symbol, 0u);
}

TEST_F(DwarfUnwind, FoldedStacksCarryTheInlineChain) {
  std::string data = record(Recorder::Vperf, VPERF_WORKLOAD_DWARF, "inline.data", "inline", "500");
  test::ProgramResult folded = test::run_vperf({"flamegraph", "--folded", "-o", "-", "-i", data});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  // inline_inner is only ever reached inlined into inline_middle, inlined into inline_outer:
  // every stack through it must carry that whole chain. The workload spends most of its
  // time there (the rest in clock_gettime, a syscall on VMs without a usable vDSO clock), so at
  // least half of the weight is the designed stack: a check of the recording, not a threshold
  // on the product.
  uint64_t designed = 0, total = 0;
  std::istringstream in(folded.out);
  for (std::string line; std::getline(in, line);) {
    const std::string stack = line.substr(0, line.rfind(' '));
    uint64_t weight = std::stoull(line.substr(line.rfind(' ') + 1));
    total += weight;
    if (stack.find("inline_inner") == std::string::npos) continue;
    // An interrupt taken there adds kernel frames above the user stack.
    std::string user = stack;
    while (user.ends_with("_[k]")) user.erase(user.rfind(';'));
    EXPECT_TRUE(user.ends_with("::run_inline;inline_outer;inline_middle_[i];inline_inner_[i]")) << line;
    designed += weight;
  }
  EXPECT_GT(2 * designed, total) << folded.out;
  test::ProgramResult plain = test::run_vperf({"flamegraph", "--folded", "--no-inline", "-o", "-", "-i", data});
  EXPECT_EQ(plain.out.find("_[i]"), std::string::npos);
}

// Times the unwinder alone, in CPU time of this thread (the machine may be busy otherwise).
class TimedUnwinder : public unwind::UserStackUnwinder {
 public:
  explicit TimedUnwinder(unwind::UserStackUnwinder& inner) : inner_(inner) {}
  void unwind(const symbols::Machine& machine, const symbols::Thread& thread, const data::Sample& sample,
              const perf_event_attr& attr, std::vector<uint64_t>& ips) override {
    const double start = cpu_seconds();
    inner_.unwind(machine, thread, sample, attr, ips);
    seconds += cpu_seconds() - start;
    ++samples;
  }
  std::optional<uint64_t> leaf_caller(const symbols::Machine& machine, const symbols::Thread& thread, const data::Sample& sample,
                                      const perf_event_attr& attr, uint64_t leaf_ip) override {
    return inner_.leaf_caller(machine, thread, sample, attr, leaf_ip);
  }
  double seconds = 0;
  uint64_t samples = 0;

 private:
  static double cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  }
  unwind::UserStackUnwinder& inner_;
};

TEST_F(DwarfUnwind, UnwindsThousandsOfSamplesPerSecond) {
  std::string data = record(Recorder::Vperf, VPERF_WORKLOAD_DWARF, "rate.data");
  unwind::DwarfUnwinder unwinder;
  TimedUnwinder timed(unwinder);
  for (int pass = 0; pass < 3; ++pass) {  // the first pass builds the Dwfl; later ones reuse it
    Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(data);
    ASSERT_TRUE(reader.ok());
    symbols::Machines machines{symbols::SymbolConfig{}};
    report::SampleReplay replay(machines, report::ReplayOptions{.unwinder = &timed});
    ASSERT_TRUE(replay.run(reader.value(), [](const report::ResolvedSample&) { return true; }).ok());
  }
  ASSERT_GT(timed.samples, 900u);
  const double rate = static_cast<double>(timed.samples) / std::max(timed.seconds, 1e-9);
  std::cout << timed.samples << " samples unwound in " << timed.seconds << " s of CPU: " << rate << " samples/s, "
            << unwinder.dwfl_builds() << " Dwfl builds\n";
  RecordProperty("samples_per_second", std::to_string(static_cast<uint64_t>(rate)));
  // 300k samples of 8 KB stacks within a minute.
  EXPECT_GT(rate, 5000.0);
  // Built again only when the process's maps changed (start-up, and each pass has its own
  // Machines), never per sample.
  EXPECT_LT(unwinder.dwfl_builds(), timed.samples / 50);
}

}  // namespace
}  // namespace vperf
