#include "unwind/dwarf_unwinder.h"


#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/files.h"
#include "core/scoped_fd.h"
#include "symbols/elf_file.h"
#include "symbols/vdso.h"
#include "unwind/perf_regs.h"

namespace vperf::unwind {

namespace {

// The sample being unwound, as the Dwfl callbacks see it.
struct SampleState {
  const DwarfRegisters* regs = nullptr;
  uint64_t stack_start = 0;  // the sampled sp: the first byte of the copy
  std::span<const uint8_t> stack;
  std::vector<uint64_t>* ips = nullptr;
  size_t first_ip = 0;  // ips->size() before this sample
  size_t max_frames = 0;
};

// Reads `width` bytes (4 or 8) at `addr` from `bytes`, which hold the memory at `start`.
bool read_span(std::span<const uint8_t> bytes, uint64_t start, uint64_t addr, size_t width, Dwarf_Word& out) {
  if (addr < start) return false;
  const uint64_t offset = addr - start;
  if (offset > bytes.size() || bytes.size() - offset < width) return false;
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, width);  // x86 is little-endian: a short read zero-extends
  out = value;
  return true;
}

// `addr` read from the file image of the module that covers it, inside the file bytes of one
// of its PT_LOAD segments (never .bss, never past the end of the file).
bool read_module_file(Dwfl* dwfl, Dwarf_Addr addr, size_t width, Dwarf_Word& out) {
  Dwfl_Module* module = dwfl_addrmodule(dwfl, addr);
  if (module == nullptr) return false;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  if (elf == nullptr || addr < bias) return false;
  size_t file_size = 0;
  const char* raw = elf_rawfile(elf, &file_size);
  size_t phnum = 0;
  if (raw == nullptr || elf_getphdrnum(elf, &phnum) != 0) return false;
  const uint64_t vaddr = addr - bias;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) continue;
    if (vaddr < phdr.p_vaddr || vaddr - phdr.p_vaddr >= phdr.p_filesz) continue;
    const uint64_t in_segment = vaddr - phdr.p_vaddr;
    if (phdr.p_filesz - in_segment < width || phdr.p_offset > file_size) return false;
    const std::span<const uint8_t> file(reinterpret_cast<const uint8_t*>(raw), file_size);
    return read_span(file.subspan(phdr.p_offset), 0, in_segment, width, out);
  }
  return false;
}

// This machine's [vdso] as a file libdwfl can open: a memfd holding the image read once.
class VdsoFile {
 public:
  // A new descriptor of the image for dwfl_report_elf (which takes it over), or -1.
  int dup_fd() {
    if (!tried_) {
      tried_ = true;
      if (Result<std::vector<char>> image = symbols::read_own_vdso()) {
        ScopedFd fd(::memfd_create("vperf-vdso", MFD_CLOEXEC));
        if (fd.get() >= 0 && ::write(fd.get(), image->data(), image->size()) == static_cast<ssize_t>(image->size()))
          fd_ = std::move(fd);
      }
    }
    return fd_.get() < 0 ? -1 : ::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
  }

 private:
  bool tried_ = false;
  ScopedFd fd_;
};

// A mapped ELF file as libdwfl gets it: the file and its load bias (where its virtual address
// 0 is in the process).
struct ModuleSpec {
  std::shared_ptr<const symbols::Dso> dso;  // kept alive: its address identifies the file
  uint64_t bias = 0;
  bool operator==(const ModuleSpec& other) const { return dso == other.dso && bias == other.bias; }
};

