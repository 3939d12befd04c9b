#include "symbols/jit_elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <string>

#include "core/scoped_fd.h"

namespace vperf::symbols {

namespace {

// 160 bits from three FNV-1a passes with different offsets: not a cryptographic digest, a
// stable name for these bytes (perf's genelf uses a digest or random bytes; any unique id
// serves, as nothing recomputes it).
std::vector<uint8_t> build_id_of(std::string_view name, uint64_t load_address, std::span<const uint8_t> code) {
  std::vector<uint8_t> id;
  for (uint64_t seed : {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull}) {
    uint64_t h = seed;
    auto mix = [&](const void* data, size_t n) {
      const auto* p = static_cast<const uint8_t*>(data);
      for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    };
    mix(name.data(), name.size());
    mix(&load_address, sizeof load_address);
    mix(code.data(), code.size());
    for (int i = 0; i < 8 && id.size() < 20; ++i) id.push_back(static_cast<uint8_t>(h >> (8 * i)));
  }
  return id;
}

struct ElfHandle {
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
  }
};

Error elf_error(const std::string& what) { return Error{what + ": " + elf_errmsg(-1)}; }

// What one section holds and says of itself.
struct SectionSpec {
  const void* bytes;
  size_t size;
  Elf_Type type;  // how libelf converts the bytes (ELF_T_BYTE: as they are)
  size_t align;
  GElf_Shdr header;  // sh_name, sh_type, sh_flags ... (libelf fills the offsets and sizes)
};

// A new section with one data buffer; nullptr when libelf fails (elf_errmsg says why).
Elf_Scn* add_section(Elf* elf, const SectionSpec& spec) {
  Elf_Scn* scn = elf_newscn(elf);
  Elf_Data* data = scn ? elf_newdata(scn) : nullptr;
  if (!data) return nullptr;
  data->d_buf = const_cast<void*>(spec.bytes);
  data->d_size = spec.size;
  data->d_type = spec.type;
  data->d_align = spec.align;
  GElf_Shdr header = spec.header;
  return gelf_update_shdr(scn, &header) ? scn : nullptr;
}

GElf_Shdr section_header(Elf64_Word name, Elf64_Word type, uint64_t flags = 0) {
  GElf_Shdr h{};
  h.sh_name = name;
  h.sh_type = type;
  h.sh_flags = flags;
  return h;
}

}  // namespace

