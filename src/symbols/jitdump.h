#pragma once
// perf's jitdump files (jit-PID.dump), written by JITs (a JVM's perf agent, node --perf-prof,
// LLVM's PerfJITEventListener) to name the code they generate: a header, then records, as
// tools/perf/Documentation/jitdump-specification.txt lays them out. vperf inject --jit reads
// them (session/jit_inject.h).
//
// The file is outside input written while the JIT runs: every size is bounded by the bytes that
// hold it, a record cut short at the end (the JIT was still writing) ends the file, a record of
// an unknown kind is skipped by its size, and anything else malformed is an Error naming it.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::symbols {

struct JitCodeLoad {  // JIT_CODE_LOAD: a function's code, named, at an address
  uint64_t timestamp = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, code_addr = 0, code_index = 0;
  std::string name;
  std::vector<uint8_t> code;
};

struct JitCodeMove {  // JIT_CODE_MOVE: code loaded before (code_index) now at another address
  uint64_t timestamp = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, old_code_addr = 0, new_code_addr = 0, code_size = 0, code_index = 0;
};

struct Jitdump {
  uint32_t elf_machine = 0;  // EM_X86_64, EM_AARCH64...
  uint32_t pid = 0;
  uint64_t timestamp = 0;
  bool arch_timestamps = false;  // JITDUMP_FLAGS_ARCH_TIMESTAMP: times are the CPU's counter (TSC)
  // In file order. Debug-line and unwinding records are not kept (vperf's jitted ELF files carry
  // symbols only); JIT_CODE_CLOSE ends the list.
  struct Entry {
    bool is_move = false;
    JitCodeLoad load;
    JitCodeMove move;
  };
  std::vector<Entry> entries;
  uint64_t skipped_records = 0;  // of kinds vperf does not use, or unknown
  bool truncated = false;        // the last record was cut short
};

inline constexpr uint32_t kJitdumpMagic = 0x4A695444;  // "JiTD" in the writer's byte order

Result<Jitdump> parse_jitdump(std::span<const uint8_t> bytes);

// perf's jit_detect: a path whose last component is jit-PID.dump, PID the digits of the
// process that mapped it (0: any, as perf accepts in system-wide mode).
bool is_jitdump_marker(std::string_view path, uint32_t mapping_pid);

}  // namespace vperf::symbols
