#include "symbols/elf_file.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "core/files.h"

namespace vperf::symbols {
namespace {

void init_libelf() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  (void)ready;
}

Error elf_error(const std::string& what) { return Error{what + ": " + elf_errmsg(-1)}; }

// A section by name with its header, or nullptr.
Elf_Scn* find_section(Elf* elf, std::string_view wanted, GElf_Shdr* shdr_out) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name != nullptr && wanted == name) {
      if (shdr_out != nullptr) *shdr_out = shdr;
      return scn;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<uint64_t> file_offset_to_vaddr(const std::vector<LoadSegment>& segments, uint64_t offset) {
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& seg : segments) {
      if ((pass == 0) != seg.executable) continue;
      if (offset >= seg.offset && offset < seg.offset + std::max(seg.filesz, seg.memsz))
        return offset - seg.offset + seg.vaddr;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> vaddr_to_file_offset(const std::vector<LoadSegment>& segments, uint64_t address) {
  for (const LoadSegment& seg : segments)
    if (address >= seg.vaddr && address - seg.vaddr < seg.filesz) return address - seg.vaddr + seg.offset;
  return std::nullopt;
}

Result<ElfFile> ElfFile::open(const std::filesystem::path& path) {
  init_libelf();
  ElfFile f;
  f.name_ = path.string();
  Result<ScopedFd> fd = open_regular_file(path);  // a mapping's name comes from a perf.data
  if (!fd) return fd.error();
  f.fd_ = std::move(fd).value();
  f.elf_ = elf_begin(f.fd_.get(), ELF_C_READ_MMAP, nullptr);
  if (f.elf_ == nullptr) return elf_error("elf_begin " + path.string());
  if (elf_kind(f.elf_) != ELF_K_ELF) return Error{path.string() + ": not an ELF file"};
  return f;
}

Result<ElfFile> ElfFile::from_image(std::vector<char> image, std::string name) {
  init_libelf();
  ElfFile f;
  f.name_ = std::move(name);
  f.image_ = std::make_shared<std::vector<char>>(std::move(image));
  f.elf_ = elf_memory(f.image_->data(), f.image_->size());
  if (f.elf_ == nullptr) return elf_error("elf_memory " + f.name_);
  if (elf_kind(f.elf_) != ELF_K_ELF) return Error{f.name_ + ": not an ELF image"};
  return f;
}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : name_(std::move(other.name_)),
      fd_(std::move(other.fd_)),
      image_(std::move(other.image_)),
      elf_(std::exchange(other.elf_, nullptr)) {}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    if (elf_ != nullptr) elf_end(elf_);
    name_ = std::move(other.name_);
    fd_ = std::move(other.fd_);
    image_ = std::move(other.image_);
    elf_ = std::exchange(other.elf_, nullptr);
  }
  return *this;
}

ElfFile::~ElfFile() {
  if (elf_ != nullptr) elf_end(elf_);
}

uint16_t ElfFile::type() const {
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf_, &ehdr) == nullptr) return ET_NONE;
  return ehdr.e_type;
}

std::optional<BuildId> ElfFile::build_id() const {
  // Notes from SHT_NOTE sections (and PT_NOTE segments for images without section headers).
  auto scan = [](Elf_Data* data) -> std::optional<BuildId> {
    if (data == nullptr) return std::nullopt;
    size_t offset = 0, name_offset = 0, desc_offset = 0;
    GElf_Nhdr nhdr;
    while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
      const char* base = static_cast<const char*>(data->d_buf);
      if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && std::memcmp(base + name_offset, "GNU", 4) == 0) {
        BuildId id;
        id.bytes.assign(base + desc_offset, base + desc_offset + nhdr.n_descsz);
        return id;
      }
    }
    return std::nullopt;
  };
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    if (auto id = scan(elf_getdata(scn, nullptr))) return id;
  }
  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) != 0) return std::nullopt;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) continue;
    if (auto id = scan(elf_getdata_rawchunk(elf_, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR))) return id;
  }
  return std::nullopt;
}

std::vector<LoadSegment> ElfFile::load_segments() const {
  std::vector<LoadSegment> out;
  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) != 0) return out;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) continue;
    out.push_back(LoadSegment{phdr.p_vaddr, phdr.p_offset, phdr.p_filesz, phdr.p_memsz, (phdr.p_flags & PF_X) != 0});
  }
  return out;
}

std::vector<CodeSection> ElfFile::code_sections() const {
  std::vector<CodeSection> out;
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if ((shdr.sh_flags & SHF_ALLOC) && (shdr.sh_flags & SHF_EXECINSTR) && shdr.sh_size > 0)
      out.push_back(CodeSection{shdr.sh_addr, shdr.sh_addr + shdr.sh_size});
  }
  return out;
}

