// A minimal KVM VMM: one VM, one memory slot, one vCPU in 16-bit real mode. See workloads.h for
// the guest program and why the counts are exactly n.
#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "workloads.h"

namespace vperf::workloads {

#if defined(__x86_64__)
namespace {

constexpr uint64_t kGuestCodeAddress = 0x1000;  // guest-physical; also the slot's base
constexpr size_t kGuestMemorySize = 0x1000;
constexpr uint16_t kPort = 0x10;

// mov ecx, n ; test ecx, ecx ; jz done ; l: out 0x10, al ; dec ecx ; jnz l ; done: hlt
// (16-bit code; the 0x66 prefixes make ecx a 32-bit counter, so n may be up to 2^32 - 1)
constexpr size_t kCountOffset = 2;  // imm32 of `mov ecx`
constexpr unsigned char kGuestCode[] = {
    0x66, 0xb9, 0, 0, 0, 0,  // 0x00 mov ecx, imm32
    0x66, 0x85, 0xc9,        // 0x06 test ecx, ecx
    0x74, 0x06,              // 0x09 jz 0x11
    0xe6, kPort,             // 0x0b out 0x10, al
    0x66, 0x49,              // 0x0d dec ecx
    0x75, 0xfa,              // 0x0f jnz 0x0b
    0xf4,                    // 0x11 hlt
};

// Owns an fd; prints nothing.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

struct Mapping {
  void* address = MAP_FAILED;
  size_t size = 0;
  Mapping(void* a, size_t s) : address(a), size(s) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (address != MAP_FAILED) ::munmap(address, size);
  }
};

int fail(const std::string& what, int err = errno) {
  std::fprintf(stderr, "vperf-workload: kvm-pio: %s: %s\n", what.c_str(), std::strerror(err));
  return 1;
}

int fail_plain(const std::string& what) {
  std::fprintf(stderr, "vperf-workload: kvm-pio: %s\n", what.c_str());
  return 1;
}

}  // namespace

