#pragma once
// /dev/kvm: can this machine run (and therefore profile) guests? KVM_GET_API_VERSION is a
// read-only query: opening the device creates no VM.
#include <filesystem>
#include <string>

#include "core/error.h"

namespace vperf::host {

class KvmDevice {
 public:
  virtual ~KvmDevice() = default;
  // The KVM API version (12 on every kernel since 2.6.22), or the open/ioctl error.
  virtual Result<int> api_version() const = 0;
  virtual std::string path() const = 0;
};

class KvmDeviceFile final : public KvmDevice {
 public:
  explicit KvmDeviceFile(std::filesystem::path path = "/dev/kvm") : path_(std::move(path)) {}
  Result<int> api_version() const override;
  std::string path() const override { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline constexpr int kKvmStableApiVersion = 12;

}  // namespace vperf::host