std::optional<ElfFile::Section> ElfFile::section(std::string_view name) const {
  Section out{};
  out.scn = find_section(elf_, name, &out.header);
  if (out.scn == nullptr) return std::nullopt;
  return out;
}

bool ElfFile::has_section_data(std::string_view section) const {
  GElf_Shdr shdr;
  return find_section(elf_, section, &shdr) != nullptr && shdr.sh_type != SHT_NOBITS;
}

std::optional<std::string> ElfFile::debuglink() const {
  GElf_Shdr shdr;
  Elf_Scn* scn = find_section(elf_, ".gnu_debuglink", &shdr);
  if (scn == nullptr || shdr.sh_type == SHT_NOBITS) return std::nullopt;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || data->d_size == 0) return std::nullopt;
  const char* s = static_cast<const char*>(data->d_buf);
  return std::string(s, strnlen(s, data->d_size));
}

std::vector<SymbolSource> ElfFile::function_symbols() const {
  std::vector<SymbolSource> out;
  out.reserve(symbol_entries());
  visit_function_symbols([&](const SymbolSource& s) { out.push_back(s); });
  return out;
}

std::optional<ElfFile::Section> ElfFile::function_symbol_table() const {
  GElf_Shdr symtab_hdr;
  Elf_Scn* symtab = find_section(elf_, ".symtab", &symtab_hdr);
  if (symtab == nullptr || symtab_hdr.sh_type == SHT_NOBITS) symtab = find_section(elf_, ".dynsym", &symtab_hdr);
  if (symtab == nullptr || symtab_hdr.sh_type == SHT_NOBITS || symtab_hdr.sh_entsize == 0) return std::nullopt;
  return Section{symtab, symtab_hdr};
}

size_t ElfFile::symbol_entries() const {
  const std::optional<Section> table = function_symbol_table();
  return table ? table->header.sh_size / table->header.sh_entsize : 0;
}

void ElfFile::visit_function_symbols(const std::function<void(const SymbolSource&)>& visit, bool data_objects) const {
  const std::optional<Section> table = function_symbol_table();
  if (!table) return;
  const GElf_Shdr& symtab_hdr = table->header;
  Elf_Data* data = elf_getdata(table->scn, nullptr);
  if (data == nullptr) return;

  // Executable sections, for labels; loaded ones, for data objects.
  std::vector<bool> executable, loaded;
  size_t shnum = 0;
  if (elf_getshdrnum(elf_, &shnum) == 0) {
    executable.assign(shnum, false);
    loaded.assign(shnum, false);
    for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) != nullptr && elf_ndxscn(scn) < shnum) {
        executable[elf_ndxscn(scn)] = (shdr.sh_flags & SHF_EXECINSTR) != 0;
        loaded[elf_ndxscn(scn)] = (shdr.sh_flags & SHF_ALLOC) != 0;
      }
    }
  }

  size_t count = symtab_hdr.sh_size / symtab_hdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
    if (sym.st_name == 0 || sym.st_shndx == SHN_UNDEF) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    bool function = type == STT_FUNC || type == STT_GNU_IFUNC;
    bool label = type == STT_NOTYPE && sym.st_size == 0 && sym.st_shndx != SHN_ABS && sym.st_shndx < executable.size() &&
                 executable[sym.st_shndx];
    bool object = data_objects && type == STT_OBJECT && sym.st_shndx < loaded.size() && loaded[sym.st_shndx];
    if (!function && !label && !object) continue;
    const char* name = elf_strptr(elf_, symtab_hdr.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    // ARM mapping symbols ("$a", "$x", "$d") are not functions.
    if (name[0] == '$') continue;
    int bind = GELF_ST_BIND(sym.st_info);
    SymbolBinding binding = bind == STB_WEAK ? SymbolBinding::Weak
                            : bind == STB_LOCAL ? SymbolBinding::Local
                                                : SymbolBinding::Global;
    visit(SymbolSource{sym.st_value, sym.st_size, std::string_view(name), binding, object});
  }
}

std::optional<uint64_t> ElfFile::object_symbol(std::string_view name) const {
  std::optional<uint64_t> local;
  for (const char* table : {".symtab", ".dynsym"}) {
    GElf_Shdr header;
    Elf_Scn* scn = find_section(elf_, table, &header);
    if (scn == nullptr || header.sh_type == SHT_NOBITS || header.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_name == 0 || sym.st_shndx == SHN_UNDEF) continue;
      const int type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_OBJECT && type != STT_COMMON) continue;
      const char* symbol = elf_strptr(elf_, header.sh_link, sym.st_name);
      if (symbol == nullptr || name != symbol) continue;
      if (GELF_ST_BIND(sym.st_info) != STB_LOCAL) return sym.st_value;
      if (!local) local = sym.st_value;
    }
    if (local) return local;
  }
  return local;
}

