#include "symbols/dso.h"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <unordered_map>

#include "symbols/build_id_cache.h"
#include "symbols/debuginfo.h"

namespace vperf::symbols {
namespace {

// Functions of `elf`, plus the PLT entries of `runtime` (the mapped file: a debug file's
// .plt is empty).
SymbolTable table_from(const ElfFile& elf, const ElfFile* runtime, bool demangle_names) {
  auto names = std::make_shared<SymbolNames>();
  // The ELF's string table goes away with `elf`: the table keeps its own copies (C++ names
  // mangled: the table demangles those a lookup meets). Symbols are made straight from the
  // ELF's entries into one vector sized for them (a vector grown by doubling, and a second one
  // for the table, were a fifth of a small profile's flame graph: on a VM every page first
  // touched is a fault).
  std::vector<Symbol> symbols;
  symbols.reserve(elf.symbol_entries());
  elf.visit_function_symbols(
      [&](const SymbolSource& s) { symbols.push_back(Symbol{s.start, s.start + s.size, names->keep(s.name), s.binding, s.object}); },
      true);
  if (runtime != nullptr) {
    const std::vector<SymbolSource> plt = runtime->plt_symbols(*names);
    symbols.reserve(symbols.size() + plt.size());
    for (const SymbolSource& s : plt) symbols.push_back(Symbol{s.start, s.start + s.size, s.name, s.binding});
  }
  return SymbolTable::from_symbols(std::move(symbols), std::move(names), demangle_names);
}

// A file's build-id against a recorded one: perf.data's records hold 20 bytes, a shorter id
// (an 8-byte one of some linkers) padded with zeros where the record has no size.
bool same_build_id(const BuildId& file, const BuildId& recorded) {
  if (file == recorded) return true;
  if (recorded.bytes.size() <= file.bytes.size()) return false;
  return std::equal(file.bytes.begin(), file.bytes.end(), recorded.bytes.begin()) &&
         std::all_of(recorded.bytes.begin() + static_cast<std::ptrdiff_t>(file.bytes.size()), recorded.bytes.end(),
                     [](uint8_t b) { return b == 0; });
}

std::filesystem::path under_symfs(const SymbolConfig& config, const std::string& path) {
  if (config.symfs.empty()) return path;
  return config.symfs / std::filesystem::path(path).relative_path();
}

}  // namespace

std::string_view dso_kind_name(DsoKind kind) {
  switch (kind) {
    case DsoKind::Kernel: return "kernel";
    case DsoKind::GuestKernel: return "guest kernel";
    case DsoKind::Module: return "module";
    case DsoKind::User: return "user";
    case DsoKind::Vdso: return "vdso";
    case DsoKind::Jit: return "jit";
    case DsoKind::Unknown: break;
  }
  return "unknown";
}

namespace {

// Short names numbered in the order first seen, for the whole process (Dsos of several machines
// share them).
uint32_t number_of_short_name(const std::string& short_name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, uint32_t> numbers;
  std::lock_guard<std::mutex> lock(mutex);
  return numbers.try_emplace(short_name, static_cast<uint32_t>(numbers.size() + 1)).first->second;
}

}  // namespace

namespace {

std::string short_name_of(DsoKind kind, const std::string& name) {
  if (name.starts_with("[")) return name;
  size_t slash = name.rfind('/');
  std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  // perf names JIT code by its process, whether or not the perf-PID.map exists: "[JIT] tid 327".
  if (kind == DsoKind::Jit && base.starts_with("perf-")) {
    const size_t digits = base.find_first_not_of("0123456789", 5);
    if (digits > 5) return "[JIT] tid " + base.substr(5, digits == std::string::npos ? std::string::npos : digits - 5);
  }
  return base;
}

}  // namespace

Dso::Dso(DsoKind kind, std::string name, Loader loader)
    : kind_(kind), name_(std::move(name)), short_name_(short_name_of(kind_, name_)), loader_(std::move(loader)) {
  short_name_id_ = number_of_short_name(short_name_);
}

void Dso::load() const {
  std::call_once(loaded_, [this] {
    if (!loader_) {
      error_ = Error{name_ + ": no symbols for this kind of object"};
      return;
    }
    auto result = loader_();
    if (result) contents_ = std::move(result).value();
    else error_ = result.error();
  });
}

const SymbolTable& Dso::symbols() const {
  load();
  return contents_.symbols;
}

const std::optional<Error>& Dso::load_error() const {
  load();
  return error_;
}

const std::optional<BuildId>& Dso::build_id() const {
  load();
  return contents_.build_id;
}

const DsoContents& Dso::contents() const {
  load();
  return contents_;
}

std::optional<uint64_t> Dso::symbol_address(uint64_t map_relative) const {
  load();
  if (contents_.segments.empty()) return map_relative;
  return file_offset_to_vaddr(contents_.segments, map_relative);
}

const Symbol* Dso::find_symbol(uint64_t map_relative) const {
  auto addr = symbol_address(map_relative);
  if (!addr) return nullptr;
  return contents_.symbols.find(*addr);
}

const DwarfInfo* Dso::dwarf() const {
  load();
  std::call_once(dwarf_loaded_, [this] {
    if (contents_.dwarf_file.empty()) {
      dwarf_error_ = Error{name_ + ": no DWARF (install its debug package, or build with -g)"};
      return;
    }
    auto info = DwarfInfo::open(contents_.dwarf_file);
    if (info) dwarf_.emplace(std::move(info).value());
    else dwarf_error_ = info.error();
  });
  return dwarf_ ? &*dwarf_ : nullptr;
}

bool Dso::file_symbol_before(uint64_t symbol_address) const {
  load();
  const std::vector<CodeSection>& sections = contents_.code_sections;
  auto section = std::find_if(sections.begin(), sections.end(),
                              [&](const CodeSection& s) { return s.start <= symbol_address && symbol_address < s.end; });
  if (section == sections.end()) return false;
  const SymbolTable& table = contents_.symbols;
  // The symbols are sorted by start: the last one at or before the address, then back over
  // @plt entries while still in the section.
  size_t low = 0, high = table.size();
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (table.at(middle).start <= symbol_address) low = middle + 1;
    else high = middle;
  }
  for (size_t i = low; i-- > 0;) {
    const Symbol& symbol = table.at(i);
    if (symbol.start < section->start) return false;
    if (!symbol.name.ends_with("@plt")) return true;
  }
  return false;
}