// The modules a process's maps call for, in address order, each file once per bias.
std::vector<ModuleSpec> modules_of(const symbols::Machine& machine, const symbols::MapSet& maps) {
  std::vector<ModuleSpec> modules;
  for (const std::shared_ptr<const symbols::Map>& map : maps.maps()) {
    const symbols::Dso* dso = map->dso.get();
    if (dso == nullptr || map->addressing != symbols::MapAddressing::FileOffset) continue;
    const bool is_vdso = dso->kind() == symbols::DsoKind::Vdso;
    if (dso->kind() != symbols::DsoKind::User && !is_vdso) continue;
    if (is_vdso && machine.config().vdso != symbols::VdsoSource::ThisProcess) continue;
    // Code maps only (prot 0: an MMAP without prot, which perf records for code alone).
    // A data map's page-aligned pgoff can fall into the segment before its own (the read-only
    // data of a PIE ends in the page the relro data starts in), which would give a wrong bias
    // and a second, overlapping module for the file.
    if (map->prot != 0 && (map->prot & PROT_EXEC) == 0) continue;
    std::optional<uint64_t> vaddr = symbols::file_offset_to_vaddr(dso->contents().segments, map->pgoff);
    if (!vaddr || *vaddr > map->start) continue;
    ModuleSpec module{map->dso, map->start - *vaddr};
    if (std::find(modules.begin(), modules.end(), module) == modules.end()) modules.push_back(std::move(module));
  }
  return modules;
}

// One process's Dwfl: a module per mapped ELF file, attached to the callbacks below.
class ProcessDwfl {
 public:
  ProcessDwfl(const symbols::Machine& machine, pid_t pid, std::vector<ModuleSpec> modules, VdsoFile& vdso)
      : modules_(std::move(modules)) {
    debuginfo_path_ = ":.debug";
    for (const std::filesystem::path& dir : machine.config().debug_dirs) debuginfo_path_ += ":" + dir.string();
    debuginfo_path_ptr_ = debuginfo_path_.data();
    callbacks_.find_elf = dwfl_build_id_find_elf;
    callbacks_.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks_.section_address = dwfl_offline_section_address;
    callbacks_.debuginfo_path = &debuginfo_path_ptr_;
    dwfl_ = dwfl_begin(&callbacks_);
    if (dwfl_ == nullptr) return;
    dwfl_report_begin(dwfl_);
    report_modules(machine, vdso);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    attached_ = dwfl_attach_state(dwfl_, nullptr, pid, &kThreadCallbacks, this);
  }
  ProcessDwfl(const ProcessDwfl&) = delete;
  ProcessDwfl& operator=(const ProcessDwfl&) = delete;
  ~ProcessDwfl() {
    if (dwfl_ != nullptr) dwfl_end(dwfl_);
  }

  bool built_from(const std::vector<ModuleSpec>& modules) const { return modules == modules_; }

  // Whether perf's libunwind, failing to unwind a leaf's pc with only the link register (and SP
  // 0), falls back to that register: when the pc has no CFI, or when its CFA needs a register the
  // sample lacks (x29): then its step fails and libunwind takes x30 as the return address. Where
  // the CFA is on SP and the CFI saved the return address on the stack, the step succeeds and
  // the read of the (absent) stack fails: no caller.
  bool falls_back_to_link_register(uint64_t pc) {
    std::unique_ptr<Dwarf_Frame, decltype(&std::free)> owned(cfi_frame(pc), &std::free);
    Dwarf_Frame* frame = owned.get();
    if (frame == nullptr) return true;
    constexpr Dwarf_Word kSp = 31;
    Dwarf_Op* cfa = nullptr;
    size_t cfa_ops = 0;
    if (dwarf_frame_cfa(frame, &cfa, &cfa_ops) != 0 || cfa_ops != 1) return true;
    return !((cfa[0].atom == DW_OP_bregx && cfa[0].number == kSp) || cfa[0].atom == DW_OP_breg31);
  }

  // Whether CFI (.eh_frame or .debug_frame) covers pc: PLT entries and hand-written assembly
  // have none on arm64.
  bool has_cfi(uint64_t pc) { return has_cfi_in(dwfl_, pc); }

  // Appends the sample's frames; false if libdwfl could not start (then nothing was added).
  bool unwind(SampleState& sample, pid_t tid) {
    if (!attached_) return false;
    current_ = &sample;
    dwfl_getthread_frames(dwfl_, tid, on_frame, &sample);  // stops at the first frame it cannot unwind
    current_ = nullptr;
    return sample.ips->size() > sample.first_ip;
  }

