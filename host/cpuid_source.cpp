#include "host/cpuid_source.h"

namespace vperf::host {

std::optional<CpuidRegs> LiveCpuid::query(uint32_t leaf, uint32_t subleaf) const {
#if defined(__x86_64__) || defined(__i386__)
  CpuidRegs r;
  // ECX selects the subleaf; leaves without subleaves ignore it.
  asm volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(subleaf));
  return r;
#else
  (void)leaf;
  (void)subleaf;
  return std::nullopt;  // no CPUID on this architecture: every leaf is absent
#endif
}

std::string LiveCpuid::describe() const { return "CPUID instruction on this machine"; }

}  // namespace vperf::host
