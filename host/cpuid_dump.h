#pragma once
// CPUID dumps of other machines, in the two text formats found in the wild:
//
//  cpuid-r  output of `cpuid -r` (all CPUs) or `cpuid -1 -r` (one CPU):
//             CPU 0:            (or "CPU:" from -1)
//                0x0000000a 0x00: eax=0x07300402 ebx=0x00000000 ecx=0x00000000 edx=0x00008603
//           The second number is the subleaf (ECX input).
//  aida64   AIDA64 / InstLatx64 dumps, registers in EAX-EBX-ECX-EDX order:
//             ------[ CPUID Registers / Logical CPU #0 ]------     (newer)
//             ------[ Logical CPU #0 ]------                       (older)
//             CPUID 0000000A: 07300403-00000000-00000000-00000603 [SL 00] [label]
//           "[SL nn]" (hex) is the subleaf. Older dumps have no [SL] tag: a leaf that repeats
//           (4, 0xB, 0xD) lists subleaves 0, 1, 2 ... in order, so an untagged repeat is the
//           next subleaf. Other bracketed text is a label and ignored.
//
// Lines starting with '#' are comments (the testdata provenance line); AIDA64 "MSR ..." lines
// and text in non-CPU AIDA64 sections or before the first record are skipped. Anything else
// inside a CPU section is an error naming the file, line and token: a dump is evidence, and a
// half-understood one must not silently decode to "no PMU".
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "host/cpuid_source.h"

namespace vperf::host {

struct CpuidDumpCpu {
  int number = 0;        // N from "CPU N:" / "Logical CPU #N"; "CPU:" (cpuid -1) is 0
  std::string header;    // the header line as written, or "(no header)"
  int line = 0;          // line of the header (or first record), 1-based
  std::map<std::pair<uint32_t, uint32_t>, CpuidRegs> leaves;  // (leaf, subleaf) -> registers
};

enum class CpuidDumpFormat { CpuidR, Aida64 };

struct CpuidDump {
  std::string source;  // file name used in messages
  CpuidDumpFormat format = CpuidDumpFormat::CpuidR;
  std::vector<CpuidDumpCpu> cpus;  // in file order; never empty in a successful parse
};

std::string_view format_name(CpuidDumpFormat format);

// `source_name` prefixes error messages: "dump.txt:12: bad register value 'eax=0xZZ'".
Result<CpuidDump> parse_cpuid_dump(std::string_view text, const std::string& source_name);
Result<CpuidDump> load_cpuid_dump(const std::filesystem::path& path);

// Index into dump.cpus of the CPU numbered `cpu_number`, or of the first CPU when none is asked
// for. The error lists the CPU numbers the dump has.
// Without leaves 0, 1 and (when the maximum leaf reaches it) 0xA, the vendor, the hypervisor
// bit and the PMU would be decoded from zeros: an error naming the missing leaf instead.
Result<void> require_decodable_leaves(const CpuidDump& dump, size_t cpu_index);

Result<size_t> select_dump_cpu(const CpuidDump& dump, std::optional<int> cpu_number);

// One CPU of a dump as a CpuidSource.
class DumpCpuidSource final : public CpuidSource {
 public:
  // `dump` must outlive this object.
  DumpCpuidSource(const CpuidDump& dump, size_t cpu_index) : dump_(dump), cpu_(dump.cpus.at(cpu_index)) {}
  std::optional<CpuidRegs> query(uint32_t leaf, uint32_t subleaf) const override;
  std::string describe() const override;

 private:
  const CpuidDump& dump_;
  const CpuidDumpCpu& cpu_;
};

}  // namespace vperf::host