 private:
  // The CFI row of pc in `dwfl`'s modules (malloc'ed, the caller frees it), or nullptr where no
  // CFI covers it.
  static Dwarf_Frame* cfi_frame_in(Dwfl* dwfl, uint64_t pc) {
    Dwfl_Module* module = dwfl == nullptr ? nullptr : dwfl_addrmodule(dwfl, pc);
    if (module == nullptr) return nullptr;
    Dwarf_Frame* frame = nullptr;
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi = dwfl_module_eh_cfi(module, &bias);
    if (cfi != nullptr && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) return frame;
    cfi = dwfl_module_dwarf_cfi(module, &bias);
    if (cfi != nullptr && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) return frame;
    return nullptr;
  }
  static bool has_cfi_in(Dwfl* dwfl, uint64_t pc) {
    std::unique_ptr<Dwarf_Frame, decltype(&std::free)> frame(cfi_frame_in(dwfl, pc), &std::free);
    return frame != nullptr;
  }
  Dwarf_Frame* cfi_frame(uint64_t pc) { return cfi_frame_in(dwfl_, pc); }

  void report_modules(const symbols::Machine& machine, VdsoFile& vdso) {
    for (const ModuleSpec& module : modules_) {
      const std::string& name = module.dso->name();
      if (module.dso->kind() == symbols::DsoKind::Vdso) {
        int fd = vdso.dup_fd();
        if (fd >= 0 && dwfl_report_elf(dwfl_, name.c_str(), name.c_str(), fd, module.bias, true) == nullptr)
          ::close(fd);  // taken over only on success
      } else {
        const std::filesystem::path file = machine.config().symfs.empty()
                                               ? std::filesystem::path(name)
                                               : machine.config().symfs / std::filesystem::path(name).relative_path();
        // A file that is gone, is not regular (a hostile perf.data may name a FIFO or a device)
        // or is not ELF is left out: its frames end the walk, as in perf.
        Result<ScopedFd> fd = open_regular_file(file);
        if (!fd) continue;
        int raw = fd->release();
        if (dwfl_report_elf(dwfl_, name.c_str(), file.c_str(), raw, module.bias, true) == nullptr)
          ::close(raw);  // taken over only on success
      }
    }
  }

  static pid_t next_thread(Dwfl*, void* dwfl_arg, void** thread_argp) {
    // The process has one thread: whichever the current sample is from.
    if (*thread_argp != nullptr) return 0;
    *thread_argp = dwfl_arg;
    return dwfl_pid(static_cast<ProcessDwfl*>(dwfl_arg)->dwfl_);
  }
  static bool get_thread(Dwfl*, pid_t, void* dwfl_arg, void** thread_argp) {
    *thread_argp = dwfl_arg;
    return true;
  }
  static bool memory_read(Dwfl* dwfl, Dwarf_Addr addr, Dwarf_Word* result, void* dwfl_arg) {
    const SampleState* sample = static_cast<ProcessDwfl*>(dwfl_arg)->current_;
    if (sample == nullptr) return false;
    const size_t width = sample->regs->abi == RegisterAbi::I386 ? 4 : 8;  // arm64's words are 8 bytes too
    return read_span(sample->stack, sample->stack_start, addr, width, *result) ||
           read_module_file(dwfl, addr, width, *result);
  }
  static bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
    const SampleState* sample = static_cast<ProcessDwfl*>(thread_arg)->current_;
    if (sample == nullptr) return false;
    const DwarfRegisters& regs = *sample->regs;
    // Registers the sample lacks stay undefined: set each run of known ones.
    for (unsigned first = 0; first < regs.count;) {
      if (!regs.has(first)) {
        ++first;
        continue;
      }
      unsigned end = first;
      while (end < regs.count && regs.has(end)) ++end;
      if (!dwfl_thread_state_registers(thread, static_cast<int>(first), end - first, &regs.values[first])) return false;
      first = end;
    }
    dwfl_thread_state_register_pc(thread, regs.ip);
    return true;
  }
  static int on_frame(Dwfl_Frame* frame, void* arg) {
    SampleState& sample = *static_cast<SampleState*>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    // perf 6.1 keeps a frame whose return address reads 0 (a thread's outermost frame, in code
    // without CFI that marks it): as pc - 1, an address no map holds, "[unknown]" in its output.
    if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
    const uint64_t ip = activation ? pc : pc - 1;
    sample.ips->push_back(ip);
    if (sample.ips->size() - sample.first_ip >= sample.max_frames) return DWARF_CB_ABORT;
    // On arm64 a caller's return address with no CFI (a stale value read as one: data, an
    // unmapped page) ends the chain there, as perf's libunwind ends it; libdwfl's arm64 backend
    // would go on by the frame pointer and the link register, into frames perf never shows.
    if (!activation && sample.regs->abi == RegisterAbi::Arm64 && !has_cfi_in(dwfl_thread_dwfl(dwfl_frame_thread(frame)), ip))
      return DWARF_CB_ABORT;
    return DWARF_CB_OK;
  }

  static constexpr Dwfl_Thread_Callbacks kThreadCallbacks = {
      .next_thread = next_thread,
      .get_thread = get_thread,
      .memory_read = memory_read,
      .set_initial_registers = set_initial_registers,
      .detach = nullptr,
      .thread_detach = nullptr,
  };

  std::vector<ModuleSpec> modules_;  // what was reported
  std::string debuginfo_path_;
  char* debuginfo_path_ptr_ = nullptr;
  Dwfl_Callbacks callbacks_{};  // libdwfl keeps pointers to this and to debuginfo_path_ptr_
  Dwfl* dwfl_ = nullptr;
  bool attached_ = false;
  SampleState* current_ = nullptr;
};

}  // namespace