Result<std::vector<uint8_t>> write_jit_elf(const std::filesystem::path& path, uint32_t elf_machine, std::string_view name,
                                           uint64_t load_address, std::span<const uint8_t> code) {
  if (elf_version(EV_CURRENT) == EV_NONE) return elf_error("libelf");
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return Error::from_errno("create " + path.string());
  ElfHandle e{elf_begin(fd.get(), ELF_C_WRITE, nullptr)};
  if (!e.elf) return elf_error("start " + path.string());
  GElf_Ehdr ehdr{};
  if (!gelf_newehdr(e.elf, ELFCLASS64) || !gelf_getehdr(e.elf, &ehdr)) return elf_error("ELF header");
  ehdr.e_ident[EI_DATA] = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
  ehdr.e_type = ET_DYN;
  ehdr.e_machine = static_cast<Elf64_Half>(elf_machine);
  ehdr.e_version = EV_CURRENT;
  ehdr.e_entry = kJitElfTextOffset;
  // Written before the program header is made: gelf_newphdr sets e_phnum and e_phoff, which an
  // update from this older copy would clear.
  gelf_update_ehdr(e.elf, &ehdr);
  if (!gelf_newphdr(e.elf, 1)) return elf_error("program header");

  // Section names, in .shstrtab order.
  const std::string shstrtab = std::string("\0.text\0.shstrtab\0.symtab\0.strtab\0.note.gnu.build-id\0", 53);
  const auto name_at = [&](const char* section) { return static_cast<Elf64_Word>(shstrtab.find(section)); };
  const std::string strtab = std::string(1, '\0') + std::string(name) + std::string(1, '\0');
  const std::vector<uint8_t> build_id = build_id_of(name, load_address, code);

  // .text: first, 16-aligned, so that libelf places it right after the program header, at 0x80.
  GElf_Shdr text_header = section_header(name_at(".text"), SHT_PROGBITS, SHF_EXECINSTR | SHF_ALLOC);
  text_header.sh_addr = kJitElfTextOffset;
  Elf_Scn* text = add_section(e.elf, {code.data(), code.size(), ELF_T_BYTE, 16, text_header});
  if (!text) return elf_error(".text");
  Elf_Scn* names = add_section(e.elf, {shstrtab.data(), shstrtab.size(), ELF_T_BYTE, 1, section_header(name_at(".shstrtab"), SHT_STRTAB)});
  if (!names) return elf_error(".shstrtab");
  Elf_Scn* strings = add_section(e.elf, {strtab.data(), strtab.size(), ELF_T_BYTE, 1, section_header(name_at(".strtab"), SHT_STRTAB)});
  if (!strings) return elf_error(".strtab");
  // .symtab: the null symbol, then the function (local, as perf's genelf writes it; sh_info 2:
  // the first non-local symbol's index, here past the end).
  Elf64_Sym symbols[2]{};
  symbols[1].st_name = 1;
  symbols[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
  symbols[1].st_shndx = static_cast<Elf64_Section>(elf_ndxscn(text));
  symbols[1].st_value = kJitElfTextOffset;
  symbols[1].st_size = code.size();
  GElf_Shdr symtab_header = section_header(name_at(".symtab"), SHT_SYMTAB);
  symtab_header.sh_entsize = sizeof(Elf64_Sym);
  symtab_header.sh_link = static_cast<Elf64_Word>(elf_ndxscn(strings));
  symtab_header.sh_info = 2;
  if (!add_section(e.elf, {symbols, sizeof symbols, ELF_T_SYM, 8, symtab_header})) return elf_error(".symtab");
  // The build-id note: namesz 4 ("GNU\0"), descsz 20, type NT_GNU_BUILD_ID.
  std::vector<uint8_t> note(12 + 4 + build_id.size());
  const uint32_t note_head[3] = {4, static_cast<uint32_t>(build_id.size()), NT_GNU_BUILD_ID};
  std::memcpy(note.data(), note_head, sizeof note_head);
  std::memcpy(note.data() + 12, "GNU", 4);
  std::memcpy(note.data() + 16, build_id.data(), build_id.size());
  if (!add_section(e.elf, {note.data(), note.size(), ELF_T_NHDR, 4, section_header(name_at(".note.gnu.build-id"), SHT_NOTE, SHF_ALLOC)}))
    return elf_error(".note.gnu.build-id");

  gelf_getehdr(e.elf, &ehdr);
  ehdr.e_shstrndx = static_cast<Elf64_Half>(elf_ndxscn(names));
  gelf_update_ehdr(e.elf, &ehdr);
  // Lay the file out, then point the program header at where .text landed.
  if (elf_update(e.elf, ELF_C_NULL) < 0) return elf_error("lay out " + path.string());
  GElf_Shdr shdr{};
  gelf_getshdr(text, &shdr);
  if (shdr.sh_offset != kJitElfTextOffset) return Error{"libelf placed .text at " + std::to_string(shdr.sh_offset) + ", not 0x80"};
  GElf_Phdr phdr{};
  phdr.p_type = PT_LOAD;
  phdr.p_offset = phdr.p_vaddr = phdr.p_paddr = kJitElfTextOffset;
  phdr.p_filesz = phdr.p_memsz = code.size();
  phdr.p_flags = PF_X | PF_R;
  phdr.p_align = 8;
  gelf_update_phdr(e.elf, 0, &phdr);
  if (elf_update(e.elf, ELF_C_WRITE) < 0) return elf_error("write " + path.string());
  return build_id;
}

}  // namespace vperf::symbols
