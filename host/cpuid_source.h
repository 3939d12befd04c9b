#pragma once
// Where CPUID answers come from: the CPUID instruction on this CPU, or a dump of another
// machine (host/cpuid_dump.h). Decoders (host/cpuid_decode.h) only see this interface, so the
// same code decodes a live CPU and a text file.
#include <cstdint>
#include <optional>
#include <string>

namespace vperf::host {

struct CpuidRegs {
  uint32_t eax = 0;
  uint32_t ebx = 0;
  uint32_t ecx = 0;
  uint32_t edx = 0;
  bool operator==(const CpuidRegs&) const = default;
};

class CpuidSource {
 public:
  virtual ~CpuidSource() = default;
  // nullopt when the source holds no record of (leaf, subleaf): a dump that did not include it.
  // The live instruction always answers; callers check the maximum leaf first, because a CPU
  // asked for a leaf above its maximum returns the data of some other leaf.
  virtual std::optional<CpuidRegs> query(uint32_t leaf, uint32_t subleaf) const = 0;
  // "CPUID instruction on this CPU", "dump intel-ivb.txt, Logical CPU #0"
  virtual std::string describe() const = 0;
};

// The CPUID instruction, executed on whichever CPU the calling thread runs on.
class LiveCpuid final : public CpuidSource {
 public:
  std::optional<CpuidRegs> query(uint32_t leaf, uint32_t subleaf) const override;
  std::string describe() const override;
};

}  // namespace vperf::host