// The Dwfls of recently sampled processes, by machine and pid.
class DwarfUnwinder::Cache {
 public:
  explicit Cache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  // The process's Dwfl for its current code maps, built or rebuilt as needed; nullptr without
  // maps.
  ProcessDwfl* process_for(const symbols::Machine& machine, const symbols::Thread& thread) {
    if (!thread.maps) return nullptr;
    // Data maps come and go (malloc, thread stacks) without a rebuild: only the code counts.
    std::vector<ModuleSpec> modules = modules_of(machine, *thread.maps);
    Entry& entry = processes_[Key{&machine, thread.pid}];
    entry.last_use = ++clock_;
    if (!entry.dwfl || !entry.dwfl->built_from(modules)) {
      entry.dwfl.reset();  // its files close before the new set opens
      forget_exited(thread.pid);
      entry.dwfl = std::make_unique<ProcessDwfl>(machine, thread.pid, std::move(modules), vdso_);
      ++builds_;
      evict_beyond_capacity();
    }
    return entry.dwfl.get();
  }

  uint64_t builds() const { return builds_; }

 private:
  struct Entry {
    std::unique_ptr<ProcessDwfl> dwfl;
    uint64_t last_use = 0;
  };
  using Key = std::pair<const symbols::Machine*, pid_t>;

  // Drops the Dwfls of processes that have exited (their EXIT record came, in time order, so no
  // sample of theirs follows; a pid used again is a new thread, not exited). Each holds its own
  // mapping of every ELF file it unwound through: a shell script's dozens of short processes
  // held dozens of copies of libc, bash and ld.so resident. Checked when a Dwfl is built, not
  // per sample.
  void forget_exited(pid_t building) {
    std::erase_if(processes_, [&](const auto& entry) {
      const auto& [key, value] = entry;
      if (key.second == building) return false;
      const symbols::Thread* main_thread = key.first->find_thread(key.second);
      return main_thread != nullptr && main_thread->exited;
    });
  }