bool Dso::has_compile_unit_at(uint64_t symbol_address) const {
  const DwarfInfo* info = dwarf();
  return info != nullptr && info->covers(symbol_address);
}

Result<std::vector<InlineFrame>> Dso::inline_frames(uint64_t symbol_address) const {
  const DwarfInfo* info = dwarf();
  if (info == nullptr) return *dwarf_error_;
  return info->frames_at(symbol_address);
}

std::optional<SourceLocation> Dso::source_line(uint64_t symbol_address) const {
  const DwarfInfo* info = dwarf();
  if (info == nullptr) return std::nullopt;
  return info->line_at(symbol_address);
}

Dso::Loader Dso::elf_loader(SymbolConfig config, std::string recorded_path, std::optional<BuildId> expected) {
  return [config = std::move(config), recorded_path = std::move(recorded_path),
          expected = std::move(expected)]() -> Result<DsoContents> {
    DsoContents out;
    std::filesystem::path binary_path = under_symfs(config, recorded_path);
    auto binary = ElfFile::open(binary_path);
    std::optional<Error> binary_error;
    if (binary) {
      auto id = binary->build_id();
      if (expected && !expected->empty() && id && !same_build_id(*id, *expected)) {
        binary_error = Error{binary_path.string() + ": build-id " + id->hex() + " differs from the recorded " +
                             expected->hex() + " (the file changed since the recording)"};
      }
    } else {
      binary_error = binary.error();
    }
    // Moved, deleted or rebuilt since the recording: the copy perf's build-id cache keeps.
    if (binary_error && expected && !expected->empty()) {
      const BuildIdCache cache(config.build_id_cache.empty() ? BuildIdCache::default_dir() : config.build_id_cache);
      if (std::optional<std::filesystem::path> cached = cache.find(*expected)) {
        auto copy = ElfFile::open(*cached);
        if (copy && copy->build_id() && same_build_id(*copy->build_id(), *expected)) {
          binary_path = *cached;
          binary = std::move(copy);
          binary_error.reset();
        }
      }
    }
    bool binary_usable = !binary_error.has_value();
    std::optional<BuildId> wanted = expected;
    std::optional<std::string> debuglink;
    if (binary_usable) {
      if (!wanted || wanted->empty()) wanted = binary->build_id();
      debuglink = binary->debuglink();
    }

    // Separate debuginfo: the first with a .symtab gives the symbols, the first with
    // .debug_info gives DWARF. A candidate with another build-id is stale.
    std::optional<ElfFile> symbol_source;
    for (const auto& candidate : debuginfo_candidates(config, binary_path, wanted, debuglink)) {
      auto elf = ElfFile::open(candidate);
      if (!elf) continue;
      auto id = elf->build_id();
      if (wanted && !wanted->empty() && id && *id != *wanted) continue;
      if (out.dwarf_file.empty() && elf->has_debug_info()) out.dwarf_file = candidate;
      if (!symbol_source && elf->has_symtab()) {
        if (!binary_usable) {
          out.segments = elf->load_segments();
          out.code_sections = elf->code_sections();
        }
        if (!out.build_id) out.build_id = id;
        symbol_source.emplace(std::move(elf).value());
        out.symbol_file = candidate;
      }
    }
    if (binary_usable) {
      out.segments = binary->load_segments();
      out.code_sections = binary->code_sections();
      out.build_id = binary->build_id();
      if (out.dwarf_file.empty() && binary->has_debug_info()) out.dwarf_file = binary_path;
      if (!symbol_source) {
        out.symbols = table_from(*binary, &*binary, config.demangle);
        out.symbol_file = binary_path;
        return out;
      }
    }
    if (!symbol_source) return *binary_error;
    out.symbols = table_from(*symbol_source, binary_usable ? &*binary : nullptr, config.demangle);
    return out;
  };
}

