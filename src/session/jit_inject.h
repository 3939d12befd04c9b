#pragma once
// perf inject --jit: a recording of a JIT that wrote a jitdump (jit-PID.dump, see
// symbols/jitdump.h) gets, in place of the dump's marker mapping, one MMAP2 record per
// function the dump names, each mapping an ELF file written beside the dump
// (jitted-PID-INDEX.so, symbols/jit_elf.h) over the code's addresses at the time the JIT loaded
// it; and, as perf 6.1 does, the process's anonymous and memfd mappings after that marker are
// dropped (the ELF files now name that code). report, script, annotate and perf read the result
// as any recording of shared objects.
//
// The dump's times must be the recording's: CLOCK_MONOTONIC, `record -k mono` (perf's -k 1).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "data/perf_data_writer.h"
#include "data/perf_record.h"

namespace vperf::session {

class JitInjector {
 public:
  explicit JitInjector(const std::vector<data::EventAttrEntry>& attrs);
  JitInjector(const JitInjector&) = delete;
  JitInjector& operator=(const JitInjector&) = delete;
  // The ELF files written, unless kept (a failed inject leaves none behind).
  ~JitInjector();

  // What replaces `record` in the output: nullopt to copy it as it is, else the records to
  // write instead (none: drop it). Throws UserError for a dump that cannot be read or a
  // recording whose clock is not the dump's.
  std::optional<std::vector<std::vector<uint8_t>>> replace(const data::Record& record);

  // The build-ids of the ELF files written, for the output's build-id table.
  const std::vector<data::BuildIdEntry>& build_ids() const { return build_ids_; }
  size_t functions() const { return build_ids_.size(); }
  void keep_files() { keep_ = true; }

 private:
  std::vector<std::vector<uint8_t>> inject_dump(const std::string& path);
  std::vector<uint8_t> mmap2_record(const std::filesystem::path& elf, uint32_t pid, uint32_t tid, uint64_t address, uint64_t size,
                                    uint64_t time) const;

  std::vector<data::EventAttrEntry> attrs_;
  data::SampleFormat format_;
  uint64_t first_id_ = 0;
  std::set<uint32_t> jit_pids_;  // processes whose dump was injected
  std::vector<data::BuildIdEntry> build_ids_;
  std::vector<std::filesystem::path> written_;
  bool keep_ = false;
};

}  // namespace vperf::session
