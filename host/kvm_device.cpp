#include "host/kvm_device.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "core/scoped_fd.h"

namespace vperf::host {

Result<int> KvmDeviceFile::api_version() const {
  ScopedFd fd(::open(path_.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return Error::from_errno("open " + path_.string());
  int version = ::ioctl(fd.get(), KVM_GET_API_VERSION, 0);
  if (version < 0) return Error::from_errno("KVM_GET_API_VERSION on " + path_.string());
  return version;
}

}  // namespace vperf::host
