#pragma once
// One machine's view of symbols, after Linux perf's struct machine: its kernel maps (kernel
// image + modules), its threads by tid and the DSOs they map. Fed with the events perf.data
// carries (MMAP/MMAP2, COMM, FORK, EXIT) in time order, then asked to resolve sample addresses.
//
// Nothing here reads perf.data; a reader turns records into these calls. Nothing reads a path
// that is not in the SymbolConfig. Symbols load lazily, at the first address that needs them.
// Not thread-safe for concurrent event processing; resolve() may run concurrently with itself.
#include <sys/mman.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include <map>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "symbols/build_id.h"
#include "symbols/dso.h"
#include "symbols/kallsyms.h"
#include "symbols/kernel_modules.h"
#include "symbols/map.h"
#include "symbols/resolved_address.h"
#include "symbols/process_namespace.h"
#include "symbols/symbol_config.h"
#include "symbols/thread.h"

namespace vperf::symbols {

// A PERF_RECORD_MMAP or PERF_RECORD_MMAP2, as far as symbols care.
struct MmapEvent {
  pid_t pid = -1;
  pid_t tid = -1;
  uint64_t start = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  uint32_t prot = PROT_READ | PROT_EXEC;  // MMAP (v1) has no prot: perf records only exec maps by default
  std::string filename;
  // header.misc & PERF_RECORD_MISC_CPUMODE_MASK: KERNEL (or GUEST_KERNEL) for the kernel's and
  // modules' maps perf synthesizes, USER for a process's.
  uint8_t cpumode = PERF_RECORD_MISC_USER;
  // From an MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID or perf.data's build-id table.
  std::optional<BuildId> build_id;
};

class Machine {
 public:
  static constexpr pid_t kHostPid = -1;

  // No I/O here: kallsyms, modules and ELF files are read when first needed.
  explicit Machine(SymbolConfig config, pid_t pid = kHostPid);
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  pid_t pid() const { return pid_; }
  bool is_host() const { return pid_ == kHostPid; }
  const SymbolConfig& config() const { return config_; }
  // "[kernel.kallsyms]" for the host, "[guest.kernel.kallsyms]" for a guest (perf's names).
  const std::string& kernel_dso_name() const { return kernel_name_; }

  // The kernel's maps from config.kallsyms and config.modules, as perf builds them when there
  // are no kernel MMAP events (machine__create_kernel_maps): the kernel from _text (or _stext)
  // to _etext, a map per module from /proc/modules. A missing modules file means no modules.
  Result<void> create_kernel_maps();
  const MapSet& kernel_maps() const { return kernel_maps_; }
  // config.kallsyms, loaded once; the Error says how to fix hidden addresses.
  Result<const Kallsyms*> kallsyms() const;

  void process_mmap(const MmapEvent& event);
  // `exec`: PERF_RECORD_MISC_COMM_EXEC. Like perf 6.1, an exec keeps the maps: the new
  // program's MMAP events replace the old ones where they overlap. Returns the ":TID" name the
  // thread had when this is the first name it gets: perf overrides that name in place
  // (comm__override), so samples taken before under ":TID" are shown under the new one in
  // report's tables.
  std::optional<std::string> process_comm(pid_t pid, pid_t tid, std::string_view comm, bool exec);
  void process_fork(pid_t pid, pid_t ppid, pid_t tid, pid_t ptid);
  void process_exit(pid_t pid, pid_t tid);

  // A thread stays in memory as long as the machine, after its tid is reused too.
  const Thread* find_thread(pid_t tid) const;
  // Every thread this machine knows, exited ones too, in no particular order.
  std::vector<const Thread*> threads() const;
  // The thread, created if unknown; a new thread of a known process shares its leader's maps.
  Thread& findnew_thread(pid_t pid, pid_t tid);

  // perf's thread__find_map + map__find_symbol. cpumode = header.misc & CPUMODE_MASK of the
  // sample (or the context of a callchain entry): a user-mode address is looked up in the
  // thread's maps only, as perf 6.1 does, so a user frame that lies in the kernel's range (a
  // frame-pointer walk through code without frame pointers) is unknown, not a kernel symbol.
  ResolvedAddress resolve(pid_t pid, pid_t tid, uint8_t cpumode, uint64_t ip) const;

  std::shared_ptr<const Dso> find_dso(std::string_view name) const;
  std::vector<std::shared_ptr<const Dso>> dsos() const;

 private:
  struct KallsymsCache {
    std::once_flag once;
    std::optional<Result<Kallsyms>> result;
    // The relocation reference alone, read from the file's first lines: a recording's kernel
    // MMAP needs it, and a profile without kernel samples then never reads the whole file.
    std::once_flag reference_once;
    std::optional<RelocationReference> reference;
    // The kernel image's symbols from this boot's cache (kernel_image_cache.h), when it had them.
    std::once_flag image_once;
    std::optional<Kallsyms> cached_image;
  };

  static Result<const Kallsyms*> cached_kallsyms(KallsymsCache& cache, const std::filesystem::path& path);
  static const std::optional<RelocationReference>& cached_reference(KallsymsCache& cache, const std::filesystem::path& path);
  // The kernel image's symbols: from the cache when `config` names one and reads the running
  // kernel's /proc/kallsyms, else (filling the cache) from the whole file; module lines come
  // only from the whole file (cached_kallsyms).
  static Result<const Kallsyms*> cached_kernel_image(KallsymsCache& cache, const SymbolConfig& config);
  void process_kernel_mmap(const MmapEvent& event);
  std::shared_ptr<Dso> kernel_dso();
  std::shared_ptr<Dso> module_dso(const std::string& name);
  std::shared_ptr<Dso> user_dso(const MmapEvent& event, MapAddressing& addressing);
  // The mount namespace of process `pid` when it is a live one other than vperf's (the host
  // machine only), looked up once per pid.
  const MountNamespace* mount_namespace(pid_t pid);
  std::shared_ptr<Dso> remember(std::string key, std::shared_ptr<Dso> dso);
  int64_t kernel_delta(uint64_t recorded_reference) const;

  pid_t pid_;
  SymbolConfig config_;
  std::string kernel_name_;
  std::shared_ptr<KallsymsCache> kallsyms_;
  MapSet kernel_maps_;
  // By tid. A hash map: a system-wide recording has thousands of threads, and each sample and
  // each address the replay resolves looks its thread up (a tree walk cost 3% of a report).
  std::unordered_map<pid_t, std::unique_ptr<Thread>> threads_;
  std::vector<std::unique_ptr<Thread>> replaced_threads_;  // by a FORK reusing their tid
  std::map<std::string, std::shared_ptr<Dso>, std::less<>> dsos_;
  MountNamespaces namespaces_;
};

}  // namespace vperf::symbols