std::vector<SymbolSource> ElfFile::plt_symbols(SymbolNames& names) const {
  std::vector<SymbolSource> out;
  GElf_Shdr plt_hdr, rel_hdr, sec_hdr, dynsym_hdr;
  Elf_Scn* plt = find_section(elf_, ".plt", &plt_hdr);
  Elf_Scn* rel = find_section(elf_, ".rela.plt", &rel_hdr);
  if (rel == nullptr) rel = find_section(elf_, ".rel.plt", &rel_hdr);
  if (plt == nullptr || rel == nullptr || plt_hdr.sh_type == SHT_NOBITS || rel_hdr.sh_type == SHT_NOBITS) return out;
  Elf_Scn* dynsym = elf_getscn(elf_, rel_hdr.sh_link);
  if (dynsym == nullptr || gelf_getshdr(dynsym, &dynsym_hdr) == nullptr) return out;
  Elf_Data* rel_data = elf_getdata(rel, nullptr);
  Elf_Data* sym_data = elf_getdata(dynsym, nullptr);
  if (rel_data == nullptr || sym_data == nullptr || rel_hdr.sh_entsize == 0) return out;

  Elf_Scn* sec = find_section(elf_, ".plt.sec", &sec_hdr);
  // perf 6.1 sizes the entries by .plt's sh_entsize, which lld leaves 0 (chromium's libraries):
  // all its PLT symbols then start at .plt's first byte with no length, and no sample in an
  // entry is named. vperf names none either; perf names a sample at exactly that first byte
  // after one of the many, picked by the shape of its symbol tree, which vperf does not
  // reproduce (symbol_parity_test.cpp leaves that one address out).
  // ARM, AArch64 and SPARC lay out their PLTs with fixed header and entry sizes, which perf 6.1
  // uses whatever sh_entsize says (0 for AArch64's binutils); elsewhere both are sh_entsize.
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf_, &ehdr) == nullptr) return out;
  std::optional<std::pair<uint64_t, uint64_t>> fixed;  // header, entry
  switch (ehdr.e_machine) {
    case EM_ARM: fixed = {20, 12}; break;
    case EM_AARCH64: fixed = {32, 16}; break;
    case EM_SPARC: fixed = {48, 12}; break;
    case EM_SPARCV9: fixed = {128, 32}; break;
    default: break;
  }
  if (!fixed && plt_hdr.sh_entsize == 0 && (sec == nullptr || sec_hdr.sh_type == SHT_NOBITS)) return out;
  uint64_t entry = fixed ? fixed->second : plt_hdr.sh_entsize != 0 ? plt_hdr.sh_entsize : 16;
  uint64_t header = fixed ? fixed->first : entry;
  uint64_t first = plt_hdr.sh_addr + header;
  // No symbol for the header (the lazy binder's push/jmp): perf 6.1 has none and shows a
  // sample there as an address (perf 6.3 added a ".plt" symbol).
  if (sec != nullptr && sec_hdr.sh_type != SHT_NOBITS) {
    first = sec_hdr.sh_addr;
    if (sec_hdr.sh_entsize != 0) entry = sec_hdr.sh_entsize;
  }
  size_t count = rel_hdr.sh_size / rel_hdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    uint64_t info = 0;
    if (rel_hdr.sh_type == SHT_RELA) {
      GElf_Rela r;
      if (gelf_getrela(rel_data, static_cast<int>(i), &r) == nullptr) continue;
      info = r.r_info;
    } else {
      GElf_Rel r;
      if (gelf_getrel(rel_data, static_cast<int>(i), &r) == nullptr) continue;
      info = r.r_info;
    }
    GElf_Sym sym;
    if (gelf_getsym(sym_data, static_cast<int>(GELF_R_SYM(info)), &sym) == nullptr) continue;
    const char* name = elf_strptr(elf_, dynsym_hdr.sh_link, sym.st_name);
    // A relocation without a symbol (IRELATIVE, libc's ifuncs) is still a PLT entry: perf
    // names it "@plt", and so must we for the two to agree.
    out.push_back(SymbolSource{first + i * entry, entry, names.keep(std::string(name ? name : "") + "@plt"), SymbolBinding::Global});
  }
  return out;
}

}  // namespace vperf::symbols