  // Drops the least recently used processes; the one just used is the newest, so it stays.
  void evict_beyond_capacity() {
    while (processes_.size() > capacity_) {
      auto oldest = std::min_element(processes_.begin(), processes_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
      processes_.erase(oldest);
    }
  }

  size_t capacity_;
  std::map<Key, Entry> processes_;
  uint64_t clock_ = 0;
  uint64_t builds_ = 0;
  VdsoFile vdso_;
};

DwarfUnwinder::DwarfUnwinder(DwarfUnwinderOptions options)
    : options_(options), cache_(std::make_unique<Cache>(options.max_cached_processes)) {}

DwarfUnwinder::~DwarfUnwinder() = default;

uint64_t DwarfUnwinder::dwfl_builds() const { return cache_->builds(); }

void DwarfUnwinder::unwind(const symbols::Machine& machine, const symbols::Thread& thread, const data::Sample& sample,
                           const perf_event_attr& attr, std::vector<uint64_t>& ips) {
  if (options_.max_frames == 0) return;
  std::optional<DwarfRegisters> regs = dwarf_registers(sample.regs_user_abi, attr.sample_regs_user, sample.regs_user, options_.arch);
  if (!regs) return;
  // dyn_size is how much of the copy the kernel could fill; the rest is zeros. Without SP the
  // copy's address is unknown, so none of it can be used.
  const size_t stack_size = regs->has_sp ? std::min<uint64_t>(sample.stack_user.size(), sample.stack_user_dyn_size) : 0;
  SampleState state{.regs = &*regs,
                    .stack_start = regs->sp,
                    .stack = std::span<const uint8_t>(sample.stack_user.data(), stack_size),
                    .ips = &ips,
                    .first_ip = ips.size(),
                    .max_frames = options_.max_frames};
  ProcessDwfl* process = cache_->process_for(machine, thread);
  if (process == nullptr || !process->unwind(state, thread.tid)) {
    ips.push_back(regs->ip);
    return;
  }
  // perf's libunwind on arm64: where the leaf's pc has no CFI (a PLT entry, assembly), its DWARF
  // step fails and it takes x30 as the return address, the CFA staying SP, then unwinds on from
  // there with CFI (x30 itself now unknown). The caller's frame is x30 - 1, as for any return
  // address.
  if (options_.arch != RegisterArch::Arm64 || ips.size() - state.first_ip != 1 || ips.size() - state.first_ip >= options_.max_frames)
    return;
  if (!regs->has(kPerfRegArm64Lr) || regs->values[kPerfRegArm64Lr] == 0 || process->has_cfi(regs->ip)) return;
  DwarfRegisters caller = *regs;
  caller.ip = regs->values[kPerfRegArm64Lr];
  caller.known &= ~(uint32_t{1} << kPerfRegArm64Lr);
  state.regs = &caller;
  state.first_ip = ips.size();
  state.max_frames = options_.max_frames - 1;
  if (process->unwind(state, thread.tid)) ips[state.first_ip] -= 1;
}

std::optional<uint64_t> DwarfUnwinder::leaf_caller(const symbols::Machine& machine, const symbols::Thread& thread,
                                                   const data::Sample& sample, const perf_event_attr& attr, uint64_t leaf_ip) {
  // perf's get_leaf_frame_caller_enabled: an arm64 frame-pointer recording with LR alone.
  if (options_.arch != RegisterArch::Arm64 || attr.sample_regs_user != kArm64LinkRegisterMask || !sample.stack_user.empty())
    return std::nullopt;
  std::optional<uint64_t> lr = perf_register(attr.sample_regs_user, sample.regs_user, kPerfRegArm64Lr);
  if (!lr || sample.regs_user_abi != PERF_SAMPLE_REGS_ABI_64) return std::nullopt;
  // First libdwfl's two frames from the leaf's pc, x30 and SP 0 (what perf gives libunwind):
  // the second is the caller where the CFI keeps the return address in x30.
  DwarfRegisters regs;
  regs.abi = RegisterAbi::Arm64;
  regs.count = kMaxDwarfRegisters;
  regs.values[kPerfRegArm64Lr] = *lr;
  regs.known = (uint32_t{1} << kPerfRegArm64Lr) | (uint32_t{1} << kPerfRegArm64Sp);
  regs.ip = leaf_ip;
  regs.has_sp = true;
  std::vector<uint64_t> ips;
  SampleState state{.regs = &regs, .stack_start = 0, .stack = {}, .ips = &ips, .first_ip = 0, .max_frames = 2};
  ProcessDwfl* process = cache_->process_for(machine, thread);
  if (process == nullptr) return std::nullopt;
  if (process->unwind(state, thread.tid) && ips.size() == 2) return ips[1];
  // Then libunwind's fallback to the link register, as a return address minus one.
  if (*lr != 0 && process->falls_back_to_link_register(leaf_ip)) return *lr - 1;
  return std::nullopt;
}

std::unique_ptr<UserStackUnwinder> make_dwarf_unwinder(DwarfUnwinderOptions options) {
  return std::make_unique<DwarfUnwinder>(options);
}

}  // namespace vperf::unwind
