#pragma once
// Where a Machine finds its symbols. Passed by value to each Machine; nothing in
// src/symbols reads a path that is not in here, so tests point it at fixtures and a guest's
// Machine points it at files copied out of the guest.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/private_files.h"
#include "symbols/build_id.h"

namespace vperf::symbols {

enum class VdsoSource {
  // The [vdso] image of this process (the same kernel's vdso as every process on this machine
  // has; perf does the same). For a guest or for data from another machine it is wrong: use Skip.
  ThisProcess,
  // No vdso symbols: samples in [vdso] show the dso and "[unknown]".
  Skip,
};

struct SymbolConfig {
  // Prefix for every user-space file path from the trace (perf --symfs). Empty = as recorded.
  std::filesystem::path symfs;
  std::filesystem::path kallsyms = "/proc/kallsyms";
  std::filesystem::path modules = "/proc/modules";
  // A kernel image with symbols (vmlinux, an ELF with .symtab): when set, the kernel's symbols
  // come from it instead of kallsyms (perf's --vmlinux, perf kvm's --guestvmlinux).
  std::filesystem::path vmlinux;
  // Roots of separate debuginfo: ROOT/.build-id/xx/yyyy.debug and ROOT/PATH.debug, in order.
  std::vector<std::filesystem::path> debug_dirs = {"/usr/lib/debug"};
  // Where JIT symbol maps perf-PID.map are (perf: /tmp).
  std::filesystem::path jit_map_dir = "/tmp";
  // The live processes (perf's nsinfo, process_namespace.h): a recorded process that still runs
  // in another mount namespace (a container) has its files read through PROC/PID/root and its
  // JIT map looked for in its own /tmp first. Empty: every file as recorded (guests).
  std::filesystem::path proc = "/proc";
  VdsoSource vdso = VdsoSource::ThisProcess;
  bool demangle = true;
  // The build-ids the recording's BUILD_ID table gives the host's files, by path as recorded:
  // a file at that path with another build-id (rebuilt since) is not used, as perf does not
  // use it, and perf's build-id cache is asked for the copy it keeps.
  std::shared_ptr<const std::map<std::string, BuildId>> recorded_build_ids;
  // perf's build-id cache (perf --buildid-dir); empty: BuildIdCache::default_dir(), ~/.debug.
  std::filesystem::path build_id_cache;
  // Where this boot's kernel image symbols are kept between runs (kernel_image_cache.h); none:
  // /proc/kallsyms is read whole by every run that needs a kernel symbol, as perf reads it.
  std::optional<CacheLocation> kernel_image_cache;
};

}  // namespace vperf::symbols
