#pragma once
// The names of KVM exit reasons, as data:
//  - VMX basic exit reasons (Intel SDM vol. 3C appendix C; the kernel's VMX_EXIT_REASONS in
//    arch/x86/include/uapi/asm/vmx.h, which perf's kvm stat and the kvm:kvm_exit print fmt use);
//  - SVM exit codes (AMD APM vol. 2 appendix C; the kernel's SVM_EXIT_REASONS in
//    arch/x86/include/uapi/asm/svm.h);
//  - KVM_EXIT_* reasons of struct kvm_run (include/uapi/linux/kvm.h), what kvm:kvm_userspace_exit
//    reports when KVM_RUN returns to the VMM.
// The names are spelled exactly as those tables spell them ("IO_INSTRUCTION", "npf", "IO"); the
// KVM_EXIT_ prefix is left off.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace vperf::kvm {

// The `isa` field of kvm:kvm_exit (KVM_ISA_VMX, KVM_ISA_SVM in arch/x86/kvm/trace.h).
enum class KvmIsa : uint32_t { Vmx = 1, Svm = 2 };

struct ExitReasonName {
  uint64_t code;
  std::string_view name;
};

std::span<const ExitReasonName> vmx_exit_reasons();
std::span<const ExitReasonName> svm_exit_reasons();
std::span<const ExitReasonName> kvm_userspace_exit_reasons();

// The table's name for `code`, or nullopt.
std::optional<std::string_view> find_exit_reason(std::span<const ExitReasonName> table, uint64_t code);

// An exit_reason of kvm:kvm_exit as the kernel prints it. VMX: the basic reason (low 16 bits)
// by name, then " FAILED_VMENTRY" when bit 31 is set; SVM: the exit code by name. An unknown
// code is "UNKNOWN(0x..)" (perf 6.1 prints a bare "UNKNOWN"; the number says which).
std::string exit_reason_name(KvmIsa isa, uint64_t exit_reason);

// A kvm:kvm_userspace_exit: its reason by name, or, when the run ended with an error instead
// of an exit (errno field < 0), "restart" for -EINTR and "error" otherwise, as the kernel's
// print fmt says.
std::string userspace_exit_name(uint64_t reason, int64_t error);

// perf's rule when the kvm_exit format has no isa field: the recording's CPUID vendor
// ("GenuineIntel-6-55-4" -> VMX, "AuthenticAMD-..." or "HygonGenuine-..." -> SVM).
std::optional<KvmIsa> isa_from_cpuid(std::string_view cpuid);

}  // namespace vperf::kvm
