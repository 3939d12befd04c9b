#pragma once
// Reading model-specific registers. MsrReader is the interface; DevCpuMsrReader is the
// msr driver's character device /dev/cpu/N/msr, where a register is read by pread() of 8 bytes
// at file offset = register address. The kernel answers:
//   ENOENT  no /dev/cpu/N/msr: the msr module is not loaded (modprobe msr)
//   EACCES / EPERM  the device needs root and CAP_SYS_RAWIO
//   EIO     the rdmsr faulted: the register does not exist on this CPU, or a hypervisor hides it
//   ENXIO   no such CPU
// A failed read is an Error, never a made-up 0.
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/error.h"

namespace vperf::msr {

class MsrReader {
 public:
  virtual ~MsrReader() = default;
  virtual Result<uint64_t> read(int cpu, uint32_t address) const = 0;
  // Where `cpu`'s registers are read from, for messages ("/dev/cpu/0/msr").
  virtual std::string device_name(int cpu) const { return "the MSRs of CPU " + std::to_string(cpu); }
};

class DevCpuMsrReader final : public MsrReader {
 public:
  // `device_root` is /dev/cpu normally; tests point it at a temp dir holding <N>/msr files.
  explicit DevCpuMsrReader(std::filesystem::path device_root = "/dev/cpu") : root_(std::move(device_root)) {}
  Result<uint64_t> read(int cpu, uint32_t address) const override;
  std::filesystem::path device_path(int cpu) const;
  std::string device_name(int cpu) const override { return device_path(cpu).string(); }

 private:
  std::filesystem::path root_;
};

// What the user should do about an MSR read that failed with `errno_value`; empty if nothing
// helps. `proc_modules` as for msr_driver_hint.
std::string msr_error_hint(int errno_value, const std::filesystem::path& proc_modules = "/proc/modules");

// How to get /dev/cpu/N/msr: modprobe msr, unless the kernel cannot load modules (no
// `proc_modules`, as in Firecracker's and other minimal kernels), where only a kernel built
// with CONFIG_X86_MSR has it.
std::string msr_driver_hint(const std::filesystem::path& proc_modules = "/proc/modules");

}  // namespace vperf::msr
