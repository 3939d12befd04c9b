#include "symbols/machine.h"

#include <limits>

#include "symbols/jit_map.h"
#include "symbols/kernel_image_cache.h"
#include "symbols/vdso.h"

namespace vperf::symbols {
namespace {

// perf's is_anon_memory / is_no_dso_memory (util/map.c).
bool is_anon_memory(std::string_view name) {
  return name == "//anon" || name.starts_with("/dev/zero") || name.starts_with("/anon_hugepage");
}
bool is_no_dso_memory(std::string_view name) {
  return name.starts_with("[stack") || name.starts_with("/SYSV") || name == "[heap]";
}

bool is_kernel_image_name(std::string_view name) {
  return name.starts_with("[kernel.kallsyms]") || name.starts_with("[guest.kernel.kallsyms");
}

uint64_t saturating_end(uint64_t start, uint64_t len) {
  return len > std::numeric_limits<uint64_t>::max() - start ? std::numeric_limits<uint64_t>::max() : start + len;
}

DsoContents contents_with(SymbolTable table) {
  DsoContents c;
  c.symbols = std::move(table);
  return c;
}

}  // namespace

Machine::Machine(SymbolConfig config, pid_t pid)
    : pid_(pid),
      config_(std::move(config)),
      kernel_name_(pid == kHostPid ? "[kernel.kallsyms]" : "[guest.kernel.kallsyms]"),
      kallsyms_(std::make_shared<KallsymsCache>()),
      namespaces_(config_.proc) {}

Result<const Kallsyms*> Machine::cached_kallsyms(KallsymsCache& cache, const std::filesystem::path& path) {
  std::call_once(cache.once, [&] { cache.result.emplace(Kallsyms::load(path)); });
  const Result<Kallsyms>& r = *cache.result;
  if (!r) return r.error();
  return &r.value();
}

const std::optional<RelocationReference>& Machine::cached_reference(KallsymsCache& cache, const std::filesystem::path& path) {
  std::call_once(cache.reference_once, [&] {
    // A file that cannot be read has no reference: the delta is 0, as a failed full load gives.
    if (auto r = Kallsyms::load_relocation_reference(path)) cache.reference = *r;
  });
  return cache.reference;
}

Result<const Kallsyms*> Machine::cached_kernel_image(KallsymsCache& cache, const SymbolConfig& config) {
  std::call_once(cache.image_once, [&] {
    if (!config.kernel_image_cache || config.kallsyms != "/proc/kallsyms") return;
    const std::optional<std::string> boot = current_boot_id();
    const std::optional<RelocationReference>& reference = cached_reference(cache, config.kallsyms);
    if (!boot || !reference) return;  // hidden addresses are never cached
    cache.cached_image = read_cached_kernel_image(*config.kernel_image_cache, *boot, *reference);
    if (cache.cached_image) return;
    Result<const Kallsyms*> whole = cached_kallsyms(cache, config.kallsyms);
    // A cache that cannot be written costs the next run a read of kallsyms, nothing else.
    if (whole && whole.value()->relocation_reference() && whole.value()->relocation_reference()->address == reference->address)
      (void)write_cached_kernel_image(*config.kernel_image_cache, *boot, *whole.value());
  });
  if (cache.cached_image) return &*cache.cached_image;
  return cached_kallsyms(cache, config.kallsyms);
}

Result<const Kallsyms*> Machine::kallsyms() const { return cached_kallsyms(*kallsyms_, config_.kallsyms); }

std::shared_ptr<Dso> Machine::remember(std::string key, std::shared_ptr<Dso> dso) {
  auto [it, inserted] = dsos_.emplace(std::move(key), std::move(dso));
  return it->second;
}

std::shared_ptr<Dso> Machine::kernel_dso() {
  if (auto it = dsos_.find(kernel_name_); it != dsos_.end()) return it->second;
  const DsoKind kind = is_host() ? DsoKind::Kernel : DsoKind::GuestKernel;
  if (!config_.vmlinux.empty())
    return remember(kernel_name_, std::make_shared<Dso>(kind, kernel_name_, Dso::vmlinux_loader(config_.vmlinux, config_.demangle)));
  // Loaders hold the cache, not the Machine: a Dso may outlive it.
  auto loader = [cache = kallsyms_, config = config_]() -> Result<DsoContents> {
    auto k = cached_kernel_image(*cache, config);
    if (!k) return k.error();
    return contents_with(k.value()->kernel());
  };
  return remember(kernel_name_, std::make_shared<Dso>(kind, kernel_name_, loader));
}

std::shared_ptr<Dso> Machine::module_dso(const std::string& name) {
  if (auto it = dsos_.find(name); it != dsos_.end()) return it->second;
  std::string bare = name.substr(1, name.size() - 2);
  auto loader = [cache = kallsyms_, path = config_.kallsyms, bare]() -> Result<DsoContents> {
    auto k = cached_kallsyms(*cache, path);
    if (!k) return k.error();
    const SymbolTable* table = k.value()->module(bare);
    if (table == nullptr) return Error{path.string() + " has no symbols of module " + bare};
    return contents_with(*table);
  };
  return remember(name, std::make_shared<Dso>(DsoKind::Module, name, loader));
}

int64_t Machine::kernel_delta(uint64_t recorded_reference) const {
  if (recorded_reference == 0) return 0;
  const std::optional<RelocationReference>& reference = cached_reference(*kallsyms_, config_.kallsyms);
  if (!reference) return 0;
  return static_cast<int64_t>(reference->address - recorded_reference);
}

Result<void> Machine::create_kernel_maps() {
  uint64_t start = 0, end = 0;
  if (!config_.vmlinux.empty()) {
    // The image's own text: _text (or its first symbol) to _etext (or its last symbol's end).
    std::shared_ptr<Dso> image = kernel_dso();
    if (image->load_error()) return *image->load_error();
    const SymbolTable& table = image->symbols();
    if (table.empty()) return Error{config_.vmlinux.string() + ": no kernel text symbols"};
    const Symbol* text = table.find_by_name("_text");
    const Symbol* etext = table.find_by_name("_etext");
    start = text ? text->start : table.front().start;
    end = etext ? etext->start : table.back().end;
    if (end <= start) return Error{config_.vmlinux.string() + ": no kernel text symbols"};
  } else {
    auto k = kallsyms();
    if (!k) return k.error();
    const Kallsyms& ks = *k.value();
    if (auto ref = ks.relocation_reference()) start = ref->address;
    else if (!ks.kernel().empty()) start = ks.kernel().front().start;
    if (auto etext = ks.address_of("_etext")) end = *etext;
    else if (!ks.kernel().empty()) end = ks.kernel().back().end;
    if (end <= start) return Error{config_.kallsyms.string() + ": no kernel text symbols"};
  }
  kernel_maps_.insert(Map{start, end, start, PROT_READ | PROT_EXEC, MapAddressing::Absolute, 0, kernel_dso()});

  auto modules = load_kernel_modules(config_.modules);
  if (!modules) {
    if (modules.error().errno_value != ENOENT) return modules.error();
    // No module list (a kernel without module support, or a guest's kallsyms given alone):
    // each module of the kallsyms gets a map over its symbols, so a sample in a module resolves
    // to its function, not to an address past the kernel image's end. (perf 6.1 needs the list
    // or the file's module MMAPs to place them.)
    if (config_.vmlinux.empty()) {
      auto k = kallsyms();
      for (const auto& [name, table] : k.value()->modules())
        if (!table.empty())
          kernel_maps_.insert(Map{table.front().start, table.back().end, 0, PROT_READ | PROT_EXEC,
                                  MapAddressing::Absolute, 0, module_dso("[" + name + "]")});
    }
    return {};
  }
  for (const auto& m : modules.value()) {
    std::string name = module_dso_name(m.name);
    kernel_maps_.insert(Map{m.base, m.base + m.size, 0, PROT_READ | PROT_EXEC, MapAddressing::Absolute, 0, module_dso(name)});
  }
  return {};
}

void Machine::process_kernel_mmap(const MmapEvent& event) {
  uint64_t end = saturating_end(event.start, event.len);
  if (is_kernel_image_name(event.filename)) {
    // pgoff is the address of the relocation reference (_text) in the recorded kernel.
    int64_t delta = kernel_delta(event.pgoff);
    kernel_maps_.insert(Map{event.start, end, event.pgoff, event.prot, MapAddressing::Absolute, delta, kernel_dso()});
    return;
  }
  std::string name;
  std::shared_ptr<Dso> dso;
  // As perf's machine__process_kernel_mmap_event: a path or a "[name]" that is not the kernel
  // image is a module, whose symbols are the kallsyms lines of that module ("[virtio_console]"
  // written by perf kvm record for a guest module, with or without a modules list).
  if (event.filename.starts_with("/") || event.filename.starts_with("[") || event.filename.ends_with(".ko") ||
      event.filename.find(".ko.") != std::string::npos) {
    dso = module_dso(module_dso_name(event.filename));
  } else {
    // Other kernel text without symbols here.
    name = event.filename;
    if (auto it = dsos_.find(name); it != dsos_.end()) dso = it->second;
    else dso = remember(name, std::make_shared<Dso>(DsoKind::Unknown, name, nullptr));
  }
  kernel_maps_.insert(Map{event.start, end, event.pgoff, event.prot, MapAddressing::Absolute, 0, dso});
}

std::shared_ptr<Dso> Machine::user_dso(const MmapEvent& event, MapAddressing& addressing) {
  const std::string& file = event.filename;
  bool exec = (event.prot & PROT_EXEC) != 0;
  addressing = MapAddressing::FileOffset;
  if (is_anon_memory(file) || is_no_dso_memory(file)) {
    addressing = MapAddressing::Absolute;
    if (exec) {  // JIT code: symbols from perf-PID.map
      std::filesystem::path path = jit_map_path(config_.jit_map_dir, event.pid);
      std::string name = path.string();
      if (auto it = dsos_.find(name); it != dsos_.end()) return it->second;
      // perf's dso__find_perf_map: a containerized JIT wrote the map in its own /tmp, named by
      // its pid there; else the host's, by the host's pid. The name stays the host pid's.
      std::vector<std::filesystem::path> candidates;
      if (const MountNamespace* ns = mount_namespace(event.pid))
        candidates.push_back(ns->root / jit_map_path(config_.jit_map_dir, ns->pid_inside).relative_path());
      candidates.push_back(path);
      auto loader = [candidates]() -> Result<DsoContents> {
        Result<SymbolTable> table = Error{"no JIT map"};
        for (const std::filesystem::path& candidate : candidates)
          if (table = load_jit_map(candidate); table) break;  // the error kept is the host map's
        if (!table) return table.error();
        return contents_with(std::move(table).value());
      };
      return remember(name, std::make_shared<Dso>(DsoKind::Jit, name, loader));
    }
    if (auto it = dsos_.find(file); it != dsos_.end()) return it->second;
    return remember(file, std::make_shared<Dso>(DsoKind::Unknown, file, nullptr));
  }
  if (file == "[vdso]") {
    if (auto it = dsos_.find(file); it != dsos_.end()) return it->second;
    Dso::Loader loader;
    if (config_.vdso == VdsoSource::ThisProcess)
      loader = Dso::image_loader(read_own_vdso, "[vdso]", config_.demangle);
    else
      loader = []() -> Result<DsoContents> { return Error{"[vdso] symbols skipped (SymbolConfig::vdso is Skip)"}; };
    return remember(file, std::make_shared<Dso>(DsoKind::Vdso, file, loader));
  }
  if (file.starts_with("[")) {  // [vsyscall], [uprobes], [vectors]...
    if (auto it = dsos_.find(file); it != dsos_.end()) return it->second;
    return remember(file, std::make_shared<Dso>(DsoKind::Unknown, file, nullptr));
  }
  // A process in a container maps the container's files: one Dso per path per mount
  // namespace, read through the first such process's PROC/PID/root (perf's nsinfo).
  const MountNamespace* ns = mount_namespace(event.pid);
  std::string key = ns ? ns->id + "\n" + file : file;
  if (event.build_id) key += "\n" + event.build_id->hex();
  if (auto it = dsos_.find(key); it != dsos_.end()) return it->second;
  std::optional<BuildId> expected = event.build_id;
  if (!expected && config_.recorded_build_ids)
    if (auto it = config_.recorded_build_ids->find(file); it != config_.recorded_build_ids->end()) expected = it->second;
  SymbolConfig config = config_;
  if (ns && config.symfs.empty()) config.symfs = ns->root;  // --symfs, given, is the user's choice
  return remember(key, std::make_shared<Dso>(DsoKind::User, file, Dso::elf_loader(std::move(config), file, expected)));
}

const MountNamespace* Machine::mount_namespace(pid_t pid) { return pid_ == kHostPid ? namespaces_.of(pid) : nullptr; }

void Machine::process_mmap(const MmapEvent& event) {
  uint8_t mode = event.cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
  if (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL) {
    process_kernel_mmap(event);
    return;
  }
  Thread& thread = findnew_thread(event.pid, event.tid);
  MapAddressing addressing = MapAddressing::FileOffset;
  std::shared_ptr<Dso> dso = user_dso(event, addressing);
  thread.maps->insert(Map{event.start, saturating_end(event.start, event.len), event.pgoff, event.prot, addressing, 0, dso});
}

Thread& Machine::findnew_thread(pid_t pid, pid_t tid) {
  if (auto it = threads_.find(tid); it != threads_.end()) {
    Thread& t = *it->second;
    if (t.pid == -1 && pid != -1) t.pid = pid;  // learned the process of a thread seen by tid only
    return t;
  }
  auto thread = std::make_unique<Thread>();
  thread->pid = pid;
  thread->tid = tid;
  thread->comm = ":" + std::to_string(tid);
  if (pid != -1 && pid != tid) {
    Thread& leader = findnew_thread(pid, pid);
    thread->maps = leader.maps;
  } else {
    thread->maps = std::make_shared<MapSet>();
  }
  Thread& ref = *thread;
  threads_[tid] = std::move(thread);
  return ref;
}

std::optional<std::string> Machine::process_comm(pid_t pid, pid_t tid, std::string_view comm, bool /*exec*/) {
  // perf 6.1 keeps the maps across an exec (the new program's MMAPs cut the old ones as they
  // come), so a sample taken inside execve still resolves its user frames in the old image.
  // A thread samples found before anything named it is not in the model (samples do not add
  // threads); they were shown as ":TID", which is what it had here too.
  Thread& t = findnew_thread(pid, tid);
  std::optional<std::string> unnamed;
  if (!t.comm_set) unnamed = std::move(t.comm);
  t.comm = std::string(comm);
  t.comm_set = true;
  return unnamed;
}

void Machine::process_fork(pid_t pid, pid_t ppid, pid_t tid, pid_t ptid) {
  Thread& parent = findnew_thread(ppid, ptid);
  // As perf's thread__fork: a parent's name is passed on only if something named it; a child of
  // an unnamed parent is ":TID" of its own.
  const bool comm_set = parent.comm_set;
  std::string comm = comm_set ? parent.comm : ":" + std::to_string(tid);
  std::shared_ptr<MapSet> parent_maps = parent.maps;
  // A reused tid: the old thread leaves the model (perf removes it too) but not memory, as
  // perf's refcounted thread: report's entries name it by its last comm at the end. Its maps
  // go.
  if (auto old = threads_.find(tid); old != threads_.end()) {
    old->second->maps.reset();
    replaced_threads_.push_back(std::move(old->second));
    threads_.erase(old);
  }
  auto child = std::make_unique<Thread>();
  child->pid = pid;
  child->tid = tid;
  child->ppid = ptid;
  child->comm = comm;
  child->comm_set = comm_set;
  if (pid == ppid) child->maps = parent_maps;                        // a new thread of the same process
  else child->maps = std::make_shared<MapSet>(*parent_maps);         // a new process: a copy
  threads_[tid] = std::move(child);
}

void Machine::process_exit(pid_t /*pid*/, pid_t tid) {
  if (auto it = threads_.find(tid); it != threads_.end()) it->second->exited = true;
}

std::vector<const Thread*> Machine::threads() const {
  std::vector<const Thread*> out;
  out.reserve(threads_.size());
  for (const auto& [tid, thread] : threads_) out.push_back(thread.get());
  return out;
}

const Thread* Machine::find_thread(pid_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : it->second.get();
}

ResolvedAddress Machine::resolve(pid_t pid, pid_t tid, uint8_t cpumode, uint64_t ip) const {
  ResolvedAddress r;
  r.ip = ip;
  uint8_t mode = cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
  r.level = level_for_cpumode(mode);
  const MapSet* maps = nullptr;
  bool kernel_mode = mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
  bool user_mode = mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;
  if (kernel_mode) {
    maps = &kernel_maps_;
  } else if (user_mode) {
    const Thread* t = find_thread(tid);
    if (t == nullptr && pid != -1) t = find_thread(pid);  // the process's maps are the leader's
    if (t != nullptr) maps = t->maps.get();
  } else {
    return r;  // hypervisor or unknown mode: perf resolves nothing
  }
  if (maps != nullptr) r.map = maps->find_shared(ip);
  if (!r.map && kernel_mode) {
    // The kernel's MMAP covers _text.._etext, but perf stretches the kernel map to the next
    // kernel map (a module) or the end of the address space, so .init.text (start_kernel at
    // the root of the boot CPU's idle stack) resolves through kallsyms too.
    std::shared_ptr<const Map> before = kernel_maps_.find_preceding(ip);
    if (before && before->dso && before->dso->name() == kernel_name_) r.map = std::move(before);
  }
  if (!r.map) return r;
  r.map_relative = r.map->map_ip(ip);
  auto addr = r.map->dso->symbol_address(r.map_relative);
  if (!addr) return r;
  r.symbol_address = *addr;
  r.symbol = r.map->dso->symbols().find(*addr);
  if (r.symbol != nullptr) r.symbol_offset = *addr - r.symbol->start;
  return r;
}

std::shared_ptr<const Dso> Machine::find_dso(std::string_view name) const {
  if (auto it = dsos_.find(name); it != dsos_.end()) return it->second;
  for (const auto& [key, dso] : dsos_)
    if (dso->name() == name) return dso;
  return nullptr;
}

std::vector<std::shared_ptr<const Dso>> Machine::dsos() const {
  std::vector<std::shared_ptr<const Dso>> out;
  for (const auto& [key, dso] : dsos_) out.push_back(dso);
  return out;
}

}  // namespace vperf::symbols
