#pragma once
// Loaded kernel modules from /proc/modules (or a guest's copy): where each module's core is.
//
// Format, one module a line: "NAME SIZE REFCOUNT DEPS STATE ADDRESS [TAINTS]", e.g.
//   kvm_intel 380928 0 - Live 0xffffffffc0a4f000
// ADDRESS reads 0x0000000000000000 under kptr_restrict. A kernel built without module support
// has no /proc/modules at all: load_kernel_modules then fails with ENOENT and callers treat that
// as "no modules" (perf continues the same way).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::symbols {

struct KernelModule {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
};

Result<std::vector<KernelModule>> parse_kernel_modules(std::string_view text, std::string_view source);
Result<std::vector<KernelModule>> load_kernel_modules(const std::filesystem::path& path = "/proc/modules");

// "[kvm_intel]" from "/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-intel.ko.xz": perf's module
// short name (basename up to the first '.', '-' becoming '_'), in brackets.
std::string module_dso_name(std::string_view path_or_name);

}  // namespace vperf::symbols
