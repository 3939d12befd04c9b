#include "symbols/function_probe_points.h"

#include <gelf.h>
#include <libelf.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::symbols {

namespace {

// A symbol of unknown size ends where the next symbol starts, else where its segment ends.
uint64_t inferred_size(const std::vector<SymbolSource>& symbols, const std::vector<LoadSegment>& segments, uint64_t start) {
  uint64_t end = std::numeric_limits<uint64_t>::max();
  for (const SymbolSource& other : symbols)
    if (other.start > start) end = std::min(end, other.start);
  for (const LoadSegment& segment : segments)
    if (start >= segment.vaddr && start - segment.vaddr < segment.memsz) end = std::min(end, segment.vaddr + segment.memsz);
  return end == std::numeric_limits<uint64_t>::max() ? 0 : end - start;
}

}  // namespace

Result<void> check_function_offset(std::string_view function, uint64_t size, uint64_t offset,
                                   const Result<std::vector<uint64_t>>& instruction_starts) {
  if (offset == 0) return {};
  const std::string point = std::string(function) + "+" + std::to_string(offset);
  if (offset >= size)
    return Error{point + " is past the end of " + std::string(function) + ", which is " + std::to_string(size) + " bytes long", 0,
                 "give an offset from 0 to " + std::to_string(size == 0 ? 0 : size - 1) + " where an instruction starts (objdump -d --disassemble=" +
                     std::string(function) + " FILE lists them)"};
  if (!instruction_starts)
    return Error{point + " cannot be proven to be the start of an instruction: " + instruction_starts.error().message, 0,
                 "probe the function's entry (" + std::string(function) + "), or a source line (" + std::string(function) + ":LINE) where debuginfo places it"};
  const std::vector<uint64_t>& starts = *instruction_starts;
  const auto next = std::lower_bound(starts.begin(), starts.end(), offset);
  if (next != starts.end() && *next == offset) return {};
  const uint64_t before = next == starts.begin() ? 0 : *(next - 1);
  const uint64_t after = next == starts.end() || *next > size ? size : *next;
  return Error{point + " is inside an instruction of " + std::string(function) + " (" + std::to_string(size) +
                   " bytes): the nearest instruction boundaries are +" + std::to_string(before) +
                   (after == size ? " and the function's end, +" : " and +") + std::to_string(after),
               0, "give the offset of an instruction's first byte (objdump -d --disassemble=" + std::string(function) + " FILE lists them)"};
}

Result<std::vector<uint8_t>> loaded_code(const ElfFile& elf, uint64_t address, uint64_t size) {
  size_t file_size = 0;
  const char* raw = elf_rawfile(elf.handle(), &file_size);
  for (const LoadSegment& segment : elf.load_segments()) {
    if (address < segment.vaddr || address - segment.vaddr >= segment.filesz) continue;
    const uint64_t into = address - segment.vaddr;
    if (size > segment.filesz - into) break;
    const uint64_t at = segment.offset + into;
    if (raw == nullptr || at > file_size || size > file_size - at) break;
    return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(raw) + at, reinterpret_cast<const uint8_t*>(raw) + at + size);
  }
  return Error{"the code at " + hex(address) + " (" + std::to_string(size) + " bytes) is not in " + elf.name() + "'s loaded segments"};
}

Result<std::vector<FunctionProbePoint>> function_probe_points(
    const std::vector<SymbolSource>& symbols, const std::vector<LoadSegment>& segments, std::string_view file_name,
    std::string_view function, uint64_t offset,
    const std::function<Result<std::vector<uint64_t>>(uint64_t entry, uint64_t size)>& instruction_starts) {
  std::vector<FunctionProbePoint> points;
  for (const SymbolSource& symbol : symbols) {
    if (symbol.name != function || symbol.start == 0) continue;
    // A size no address space holds is cut at its end: start + size never wraps.
    const uint64_t size = std::min(symbol.size != 0 ? symbol.size : inferred_size(symbols, segments, symbol.start),
                                   std::numeric_limits<uint64_t>::max() - symbol.start);
    const bool decode = offset != 0 && offset < size;
    VPERF_TRY(check_function_offset(function, size, offset,
                                    decode ? instruction_starts(symbol.start, size) : Result<std::vector<uint64_t>>(std::vector<uint64_t>{})));
    const uint64_t address = symbol.start + offset;
    if (std::any_of(points.begin(), points.end(), [&](const FunctionProbePoint& p) { return p.address == address; })) continue;
    std::optional<uint64_t> file_offset = vaddr_to_file_offset(segments, address);
    if (!file_offset) return Error{std::string(function) + " in " + std::string(file_name) + " is in no loaded segment"};
    points.push_back(FunctionProbePoint{address, *file_offset});
  }
  if (points.empty())
    return Error{"no function " + std::string(function) + " in " + std::string(file_name), 0,
                 "list the functions vperf can probe with: vperf probe -x " + std::string(file_name) + " -F"};
  std::sort(points.begin(), points.end(), [](const FunctionProbePoint& a, const FunctionProbePoint& b) { return a.address < b.address; });
  return points;
}