Dso::Loader Dso::vmlinux_loader(std::filesystem::path path, bool demangle_names) {
  return [path = std::move(path), demangle_names]() -> Result<DsoContents> {
    auto elf = ElfFile::open(path);
    if (!elf) return elf.error();
    DsoContents out;
    out.symbols = table_from(*elf, &*elf, demangle_names);
    if (out.symbols.empty()) return Error{path.string() + ": no symbols (a vmlinux with .symtab is needed, not a vmlinuz)"};
    out.build_id = elf->build_id();
    out.symbol_file = path;
    if (elf->has_debug_info()) out.dwarf_file = path;
    return out;  // no segments: kernel addresses are the symbols' own
  };
}

Dso::Loader Dso::image_loader(std::function<Result<std::vector<char>>()> read_image, std::string name, bool demangle_names) {
  return [read_image = std::move(read_image), name = std::move(name), demangle_names]() -> Result<DsoContents> {
    auto image = read_image();
    if (!image) return image.error();
    auto elf = ElfFile::from_image(std::move(image).value(), name);
    if (!elf) return elf.error();
    DsoContents out;
    out.segments = elf->load_segments();
    out.build_id = elf->build_id();
    out.symbols = table_from(*elf, &*elf, demangle_names);
    out.symbol_file = name;
    return out;
  };
}

}  // namespace vperf::symbols
