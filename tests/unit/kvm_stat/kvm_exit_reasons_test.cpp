// The exit reason tables against the kernel's headers (numbers looked up in
// arch/x86/include/uapi/asm/vmx.h, svm.h and include/uapi/linux/kvm.h) and, where this machine
// has KVM, against the running kernel's own tables: the kvm:kvm_exit and kvm:kvm_userspace_exit
// print fmts, which __print_symbolic() over exactly those tables.
#include "kvm_stat/kvm_exit_reasons.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/capability.h"

namespace vperf::kvm {
namespace {

TEST(KvmExitReasons, VmxNamesAreTheKernelsForItsNumbers) {
  // EXIT_REASON_* of vmx.h.
  const std::map<uint64_t, std::string> expected = {
      {0, "EXCEPTION_NMI"}, {1, "EXTERNAL_INTERRUPT"}, {7, "INTERRUPT_WINDOW"}, {10, "CPUID"},
      {12, "HLT"},          {28, "CR_ACCESS"},         {30, "IO_INSTRUCTION"},  {31, "MSR_READ"},
      {32, "MSR_WRITE"},    {40, "PAUSE_INSTRUCTION"}, {44, "APIC_ACCESS"},     {48, "EPT_VIOLATION"},
      {49, "EPT_MISCONFIG"}, {52, "PREEMPTION_TIMER"}, {55, "XSETBV"},          {74, "BUS_LOCK"},
  };
  for (const auto& [code, name] : expected) EXPECT_EQ(find_exit_reason(vmx_exit_reasons(), code), name) << code;
  EXPECT_EQ(find_exit_reason(vmx_exit_reasons(), 5), std::nullopt);  // no reason 5 (SDM: none)
  EXPECT_EQ(find_exit_reason(vmx_exit_reasons(), 35), std::nullopt);
}

TEST(KvmExitReasons, SvmNamesAreTheKernelsForItsCodes) {
  // SVM_EXIT_* of svm.h; exceptions are SVM_EXIT_EXCP_BASE 0x40 + vector.
  const std::map<uint64_t, std::string> expected = {
      {0x000, "read_cr0"}, {0x010, "write_cr0"}, {0x04e, "PF excp"}, {0x060, "interrupt"},
      {0x072, "cpuid"},    {0x078, "hlt"},       {0x07b, "io"},      {0x07c, "msr"},
      {0x07f, "shutdown"}, {0x081, "hypercall"}, {0x400, "npf"},     {0x403, "vmgexit"},
      {0xffffffff, "invalid_guest_state"},
  };
  for (const auto& [code, name] : expected) EXPECT_EQ(find_exit_reason(svm_exit_reasons(), code), name) << code;
}

TEST(KvmExitReasons, UserspaceExitNamesAreKvmRunsReasons) {
  const std::map<uint64_t, std::string> expected = {
      {0, "UNKNOWN"}, {2, "IO"},        {3, "HYPERCALL"}, {5, "HLT"},       {6, "MMIO"},
      {8, "SHUTDOWN"}, {9, "FAIL_ENTRY"}, {17, "INTERNAL_ERROR"}, {24, "SYSTEM_EVENT"},
      {29, "X86_RDMSR"}, {30, "X86_WRMSR"}, {37, "NOTIFY"},  {39, "MEMORY_FAULT"},
  };
  for (const auto& [code, name] : expected) EXPECT_EQ(find_exit_reason(kvm_userspace_exit_reasons(), code), name) << code;
}

TEST(KvmExitReasons, EveryCodeIsNamedOnce) {
  for (auto table : {vmx_exit_reasons(), svm_exit_reasons(), kvm_userspace_exit_reasons()}) {
    std::set<uint64_t> codes;
    for (const ExitReasonName& entry : table) {
      EXPECT_TRUE(codes.insert(entry.code).second) << entry.code << " " << entry.name;
      EXPECT_FALSE(entry.name.empty());
    }
  }
}

TEST(KvmExitReasons, DecodesAsTheKernelPrintsThem) {
  EXPECT_EQ(exit_reason_name(KvmIsa::Vmx, 30), "IO_INSTRUCTION");
  EXPECT_EQ(exit_reason_name(KvmIsa::Vmx, 48), "EPT_VIOLATION");
  // Bit 31: the VM entry failed; the basic reason is the low 16 bits.
  EXPECT_EQ(exit_reason_name(KvmIsa::Vmx, 0x80000021), "INVALID_STATE FAILED_VMENTRY");
  EXPECT_EQ(exit_reason_name(KvmIsa::Vmx, 5), "UNKNOWN(0x5)");
  EXPECT_EQ(exit_reason_name(KvmIsa::Svm, 0x7b), "io");
  EXPECT_EQ(exit_reason_name(KvmIsa::Svm, 0x400), "npf");
  EXPECT_EQ(exit_reason_name(KvmIsa::Svm, 30), "UNKNOWN(0x1e)");  // 30 is VMX's IO, not SVM's
  EXPECT_EQ(userspace_exit_name(2, 0), "IO");
  EXPECT_EQ(userspace_exit_name(5, 0), "HLT");
  EXPECT_EQ(userspace_exit_name(2, -4), "restart");  // -EINTR: a signal interrupted KVM_RUN
  EXPECT_EQ(userspace_exit_name(2, -14), "error");
  EXPECT_EQ(userspace_exit_name(200, 0), "UNKNOWN(0xc8)");
}

TEST(KvmExitReasons, IsaFromTheRecordingsCpuidAsPerf) {
  EXPECT_EQ(isa_from_cpuid("GenuineIntel-6-55-4"), KvmIsa::Vmx);
  EXPECT_EQ(isa_from_cpuid("AuthenticAMD-25-1-1"), KvmIsa::Svm);
  EXPECT_EQ(isa_from_cpuid("HygonGenuine-24-0-1"), KvmIsa::Svm);
  EXPECT_EQ(isa_from_cpuid("0x00000000410fd0c0"), std::nullopt);
  EXPECT_EQ(isa_from_cpuid(""), std::nullopt);
}

// {code, "name"} pairs of every __print_symbolic in a print fmt, in order ("0x040 + 14" is
// summed; the userspace exit names are "KVM_EXIT_" "IO", prefix dropped).
std::vector<std::pair<int64_t, std::string>> symbolic_pairs(const std::string& text) {
  std::vector<std::pair<int64_t, std::string>> out;
  static const std::regex entry(R"re(\{ (-?(?:0x[0-9a-fA-F]+|\d+))(?: \+ (\d+))?, (?:"KVM_EXIT_" )?"([^"]+)" \})re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    int64_t code = std::stoll((*it)[1].str(), nullptr, 0);
    if ((*it)[2].matched) code += std::stoll((*it)[2].str());
    out.emplace_back(code, (*it)[3].str());
  }
  return out;
}

std::string read_format(const std::string& event) {
  std::ifstream in("/sys/kernel/tracing/events/kvm/" + event + "/format");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(KvmExitReasons, MatchTheRunningKernelsKvmExitPrintFmt) {
  VPERF_REQUIRE(test::has_tracefs() && std::filesystem::exists("/sys/kernel/tracing/events/kvm/kvm_exit/format"),
                "the kvm:kvm_exit tracepoint (KVM loaded, tracefs mounted)");
  std::string format = read_format("kvm_exit");
  // "(REC->isa == 1) ? __print_symbolic(<VMX>) : __print_symbolic(REC->exit_reason, <SVM>)"
  size_t svm_at = format.find(": __print_symbolic(REC->exit_reason,");
  ASSERT_NE(svm_at, std::string::npos) << "kvm_exit's print fmt changed shape:\n" << format;
  auto vmx = symbolic_pairs(format.substr(0, svm_at));
  // ...then the FAILED_VMENTRY flag's __print_flags, which is no exit reason.
  size_t flags_at = format.find("__print_flags", svm_at);
  auto svm = symbolic_pairs(format.substr(svm_at, flags_at == std::string::npos ? std::string::npos : flags_at - svm_at));
  ASSERT_GT(vmx.size(), 50u);
  ASSERT_GT(svm.size(), 100u);
  for (const auto& [code, name] : vmx)
    EXPECT_EQ(find_exit_reason(vmx_exit_reasons(), static_cast<uint64_t>(code)), name) << "VMX " << code;
  for (const auto& [code, name] : svm)
    EXPECT_EQ(find_exit_reason(svm_exit_reasons(), static_cast<uint32_t>(code)), name) << "SVM " << code;
  EXPECT_EQ(vmx.size(), vmx_exit_reasons().size()) << "a kernel older or newer than the tables (6.18)";
  EXPECT_EQ(svm.size(), svm_exit_reasons().size()) << "a kernel older or newer than the tables (6.18)";
}

TEST(KvmExitReasons, MatchTheRunningKernelsUserspaceExitPrintFmt) {
  VPERF_REQUIRE(test::has_tracefs() && std::filesystem::exists("/sys/kernel/tracing/events/kvm/kvm_userspace_exit/format"),
                "the kvm:kvm_userspace_exit tracepoint");
  auto pairs = symbolic_pairs(read_format("kvm_userspace_exit"));
  ASSERT_GT(pairs.size(), 25u);
  for (const auto& [code, name] : pairs)
    EXPECT_EQ(find_exit_reason(kvm_userspace_exit_reasons(), static_cast<uint64_t>(code)), name) << code;
}

}  // namespace
}  // namespace vperf::kvm
