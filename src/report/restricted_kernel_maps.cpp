#include "report/restricted_kernel_maps.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdint>
#include <variant>

namespace vperf::report {

namespace {

constexpr uint32_t kAnyPid = UINT32_MAX;  // the kernel's maps are every process's: pid -1

bool is_host_kernel_map(uint16_t misc, uint32_t pid, const std::string& filename) {
  return (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL && pid == kAnyPid &&
         filename.starts_with("[kernel.kallsyms]");
}

}  // namespace

void RestrictedKernelMaps::observe(const data::Record& record) {
  if (record.type == PERF_RECORD_SAMPLE) {
    kernel_sample_ |= (record.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
    return;
  }
  uint64_t pgoff = 0;
  if (const auto* mmap = std::get_if<data::MmapRecord>(&record.body)) {
    if (!is_host_kernel_map(record.misc, mmap->pid, mmap->filename)) return;
    pgoff = mmap->pgoff;
  } else if (const auto* mmap2 = std::get_if<data::Mmap2Record>(&record.body)) {
    if (!is_host_kernel_map(record.misc, mmap2->pid, mmap2->filename)) return;
    pgoff = mmap2->pgoff;
  } else {
    return;
  }
  // The first kernel map is the kernel itself; the modules' follow with pgoff 0.
  if (!kernel_map_) kernel_map_without_reference_ = pgoff == 0;
  kernel_map_ = true;
}

std::optional<std::string> RestrictedKernelMaps::warning(const std::vector<data::EventAttrEntry>& attrs) const {
  const bool samples_kernel =
      std::any_of(attrs.begin(), attrs.end(), [](const data::EventAttrEntry& e) { return e.attr.exclude_kernel == 0; });
  if (!samples_kernel) return std::nullopt;
  if (kernel_map_ && !(kernel_sample_ && kernel_map_without_reference_)) return std::nullopt;
  // perf's text, one line; perf_event_paranoid is named too, as it hides the addresses from a
  // user without CAP_SYSLOG even at kptr_restrict 0.
  const std::string why = kernel_map_ ? "If some relocation was applied (e.g. kexec) symbols may be misresolved."
                                      : "As no suitable kallsyms nor vmlinux was found, kernel samples can't be resolved.";
  return "Kernel address maps (/proc/{kallsyms,modules}) were restricted. Check /proc/sys/kernel/kptr_restrict and "
         "/proc/sys/kernel/perf_event_paranoid before running 'vperf record'. " +
         why + " Samples in kernel modules can't be resolved as well.";
}

}  // namespace vperf::report
