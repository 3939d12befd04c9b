// A JIT as perf's jitdump agents (a JVM's, node --perf-prof) describe theirs: code written into
// anonymous executable memory, and a jit-PID.dump file in the current directory that names it,
// mapped executable once so that the recording holds its path (the marker perf inject --jit
// looks for). The format is perf's jitdump specification (tools/perf/Documentation/
// jitdump-specification.txt): a header, then records; times are CLOCK_MONOTONIC, so the
// recording needs -k mono.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "workloads.h"

namespace vperf::workloads {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kElfMachine = 62;  // EM_X86_64
//   loop: dec %rdi ; jnz loop ; mov %rdi,%rax ; ret
constexpr unsigned char kCountDown[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0x48, 0x89, 0xf8, 0xc3};
#elif defined(__aarch64__)
constexpr uint32_t kElfMachine = 183;  // EM_AARCH64
//   loop: subs x0, x0, #1 ; b.ne loop ; ret
constexpr unsigned char kCountDown[] = {0x00, 0x04, 0x00, 0xf1, 0xe1, 0xff, 0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6};
#else
#error "jitdump has machine code for x86-64 and arm64 only"
#endif

constexpr uint32_t kJitdumpMagic = 0x4A695444;  // "JiTD" in the writer's byte order
constexpr uint32_t kCodeLoad = 0, kCodeClose = 3;
constexpr size_t kSecondFunction = 64;  // the cold function's offset in the code page

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + static_cast<uint64_t>(ts.tv_nsec);
}

template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

// A JIT_CODE_LOAD record: prefix (id, size, time), pid, tid, vma, code address, size, index,
// the name with its NUL, then the code.
std::vector<uint8_t> code_load(const char* name, uint64_t address, uint64_t index) {
  std::vector<uint8_t> r;
  const uint32_t size = static_cast<uint32_t>(16 + 4 + 4 + 8 * 4 + std::strlen(name) + 1 + sizeof kCountDown);
  put(r, kCodeLoad);
  put(r, size);
  put(r, monotonic_ns());
  put(r, static_cast<uint32_t>(::getpid()));
  put(r, static_cast<uint32_t>(::syscall(SYS_gettid)));
  put(r, address);  // vma
  put(r, address);  // code_addr
  put(r, uint64_t{sizeof kCountDown});
  put(r, index);
  r.insert(r.end(), name, name + std::strlen(name) + 1);
  r.insert(r.end(), kCountDown, kCountDown + sizeof kCountDown);
  return r;
}

using CountDown = uint64_t (*)(uint64_t);

// Three rounds of the hot function for one of the cold one, until `ms` of CPU time.
__attribute__((noinline)) uint64_t run_jitted(CountDown hot, CountDown cold, uint64_t ms) {
  const uint64_t end = thread_cpu_ns() + ms * 1000000;
  uint64_t sum = 0;
  while (thread_cpu_ns() < end) sum += hot(300000) + cold(100000);
  return sum;
}

}  // namespace

int run_jitdump(uint64_t ms, const Options& options) {
  const std::string path = "jit-" + std::to_string(::getpid()) + ".dump";
  std::FILE* dump = std::fopen(path.c_str(), "w+");
  if (!dump) {
    std::fprintf(stderr, "vperf-workload: jitdump: cannot create %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<uint8_t> header;
  put(header, kJitdumpMagic);
  put(header, uint32_t{1});   // version
  put(header, uint32_t{40});  // the header's size
  put(header, kElfMachine);
  put(header, uint32_t{0});  // pad
  put(header, static_cast<uint32_t>(::getpid()));
  put(header, monotonic_ns());
  put(header, uint64_t{0});  // flags: times are CLOCK_MONOTONIC, not the CPU's counter
  // The marker: the dump mapped executable (as the agents do), so its path is recorded.
  void* marker = nullptr;
  void* code = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool ok = std::fwrite(header.data(), 1, header.size(), dump) == header.size() && std::fflush(dump) == 0 && code != MAP_FAILED;
  if (ok) {
    marker = ::mmap(nullptr, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, ::fileno(dump), 0);
    ok = marker != MAP_FAILED;
  }
  if (ok) {
    auto* bytes = static_cast<unsigned char*>(code);
    std::memcpy(bytes, kCountDown, sizeof kCountDown);
    std::memcpy(bytes + kSecondFunction, kCountDown, sizeof kCountDown);
    ok = ::mprotect(code, page, PROT_READ | PROT_EXEC) == 0;
    __builtin___clear_cache(reinterpret_cast<char*>(bytes), reinterpret_cast<char*>(bytes) + page);
  }
  for (const std::vector<uint8_t>& record : {code_load("jit_hot", reinterpret_cast<uint64_t>(code), 0),
                                             code_load("jit_cold", reinterpret_cast<uint64_t>(code) + kSecondFunction, 1)})
    ok = ok && std::fwrite(record.data(), 1, record.size(), dump) == record.size();
  ok = ok && std::fflush(dump) == 0;
  if (!ok) {
    std::fprintf(stderr, "vperf-workload: jitdump: cannot write %s or map its code: %s\n", path.c_str(), std::strerror(errno));
    std::fclose(dump);
    return 1;
  }
  const auto* bytes = static_cast<const unsigned char*>(code);
  uint64_t sum = run_jitted(reinterpret_cast<CountDown>(code), reinterpret_cast<CountDown>(bytes + kSecondFunction), ms);
  std::vector<uint8_t> close;
  put(close, kCodeClose);
  put(close, uint32_t{16});
  put(close, monotonic_ns());
  std::fwrite(close.data(), 1, close.size(), dump);
  std::fclose(dump);
  ::munmap(marker, page);
  ::munmap(code, page);
  if (options.verbose) std::printf("jitdump: %s names jit_hot and jit_cold\n", path.c_str());
  return sum == 0 ? 0 : 1;  // the code returns 0: anything else means it did not run as written
}

}  // namespace vperf::workloads
