#include "msr/msr_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/scoped_fd.h"
#include "core/strings.h"
#include "msr/msr_register.h"

namespace vperf::msr {

namespace {
std::string register_label(uint32_t address) {
  const MsrRegister* reg = find_register(address);
  return reg ? hex(address) + " (" + std::string(reg->name) + ")" : hex(address);
}
}  // namespace

std::filesystem::path DevCpuMsrReader::device_path(int cpu) const { return root_ / std::to_string(cpu) / "msr"; }

Result<uint64_t> DevCpuMsrReader::read(int cpu, uint32_t address) const {
  const std::filesystem::path path = device_path(cpu);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Error::from_errno("open " + path.string());
  uint64_t value = 0;
  ssize_t n;
  do {
    n = ::pread(fd.get(), &value, sizeof value, static_cast<off_t>(address));
  } while (n < 0 && errno == EINTR);
  const std::string what = "read MSR " + register_label(address) + " from " + path.string();
  if (n < 0) return Error::from_errno(what);
  // The driver returns all 8 bytes or fails; a short read only happens on a plain file (a
  // test double) past its end, which is the same situation as a register that does not exist.
  if (n != static_cast<ssize_t>(sizeof value)) return Error{what + ": short read (register not present)", EIO};
  return value;
}

std::string msr_error_hint(int errno_value, const std::filesystem::path& proc_modules) {
  switch (errno_value) {
    case ENOENT:
    case ENODEV:
      return msr_driver_hint(proc_modules);
    case EACCES:
    case EPERM:
      return "reading MSRs needs root with CAP_SYS_RAWIO";
    case EIO:
      return "the register does not exist on this CPU, or the hypervisor hides it";
    case ENXIO:
      return "no such CPU";
    default:
      return "";
  }
}

std::string msr_driver_hint(const std::filesystem::path& proc_modules) {
  std::error_code error;
  if (!std::filesystem::exists(proc_modules, error))
    return "this kernel has no msr driver and cannot load modules (no " + proc_modules.string() +
           "): boot a kernel built with CONFIG_X86_MSR";
  return "load the msr driver: modprobe msr";
}

}  // namespace vperf::msr