Result<std::vector<FunctionProbePoint>> function_probe_points(const std::filesystem::path& file, std::string_view function,
                                                               uint64_t offset, const InstructionDecoder& decode) {
  VPERF_TRY(ElfFile elf, ElfFile::open(file));
  auto instruction_starts = [&](uint64_t entry, uint64_t size) -> Result<std::vector<uint64_t>> {
    if (!decode) return Error{"vperf has no instruction decoder for " + file.string() + "'s machine"};
    VPERF_TRY(std::vector<uint8_t> code, loaded_code(elf, entry, size));
    return decode(code);
  };
  return function_probe_points(elf.function_symbols(), elf.load_segments(), file.string(), function, offset, instruction_starts);
}

Result<ElfFile> open_probe_target(const std::filesystem::path& file) {
  Result<ElfFile> opened = ElfFile::open(file);
  if (!opened) {
    // libelf refuses an ELF file too short for its header ("invalid ELF file data"): said as
    // what it is, from the file's first bytes (opened only when regular, so never a FIFO).
    if (Result<ScopedFd> fd = open_regular_file(file)) {
      char magic[SELFMAG] = {};
      struct stat st {};
      if (::pread(fd->get(), magic, sizeof magic, 0) == SELFMAG && std::memcmp(magic, ELFMAG, SELFMAG) == 0 && ::fstat(fd->get(), &st) == 0)
        return Error{file.string() + " is a truncated or damaged ELF file: libelf cannot read it (" + opened.error().message + "; " +
                         std::to_string(st.st_size) + " bytes)",
                     0, "give the whole file (was it cut short while being copied or written?)"};
    }
    return Error{opened.error().message, opened.error().errno_value, "give the path of an executable or library (an ELF file)"};
  }
  ElfFile elf = std::move(opened).value();
  size_t file_size = 0;
  (void)elf_rawfile(elf.handle(), &file_size);
  GElf_Ehdr header;
  if (gelf_getehdr(elf.handle(), &header) == nullptr)
    return Error{file.string() + " is a truncated ELF file: its " + std::to_string(file_size) + " bytes do not hold an ELF header", 0,
                 "give the whole file (was it cut short while being copied or written?)"};
  // The furthest byte each part claims, with what claims it; sums that wrap claim everything.
  uint64_t claimed = 0;
  std::string claimant;
  auto claim = [&](uint64_t offset, uint64_t size, const std::string& what) {
    uint64_t end = 0;
    if (__builtin_add_overflow(offset, size, &end)) end = std::numeric_limits<uint64_t>::max();
    if (end > claimed) {
      claimed = end;
      claimant = what;
    }
  };
  claim(header.e_phoff, uint64_t{header.e_phnum} * header.e_phentsize, "program headers");
  if (header.e_shoff != 0) claim(header.e_shoff, uint64_t{header.e_shnum == 0 ? 1u : header.e_shnum} * header.e_shentsize, "section headers");
  if (claimed <= file_size) {  // the headers are whole: what they describe can be read
    size_t segments = 0;
    if (elf_getphdrnum(elf.handle(), &segments) == 0)
      for (size_t i = 0; i < segments; ++i)
        if (GElf_Phdr segment; gelf_getphdr(elf.handle(), static_cast<int>(i), &segment) != nullptr)
          claim(segment.p_offset, segment.p_filesz, "segment " + std::to_string(i));
    for (Elf_Scn* scn = elf_nextscn(elf.handle(), nullptr); scn != nullptr; scn = elf_nextscn(elf.handle(), scn))
      if (GElf_Shdr section; gelf_getshdr(scn, &section) != nullptr && section.sh_type != SHT_NOBITS && section.sh_size != 0)
        claim(section.sh_offset, section.sh_size, "section " + std::to_string(elf_ndxscn(scn)));
  }
  if (claimed > file_size)
    return Error{file.string() + " is a truncated ELF file: its " + claimant + " end at byte " + std::to_string(claimed) + ", past its end (" +
                     std::to_string(file_size) + " bytes)",
                 0, "give the whole file (was it cut short while being copied or written?)"};
  return elf;
}

}  // namespace vperf::symbols
