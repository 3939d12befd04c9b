#include "symbols/sdt_markers.h"

#include <elf.h>

#include "core/byte_reader.h"
#include "core/strings.h"
#include "symbols/elf_file.h"

namespace vperf::symbols {

namespace {

constexpr uint32_t kNoteTypeStapsdt = 3;  // NT_STAPSDT

}  // namespace

Result<SdtMarker> parse_sdt_descriptor(std::span<const uint8_t> descriptor, bool wide) {
  ByteReader r(descriptor);
  auto word = [&](std::string_view what) -> Result<uint64_t> {
    if (wide) return r.u64(what);
    VPERF_TRY(uint32_t narrow, r.u32(what));
    return uint64_t{narrow};
  };
  SdtMarker m;
  VPERF_TRY(m.address, word("stapsdt pc"));
  VPERF_TRY(m.base, word("stapsdt base"));
  VPERF_TRY(m.semaphore, word("stapsdt semaphore"));
  VPERF_TRY(m.provider, r.c_string("stapsdt provider"));
  VPERF_TRY(m.name, r.c_string("stapsdt name"));
  VPERF_TRY(m.arguments, r.c_string("stapsdt arguments"));
  if (m.provider.empty() || m.name.empty()) return Error{"a stapsdt note without a provider or a name"};
  return m;
}

Result<std::vector<SdtArgument>> parse_sdt_arguments(std::string_view arguments) {
  std::vector<SdtArgument> out;
  for (std::string_view word : split(arguments, ' ')) {
    if (word.empty()) continue;
    const size_t at = word.find('@');
    std::optional<uint64_t> size;
    bool is_signed = false;
    if (at != std::string_view::npos) {
      std::string_view digits = word.substr(0, at);
      is_signed = digits.starts_with('-');
      if (is_signed) digits.remove_prefix(1);
      size = parse_u64(digits);
    }
    if (!size || (*size != 1 && *size != 2 && *size != 4 && *size != 8) || at + 1 == word.size())
      return Error{"SDT argument '" + std::string(word) + "' is not SIZE@OPERAND (SIZE 1, 2, 4 or 8, negative if signed)"};
    out.push_back(SdtArgument{static_cast<int>(*size), is_signed, std::string(word.substr(at + 1))});
  }
  return out;
}

Result<std::vector<SdtMarker>> read_sdt_markers(const std::filesystem::path& path) {
  VPERF_TRY(ElfFile elf, ElfFile::open(path));
  std::vector<SdtMarker> out;
  std::optional<ElfFile::Section> notes = elf.section(".note.stapsdt");
  if (!notes || notes->header.sh_type != SHT_NOTE) return out;
  Elf_Data* data = elf_getdata(notes->scn, nullptr);
  if (data == nullptr || data->d_buf == nullptr) return out;
  const bool wide = elf.is_64bit();
  std::optional<ElfFile::Section> base_section = elf.section(".stapsdt.base");
  const std::vector<LoadSegment> segments = elf.load_segments();
  const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
  // gelf_getnote walks the notes (libelf checks each header and alignment); 0 ends the walk.
  size_t offset = 0;
  GElf_Nhdr header;
  size_t name_at = 0, descriptor_at = 0;
  while ((offset = gelf_getnote(data, offset, &header, &name_at, &descriptor_at)) > 0) {
    if (header.n_type != kNoteTypeStapsdt || header.n_namesz != sizeof("stapsdt") ||
        std::string_view(reinterpret_cast<const char*>(bytes + name_at), header.n_namesz - 1) != "stapsdt")
      continue;
    Result<SdtMarker> marker = parse_sdt_descriptor(std::span(bytes + descriptor_at, header.n_descsz), wide);
    if (!marker) return Error{path.string() + ": " + marker.error().message};
    SdtMarker m = std::move(marker).value();
    if (base_section && m.base != 0) {  // prelinked: move with .stapsdt.base
      const uint64_t moved = base_section->header.sh_addr - m.base;
      m.address += moved;
      if (m.semaphore != 0) m.semaphore += moved;
    }
    m.file_offset = vaddr_to_file_offset(segments, m.address);
    if (m.semaphore != 0) m.semaphore_offset = vaddr_to_file_offset(segments, m.semaphore);
    out.push_back(std::move(m));
  }
  return out;
}

std::string sdt_event_name(const SdtMarker& marker) { return "sdt_" + marker.provider + ":" + marker.name; }

}  // namespace vperf::symbols