int run_kvm_pio(uint64_t n, const Options& options) {
  if (n > UINT32_MAX) return fail_plain("N must be at most 4294967295 (the guest counts in ecx)");
  Fd kvm(::open("/dev/kvm", O_RDWR | O_CLOEXEC));
  if (kvm.fd < 0) return fail("cannot open /dev/kvm");
  const int api = ::ioctl(kvm.fd, KVM_GET_API_VERSION, 0);
  if (api < 0) return fail("KVM_GET_API_VERSION on /dev/kvm");
  if (api != KVM_API_VERSION) return fail_plain("KVM API version " + std::to_string(api) + ", expected 12");
  Fd vm(::ioctl(kvm.fd, KVM_CREATE_VM, 0UL));
  if (vm.fd < 0) return fail("KVM_CREATE_VM");

  Mapping memory(::mmap(nullptr, kGuestMemorySize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                 kGuestMemorySize);
  if (memory.address == MAP_FAILED) return fail("mmap guest memory");
  unsigned char* code = static_cast<unsigned char*>(memory.address);
  std::memcpy(code, kGuestCode, sizeof kGuestCode);
  const uint32_t count = static_cast<uint32_t>(n);
  std::memcpy(code + kCountOffset, &count, sizeof count);  // x86: little-endian imm32

  kvm_userspace_memory_region region{};
  region.slot = 0;
  region.guest_phys_addr = kGuestCodeAddress;
  region.memory_size = kGuestMemorySize;
  region.userspace_addr = reinterpret_cast<uint64_t>(memory.address);
  if (::ioctl(vm.fd, KVM_SET_USER_MEMORY_REGION, &region) != 0) return fail("KVM_SET_USER_MEMORY_REGION");

  Fd vcpu(::ioctl(vm.fd, KVM_CREATE_VCPU, 0UL));
  if (vcpu.fd < 0) return fail("KVM_CREATE_VCPU");
  const int run_size = ::ioctl(kvm.fd, KVM_GET_VCPU_MMAP_SIZE, 0);
  if (run_size < static_cast<int>(sizeof(kvm_run))) return fail("KVM_GET_VCPU_MMAP_SIZE");
  Mapping run_map(::mmap(nullptr, static_cast<size_t>(run_size), PROT_READ | PROT_WRITE, MAP_SHARED, vcpu.fd, 0),
                  static_cast<size_t>(run_size));
  if (run_map.address == MAP_FAILED) return fail("mmap kvm_run");
  kvm_run* run = static_cast<kvm_run*>(run_map.address);

  kvm_sregs sregs{};
  if (::ioctl(vcpu.fd, KVM_GET_SREGS, &sregs) != 0) return fail("KVM_GET_SREGS");
  sregs.cs.base = 0;  // real mode: linear = cs.base + ip
  sregs.cs.selector = 0;
  if (::ioctl(vcpu.fd, KVM_SET_SREGS, &sregs) != 0) return fail("KVM_SET_SREGS");
  kvm_regs regs{};
  regs.rip = kGuestCodeAddress;
  regs.rflags = 0x2;  // bit 1 is reserved and must be set
  if (::ioctl(vcpu.fd, KVM_SET_REGS, &regs) != 0) return fail("KVM_SET_REGS");

  // One KVM_RUN per guest `out`; the n-th exit is the last. Not re-entering the guest then
  // keeps the hlt from adding a KVM_EXIT_HLT userspace exit.
  uint64_t io_exits = 0;
  bool halted = false;
  while (io_exits < n && !halted) {
    if (::ioctl(vcpu.fd, KVM_RUN, 0) != 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return fail("KVM_RUN after " + std::to_string(io_exits) + " port writes");
    }
    switch (run->exit_reason) {
      case KVM_EXIT_IO:
        if (run->io.direction != KVM_EXIT_IO_OUT || run->io.port != kPort || run->io.size != 1 || run->io.count != 1)
          return fail_plain("unexpected port access: port " + std::to_string(run->io.port) + " size " +
                            std::to_string(run->io.size) + " count " + std::to_string(run->io.count));
        ++io_exits;
        break;
      case KVM_EXIT_HLT:
        halted = true;
        break;
      case KVM_EXIT_FAIL_ENTRY:
        return fail_plain("KVM_EXIT_FAIL_ENTRY, hardware reason 0x" +
                          std::to_string(run->fail_entry.hardware_entry_failure_reason));
      case KVM_EXIT_INTERNAL_ERROR:
        return fail_plain("KVM_EXIT_INTERNAL_ERROR, suberror " + std::to_string(run->internal.suberror));
      default:
        return fail_plain("unexpected exit reason " + std::to_string(run->exit_reason) + " after " +
                          std::to_string(io_exits) + " port writes");
    }
  }
  if (options.run_to_hlt && !halted) {
    while (::ioctl(vcpu.fd, KVM_RUN, 0) != 0) {
      if (errno != EINTR && errno != EAGAIN) return fail("KVM_RUN into the final hlt");
    }
    if (run->exit_reason != KVM_EXIT_HLT)
      return fail_plain("expected KVM_EXIT_HLT after " + std::to_string(n) + " port writes, got exit reason " +
                        std::to_string(run->exit_reason));
    halted = true;
  }
  if (io_exits != n) {
    std::fprintf(stderr, "vperf-workload: kvm-pio: the guest halted after %" PRIu64 " port writes, expected %" PRIu64 "\n",
                 io_exits, n);
    return 1;
  }
  if (options.verbose)
    std::printf("kvm-pio: %" PRIu64 " port writes, %" PRIu64 " KVM_RUN calls%s\n", io_exits, io_exits + (options.run_to_hlt ? 1 : 0),
                halted ? ", halted" : "");
  return 0;
}

#else

// The guest program is x86 real-mode code, which an arm64 host's KVM cannot run.
int run_kvm_pio(uint64_t, const Options&) {
  std::fprintf(stderr, "vperf-workload: kvm-pio: its guest is x86 code: it needs an x86-64 host with /dev/kvm\n");
  return 1;
}

#endif

}  // namespace vperf::workloads
