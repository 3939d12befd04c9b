#include "report/annotate_code.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/files.h"
#include "core/scoped_fd.h"
#include "symbols/vdso.h"

namespace vperf::report {
namespace {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

std::filesystem::path under_symfs(const symbols::SymbolConfig& config, const std::string& path) {
  if (config.symfs.empty()) return path;
  return config.symfs / std::filesystem::path(path).relative_path();
}

bool read_exactly(int fd, void* buffer, size_t size, uint64_t offset) {
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

Result<SymbolCode> read_user_code(const symbols::Dso& dso, const symbols::Symbol& symbol, const CodeSources& sources) {
  std::filesystem::path path = under_symfs(sources.config, dso.name());
  auto elf = symbols::ElfFile::open(path);
  if (!elf) return elf.error();
  const auto& resolved_with = dso.build_id();
  auto id = elf->build_id();
  if (resolved_with && !resolved_with->empty() && id && *id != *resolved_with)
    return Error{path.string() + ": build-id " + id->hex() + " differs from the one the samples were resolved with (" +
                 resolved_with->hex() + ")"};
  return read_elf_code(*elf, symbol.start, symbol.size());
}

Result<SymbolCode> read_vdso_code(const symbols::Symbol& symbol) {
  auto image = symbols::read_own_vdso();
  if (!image) return image.error();
  auto elf = symbols::ElfFile::from_image(std::move(image).value(), "[vdso]");
  if (!elf) return elf.error();
  return read_elf_code(*elf, symbol.start, symbol.size());
}

}  // namespace

Result<SymbolCode> read_elf_code(const symbols::ElfFile& elf, uint64_t address, uint64_t size) {
  Elf* handle = elf.handle();
  size_t names = 0;
  if (elf_getshdrstrndx(handle, &names) != 0) return Error{elf.name() + ": no section names: " + elf_errmsg(-1)};
  for (Elf_Scn* scn = elf_nextscn(handle, nullptr); scn != nullptr; scn = elf_nextscn(handle, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || !(shdr.sh_flags & SHF_ALLOC)) continue;
    if (address < shdr.sh_addr || address >= shdr.sh_addr + shdr.sh_size) continue;
    const char* name = elf_strptr(handle, names, shdr.sh_name);
    std::string section = name ? name : "";
    if (shdr.sh_type == SHT_NOBITS)
      return Error{elf.name() + ": section " + section + " has no contents here (a stripped debug file?)"};
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) return Error{elf.name() + ": cannot read section " + section};
    uint64_t begin = address - shdr.sh_addr;
    uint64_t end = std::min<uint64_t>(begin + size, std::min<uint64_t>(shdr.sh_size, data->d_size));
    if (begin >= end) return Error{elf.name() + ": section " + section + " is shorter than its header says"};
    const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
    return SymbolCode{address, std::vector<uint8_t>(bytes + begin, bytes + end), section, elf.name()};
  }
  return Error{elf.name() + ": no section holds address " + hex(address)};
}

Result<SymbolCode> read_core_code(const std::filesystem::path& core, uint64_t address, uint64_t size) {
  Result<ScopedFd> opened = open_regular_file(core);
  if (!opened) return opened.error();
  ScopedFd fd = std::move(opened).value();
  Elf64_Ehdr header;
  if (!read_exactly(fd.get(), &header, sizeof header, 0)) return Error::from_errno("read " + core.string());
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_type != ET_CORE || header.e_phentsize != sizeof(Elf64_Phdr))
    return Error{core.string() + ": not a 64-bit ELF core file"};
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr;
    if (!read_exactly(fd.get(), &phdr, sizeof phdr, header.e_phoff + uint64_t{i} * sizeof phdr))
      return Error::from_errno("read " + core.string() + " program headers");
    if (phdr.p_type != PT_LOAD || address < phdr.p_vaddr || address >= phdr.p_vaddr + phdr.p_filesz) continue;
    uint64_t length = std::min<uint64_t>(size, phdr.p_vaddr + phdr.p_filesz - address);
    SymbolCode code{address, std::vector<uint8_t>(length), "", core.string()};
    if (!read_exactly(fd.get(), code.bytes.data(), length, phdr.p_offset + (address - phdr.p_vaddr)))
      return Error::from_errno("read " + core.string() + " at " + hex(address));
    return code;
  }
  return Error{core.string() + ": no segment maps address " + hex(address)};
}

Result<SymbolCode> read_symbol_code(const symbols::Dso& dso, const symbols::Symbol& symbol, const CodeSources& sources) {
  switch (dso.kind()) {
    case symbols::DsoKind::User:
      return read_user_code(dso, symbol, sources);
    case symbols::DsoKind::Vdso:
      return read_vdso_code(symbol);
    case symbols::DsoKind::Kernel:
    case symbols::DsoKind::Module: {
      auto code = read_core_code(sources.kcore, symbol.start, symbol.size());
      if (!code && code.error().errno_value == ENOENT)
        return Error{"kernel code is read from " + sources.kcore.string() +
                     ", which this kernel does not have (built without CONFIG_PROC_KCORE); vperf does not use a vmlinux"};
      if (!code && code.error().errno_value == EACCES)
        return Error{"kernel code is read from " + sources.kcore.string() + ", which only root can read"};
      return code;
    }
    case symbols::DsoKind::GuestKernel:
      return Error{dso.name() + ": a guest kernel's code is not readable from the host"};
    case symbols::DsoKind::Jit:
      return Error{dso.name() + ": JIT code is gone with the process that generated it"};
    case symbols::DsoKind::Unknown:
      break;
  }
  return Error{dso.name() + ": no file holds this code"};
}

}  // namespace vperf::report
