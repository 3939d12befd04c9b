#pragma once
// Guest memory read through the QEMU monitor: HMP `x /Ngx ADDRESS` run for one vCPU (QMP
// human-monitor-command's cpu-index), so the address is translated by that vCPU's page tables.
// It is the one way to a running guest's memory that works alike on a QMP socket, through
// libvirt and on another host. One command costs ~0.6 ms under TCG almost whatever its size
// (measured: 1 word 0.64 ms, 256 words 0.69 ms), so reads are few and large: a kernel stack in
// one command, kernel data in 4 KiB pages kept for the whole recording.
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "guest/vm_monitor.h"

namespace vperf::guest {

struct MemoryDump {
  uint64_t address = 0;  // where the dump starts: for "$sp", the stack pointer when it was taken
  std::vector<uint8_t> bytes;
};

// The words of an `x /Ngx` answer ("ffffffff95203e98: 0xffffffff9383ed0d 0x0000000000000001"
// lines) from the first line's address; a dump that reaches unmapped memory ends where QEMU
// printed "Cannot access memory" (no bytes at all when the first word is unmapped). Any other
// answer without a dump line is an Error with QEMU's text ("unknown register").
Result<MemoryDump> parse_memory_dump(std::string_view text);

// `bytes` (rounded up to whole words) of guest virtual memory at `address`, an HMP expression
// such as "0xffffffff81000000" or "$sp", as vCPU `cpu` sees it.
Result<MemoryDump> read_guest_memory(VmMonitor& monitor, int cpu, std::string_view address, size_t bytes);

// Guest memory by address, as the stack unwinders read it: from the live guest or from a test image.
class MemoryView {
 public:
  virtual ~MemoryView() = default;
  // False when any byte of [address, address + out.size()) cannot be read.
  virtual bool read(uint64_t address, std::span<uint8_t> out) = 0;

  template <typename T>
  std::optional<T> value(uint64_t address) {
    uint8_t bytes[sizeof(T)];
    if (!read(address, bytes)) return std::nullopt;
    T v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  }
};

// Guest kernel memory that stays as it is while sampling (text, the ORC tables, the version
// banner): read a 4 KiB page at a time on first use and kept. A page is read through the vCPU
// being unwound (in kernel mode, so its page tables map the kernel even under page-table
// isolation, where a vCPU in user mode sees almost none of it), then through the other vCPUs;
// a page none of them could read is tried again next time.
class KernelMemory : public MemoryView {
 public:
  KernelMemory(VmMonitor& monitor, std::vector<int> vcpus) : monitor_(monitor), vcpus_(std::move(vcpus)) {}
  bool read(uint64_t address, std::span<uint8_t> out) override;
  void prefer_vcpu(int index) { preferred_ = index; }
  size_t pages_read() const { return pages_.size(); }

 private:
  const std::vector<uint8_t>* page(uint64_t page_address);
  VmMonitor& monitor_;
  std::vector<int> vcpus_;
  int preferred_ = 0;
  std::unordered_map<uint64_t, std::vector<uint8_t>> pages_;
};

// A set of dumps taken at one moment, for tests and for a stack that has been read once.
class DumpMemory : public MemoryView {
 public:
  void add(MemoryDump dump) { dumps_.push_back(std::move(dump)); }
  bool read(uint64_t address, std::span<uint8_t> out) override { return copy(address, out); }
  bool copy(uint64_t address, std::span<uint8_t> out) const;

 private:
  std::vector<MemoryDump> dumps_;
};

// A vCPU's stack memory for one sample: the dump taken right after its registers, then the
// pages of other stacks the unwinder steps onto (an interrupt stack leads back to the task's
// stack), each read from the monitor when first needed, at most `max_page_reads` of them.
class VcpuStackMemory : public MemoryView {
 public:
  VcpuStackMemory(VmMonitor* monitor, int cpu, MemoryDump first, int max_page_reads)
      : monitor_(monitor), cpu_(cpu), page_reads_left_(max_page_reads) {
    read_.add(std::move(first));
  }
  bool read(uint64_t address, std::span<uint8_t> out) override;
  int pages_read() const { return pages_read_; }
  // Whether the words read so far (one at a time: the ones that steer an unwind) inside `again`,
  // a later dump of the same stack, are the same there: a stack copied while its vCPU ran may
  // mix moments, and reading its words twice tells whether they held still.
  bool reads_the_same_in(const MemoryDump& again) const;

 private:
  VmMonitor* monitor_;  // null: no further reads
  int cpu_;
  int page_reads_left_;
  int pages_read_ = 0;
  DumpMemory read_;
  std::vector<std::pair<uint64_t, size_t>> reads_;  // (address, size) of each read served
};

inline constexpr uint64_t kGuestPageSize = 4096;

}  // namespace vperf::guest
