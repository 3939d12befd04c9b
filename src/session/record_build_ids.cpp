#include "session/record_build_ids.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "core/files.h"
#include "report/sample_replay.h"
#include "symbols/elf_file.h"
#include "symbols/kernel_modules.h"
#include "symbols/machines.h"
#include "symbols/process_namespace.h"
#include "symbols/vdso.h"

namespace vperf::session {

namespace {

constexpr uint32_t kNoteGnuBuildId = 3;  // NT_GNU_BUILD_ID

std::optional<symbols::BuildId> build_id_of_image(const std::function<Result<std::vector<char>>()>& read_image) {
  Result<std::vector<char>> image = read_image ? read_image() : symbols::read_own_vdso();
  if (!image) return std::nullopt;
  Result<symbols::ElfFile> elf = symbols::ElfFile::from_image(std::move(image).value(), "[vdso]");
  return elf ? elf->build_id() : std::nullopt;
}

// A DSO met in the recording: where perf's dso list would have it, and whether a sample hit it.
struct MetDso {
  std::string name;  // as the BUILD_ID entry names it
  symbols::DsoKind kind = symbols::DsoKind::Unknown;
  size_t first_mapped = std::numeric_limits<size_t>::max();
  size_t first_hit = std::numeric_limits<size_t>::max();
  bool hit = false;
  pid_t mapped_by = -1;  // the first process that mapped it (its mount namespace has the file)
};

class HitTracker {
 public:
  // MMAP/MMAP2 records, in the order perf meets them: its dso list grows in this order.
  void on_record(const data::RecordView& view) {
    const std::string* filename = nullptr;
    if (const auto* m = std::get_if<data::MmapRecord>(&view.record.body)) filename = &m->filename;
    if (const auto* m = std::get_if<data::Mmap2Record>(&view.record.body)) filename = &m->filename;
    if (!filename) return;
    uint8_t mode = view.record.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (mode != PERF_RECORD_MISC_KERNEL && mode != PERF_RECORD_MISC_USER) return;  // guests: not this machine
    std::string key = *filename;
    if (mode == PERF_RECORD_MISC_KERNEL && !key.starts_with("[kernel.kallsyms]")) {
      // A module: perf names it by the path it was mapped from, vperf's machine by "[name]".
      key = symbols::module_dso_name(*filename);
      module_paths_.emplace(key, *filename);
    }
    if (mapped_order_.emplace(key, mapped_order_.size()).second) {
      // The kernel's maps ([kernel.kallsyms]_text) are one DSO, named as the machine names it.
      MetDso& met = mapped_[key.starts_with("[kernel.kallsyms]") ? std::string("[kernel.kallsyms]") : key];
      met.name = mode == PERF_RECORD_MISC_KERNEL && module_paths_.contains(key) ? module_paths_.at(key) : key;
      met.first_mapped = mapped_order_.at(key);
      met.kind = mode == PERF_RECORD_MISC_KERNEL ? (key.starts_with("[kernel.kallsyms]") ? symbols::DsoKind::Kernel : symbols::DsoKind::Module)
                 : key == "[vdso]"               ? symbols::DsoKind::Vdso
                 : key.starts_with("/")          ? symbols::DsoKind::User
                                                 : symbols::DsoKind::Unknown;
      if (met.kind == symbols::DsoKind::Kernel) met.name = "[kernel.kallsyms]";
      if (const auto* m = std::get_if<data::Mmap2Record>(&view.record.body)) met.mapped_by = static_cast<pid_t>(m->pid);
      if (const auto* m = std::get_if<data::MmapRecord>(&view.record.body)) met.mapped_by = static_cast<pid_t>(m->pid);
    }
    if (*filename == "[vdso]") vdso_mapped_ = true;
  }

  void on_sample(const report::ResolvedSample& sample) {
    uint8_t mode = sample.cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
    if (mode != PERF_RECORD_MISC_KERNEL && mode != PERF_RECORD_MISC_USER) return;
    const symbols::Dso* dso = sample.at.dso();
    if (!dso) return;
    auto [it, fresh] = hit_.try_emplace(dso->name());
    if (fresh) {
      it->second.first_hit = hit_.size() - 1;
      it->second.name = dso->name();
      it->second.kind = dso->kind();
      if (auto order = mapped_order_.find(dso->name()); order != mapped_order_.end())
        it->second.first_mapped = order->second;
      if (auto mapped = mapped_.find(dso->name()); mapped != mapped_.end()) it->second.mapped_by = mapped->second.mapped_by;
      if (auto path = module_paths_.find(dso->name()); path != module_paths_.end() && path->second.starts_with("/"))
        it->second.name = path->second;
    }
    it->second.hit = true;
  }

  std::vector<MetDso> listed(BuildIdTable table) const {
    std::vector<MetDso> out;
    for (const auto& [name, met] : hit_) out.push_back(met);
    if (table == BuildIdTable::Inject) {
      std::erase_if(out, [](const MetDso& d) { return d.kind == symbols::DsoKind::Kernel || d.kind == symbols::DsoKind::Module; });
      std::sort(out.begin(), out.end(), [](const MetDso& a, const MetDso& b) { return a.first_hit < b.first_hit; });
      return out;
    }
    if (table == BuildIdTable::RecordAll)
      for (const auto& [name, met] : mapped_)
        if (!hit_.contains(name) && name != "[vdso]") out.push_back(met);
    if (vdso_mapped_ && !hit_.contains("[vdso]")) {
      MetDso vdso;
      vdso.name = "[vdso]";
      vdso.kind = symbols::DsoKind::Vdso;
      vdso.first_mapped = mapped_order_.at("[vdso]");
      out.push_back(vdso);
    }
    // perf creates the kernel's dso before reading any record; the rest in mapping order.
    auto rank = [](const MetDso& d) {
      return std::pair(d.kind == symbols::DsoKind::Kernel ? 0 : 1, d.first_mapped);
    };
    std::stable_sort(out.begin(), out.end(), [&](const MetDso& a, const MetDso& b) { return rank(a) < rank(b); });
    return out;
  }

