// Code that runs from a memfd mapping, as a JIT's does: a few bytes of machine code are
// written into a memfd, mapped executable, and called in a loop. The mapping shows in
// /proc/PID/maps and in perf's MMAP2 records as "/memfd:vperf-jit (deleted)": a file with no
// symbols that cannot be opened by its name, which profilers name by its mapping alone.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "workloads.h"

namespace vperf::workloads {

namespace {

// uint64_t count_down(uint64_t n): a loop that needs no stack frame, returning 0.
#if defined(__x86_64__)
//   loop: dec %rdi ; jnz loop ; mov %rdi,%rax ; ret
constexpr unsigned char kCountDown[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0x48, 0x89, 0xf8, 0xc3};
#elif defined(__aarch64__)
//   loop: subs x0, x0, #1 ; b.ne loop ; ret   (0xf1000400, 0x54ffffe1, 0xd65f03c0, little-endian)
constexpr unsigned char kCountDown[] = {0x00, 0x04, 0x00, 0xf1, 0xe1, 0xff, 0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6};
#else
#error "memfd-jit has machine code for x86-64 and arm64 only"
#endif

using CountDown = uint64_t (*)(uint64_t);

// Calls into the copied code until `ms` milliseconds of CPU time have passed; with frame
// pointers, the caller of the memfd frame is this function.
__attribute__((noinline)) uint64_t call_jit_code(CountDown code, uint64_t ms) {
  const uint64_t end = thread_cpu_ns() + ms * 1000000;
  uint64_t sum = 0;
  while (thread_cpu_ns() < end) sum += code(200000);
  return sum;
}

}  // namespace

int run_memfd_jit(uint64_t ms, const Options& options) {
  int fd = ::memfd_create("vperf-jit", MFD_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "vperf-workload: memfd-jit: memfd_create: %s\n", std::strerror(errno));
    return 1;
  }
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (::ftruncate(fd, static_cast<off_t>(page)) != 0 || ::pwrite(fd, kCountDown, sizeof kCountDown, 0) != sizeof kCountDown) {
    std::fprintf(stderr, "vperf-workload: memfd-jit: cannot write the code: %s\n", std::strerror(errno));
    ::close(fd);
    return 1;
  }
  void* code = ::mmap(nullptr, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (code == MAP_FAILED) {
    std::fprintf(stderr, "vperf-workload: memfd-jit: mmap PROT_EXEC: %s\n", std::strerror(errno));
    return 1;
  }
  uint64_t sum = call_jit_code(reinterpret_cast<CountDown>(code), ms);
  ::munmap(code, page);
  if (options.verbose) std::printf("memfd-jit: %llu ms of CPU in code mapped from a memfd\n", static_cast<unsigned long long>(ms));
  return sum == 0 ? 0 : 1;  // count_down returns 0: anything else means the code did not run as written
}

}  // namespace vperf::workloads