 private:
  std::map<std::string, size_t, std::less<>> mapped_order_;
  std::map<std::string, std::string, std::less<>> module_paths_;
  std::map<std::string, MetDso, std::less<>> hit_;
  std::map<std::string, MetDso, std::less<>> mapped_;  // every DSO mapped, by its machine name
  bool vdso_mapped_ = false;
};

// `namespaces`: those of the processes that mapped the DSOs.
std::optional<symbols::BuildId> build_id_of(const MetDso& dso, const BuildIdSources& sources, symbols::MountNamespaces& namespaces) {
  switch (dso.kind) {
    case symbols::DsoKind::Kernel:
      return build_id_from_file(sources.kernel_notes);
    case symbols::DsoKind::Module: {
      std::string module = symbols::module_dso_name(dso.name);
      module = module.substr(1, module.size() - 2);
      return build_id_from_file(sources.sys_module / module / "notes" / ".note.gnu.build-id");
    }
    case symbols::DsoKind::Vdso:
      return build_id_of_image(sources.vdso_image);
    case symbols::DsoKind::User: {
      std::filesystem::path path = dso.name;
      if (const symbols::MountNamespace* ns = namespaces.of(dso.mapped_by)) path = ns->root / path.relative_path();
      Result<symbols::ElfFile> elf = symbols::ElfFile::open(path);
      return elf ? elf->build_id() : std::nullopt;
    }
    default:
      return std::nullopt;  // JIT maps, anonymous memory, [bpf_prog]: no file, no build-id
  }
}

}  // namespace

std::optional<symbols::BuildId> build_id_from_notes(std::span<const uint8_t> notes) {
  auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t{3}; };
  size_t at = 0;
  while (notes.size() - at >= 12) {
    uint32_t namesz, descsz, type;
    std::memcpy(&namesz, notes.data() + at, 4);
    std::memcpy(&descsz, notes.data() + at + 4, 4);
    std::memcpy(&type, notes.data() + at + 8, 4);
    uint64_t name_at = at + 12;
    uint64_t desc_at = name_at + align4(namesz);
    uint64_t next = desc_at + align4(descsz);
    if (desc_at + descsz > notes.size()) return std::nullopt;
    bool gnu = namesz == 4 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0;
    if (gnu && type == kNoteGnuBuildId && descsz > 0) {
      symbols::BuildId id;
      id.bytes.assign(notes.begin() + static_cast<std::ptrdiff_t>(desc_at),
                      notes.begin() + static_cast<std::ptrdiff_t>(desc_at + std::min<uint32_t>(descsz, 20)));
      return id;
    }
    if (next > notes.size()) return std::nullopt;
    at = static_cast<size_t>(next);
  }
  return std::nullopt;
}

std::optional<symbols::BuildId> build_id_from_file(const std::filesystem::path& path) {
  Result<std::string> bytes = read_file(path, 1 << 20);
  if (!bytes) return std::nullopt;
  return build_id_from_notes(std::span(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()));
}

Result<RecordedBuildIds> recorded_build_ids(data::PerfDataReader& recording, const BuildIdSources& sources, BuildIdTable table) {
  // Only the map an ip falls in matters here, never its symbol: a config under which no symbol
  // source exists keeps the pass from reading /proc/kallsyms (200 ms) and symbol tables, as
  // perf's pass reads none. Resolving the sample ip alone (no callchain) is perf's marking.
  symbols::SymbolConfig config;
  config.symfs = "/dev/null";  // no file is found under it
  config.kallsyms.clear();
  config.modules.clear();
  config.debug_dirs.clear();
  config.jit_map_dir = "/dev/null";
  config.proc.clear();  // no file is read here: the build-ids below are
  config.vdso = symbols::VdsoSource::Skip;
  symbols::Machines machines{config};
  report::ReplayOptions options;
  options.resolve_chain = false;
  report::SampleReplay replay(machines, options);
  HitTracker tracker;
  replay.set_record_observer([&](const data::RecordView& view) { tracker.on_record(view); });
  Result<data::ReadStats> stats = replay.run(recording, [&](const report::ResolvedSample& sample) {
    tracker.on_sample(sample);
    return true;
  });
  if (!stats) return stats.error();

  RecordedBuildIds out;
  out.stats = *stats;
  symbols::MountNamespaces namespaces(sources.proc);
  for (const MetDso& dso : tracker.listed(table)) {
    std::optional<symbols::BuildId> id = build_id_of(dso, sources, namespaces);
    if (!id || id->empty()) continue;
    data::BuildIdEntry entry;
    entry.pid = symbols::Machine::kHostPid;
    entry.misc = dso.kind == symbols::DsoKind::Kernel || dso.kind == symbols::DsoKind::Module ? PERF_RECORD_MISC_KERNEL
                                                                                               : PERF_RECORD_MISC_USER;
    entry.build_id = std::move(id->bytes);
    entry.filename = dso.name;
    out.entries.push_back(std::move(entry));
  }
  return out;
}

}  // namespace vperf::session
