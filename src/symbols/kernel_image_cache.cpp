#include "symbols/kernel_image_cache.h"

#include <cctype>
#include <cstring>
#include <limits>

#include "core/byte_reader.h"
#include "core/byte_writer.h"
#include "core/files.h"
#include "core/strings.h"

namespace vperf::symbols {

namespace {

constexpr std::string_view kMagic = "VPERFKI1";
constexpr size_t kBootIdField = 64;
// One file: a new boot's entry replaces the last one's.
constexpr const char* kFileName = "kernel-image";

// Boot ids become directory names: hex digits and '-' only (the kernel writes a UUID).
bool plain_boot_id(std::string_view id) {
  if (id.empty() || id.size() >= kBootIdField) return false;
  for (char c : id)
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == '-')) return false;
  return true;
}

// A name's place in the names: where `name` starts among them, and its length.
struct NameRange {
  uint32_t offset;
  uint16_t length;
};

}  // namespace

std::vector<uint8_t> encode_kernel_image(const Kallsyms& kallsyms, std::string_view boot_id) {
  const std::span<const Symbol> symbols = kallsyms.kernel().symbols();
  std::string names;
  auto keep = [&names](std::string_view name) {
    // kallsyms names are at most KSYM_NAME_LEN (512) bytes; a longer one is cut, never wraps.
    const size_t length = std::min<size_t>(name.size(), std::numeric_limits<uint16_t>::max());
    NameRange range{static_cast<uint32_t>(names.size()), static_cast<uint16_t>(length)};
    names.append(name.substr(0, length));
    return range;
  };
  ByteWriter out;
  for (char c : kMagic) out.u8(static_cast<uint8_t>(c));
  out.padded_string(boot_id, kBootIdField);
  out.u32(static_cast<uint32_t>(symbols.size()));
  out.u32(static_cast<uint32_t>(kallsyms.markers().size()));
  const size_t names_size_at = out.size();
  out.u64(0);  // patched when the names are known
  for (const Symbol& s : symbols) {
    NameRange name = keep(s.name);
    out.u64(s.start);
    out.u64(s.end);
    out.u32(name.offset);
    out.u16(name.length);
    out.u8(static_cast<uint8_t>(s.binding));
    out.u8(0);
  }
  for (const auto& [marker, address] : kallsyms.markers()) {
    NameRange name = keep(marker);
    out.u64(address);
    out.u32(name.offset);
    out.u16(name.length);
    out.u16(0);
  }
  out.patch<uint64_t>(names_size_at, names.size());
  out.bytes(std::span(reinterpret_cast<const uint8_t*>(names.data()), names.size()));
  return out.take();
}

namespace {
// `mapping`: where `bytes` lie when they are mapped (the names are then kept there), else empty
// (the names are copied).
Result<Kallsyms> decode_kernel_image(std::span<const uint8_t> bytes, std::string& boot_id, FileMapping mapping) {
  ByteReader r(bytes);
  VPERF_TRY(std::span<const uint8_t> magic, r.bytes(kMagic.size(), "kernel image cache magic"));
  if (std::memcmp(magic.data(), kMagic.data(), kMagic.size()) != 0) return Error{"not a vperf kernel image cache"};
  VPERF_TRY(std::span<const uint8_t> boot, r.bytes(kBootIdField, "boot id"));
  boot_id.assign(reinterpret_cast<const char*>(boot.data()), boot.size());
  boot_id.resize(std::strlen(boot_id.c_str()));
  VPERF_TRY(uint32_t symbol_count, r.u32("symbol count"));
  VPERF_TRY(uint32_t marker_count, r.u32("marker count"));
  VPERF_TRY(uint64_t names_size, r.u64("names size"));
  constexpr size_t kSymbolBytes = PackedSymbols::kEntryBytes, kMarkerBytes = 16;
  // Bounds first, so a corrupt count cannot make a large allocation.
  const uint64_t tables = uint64_t{symbol_count} * kSymbolBytes + uint64_t{marker_count} * kMarkerBytes;
  if (tables > r.remaining() || names_size != r.remaining() - tables)
    return Error{"kernel image cache: its counts do not match its size"};
  VPERF_TRY(ByteReader symbol_bytes, r.sub(symbol_count * kSymbolBytes, "symbols"));
  VPERF_TRY(ByteReader marker_bytes, r.sub(marker_count * kMarkerBytes, "markers"));
  auto names = std::make_shared<SymbolNames>();
  const std::span<const uint8_t> name_bytes = r.rest();
  const std::string_view in_file(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
  const bool mapped = !mapping.bytes().empty();
  const std::string_view all_names = mapped ? in_file : names->keep(in_file);
  auto name_at = [&all_names](uint32_t offset, uint16_t length) -> Result<std::string_view> {
    if (offset > all_names.size() || length > all_names.size() - offset) return Error{"kernel image cache: a name out of range"};
    return all_names.substr(offset, length);
  };

  std::map<std::string, uint64_t, std::less<>> markers;
  for (uint32_t i = 0; i < marker_count; ++i) {
    VPERF_TRY(uint64_t address, marker_bytes.u64("marker address"));
    VPERF_TRY(uint32_t offset, marker_bytes.u32("marker name offset"));
    VPERF_TRY(uint16_t length, marker_bytes.u16("marker name length"));
    VPERF_TRY(marker_bytes.u16("padding"));
    VPERF_TRY(std::string_view name, name_at(offset, length));
    markers.emplace(std::string(name), address);
  }
  // The cache holds a finished table (vperf wrote it from one): its entries are looked up where
  // they lie (mapped, or copied beside the names), and a Symbol is made only for the symbols a
  // report meets.
  const std::span<const uint8_t> entries = symbol_bytes.rest();
  const std::string_view entry_text(reinterpret_cast<const char*>(entries.data()), entries.size());
  const std::string_view kept_entries = mapped ? entry_text : names->keep(entry_text);
  if (mapped) names->hold(std::move(mapping));
  const PackedSymbols packed{std::span(reinterpret_cast<const uint8_t*>(kept_entries.data()), kept_entries.size()), all_names};
  if (std::optional<SymbolTable> table = SymbolTable::from_packed(packed, names))
    return Kallsyms::kernel_image(std::move(*table), std::move(markers));

  // Entries whose ends are not those of a finished table: each is read into a Symbol, and
  // from_symbols makes a table of whatever the file says.
  std::vector<Symbol> symbols;
  symbols.reserve(packed.size());
  for (size_t i = 0; i < packed.size(); ++i) {
    std::optional<Symbol> symbol = packed.symbol(i);
    if (!symbol) return Error{"kernel image cache: symbol " + std::to_string(i) + " has an unknown binding, ends before it starts or names outside the names"};
    symbols.push_back(*symbol);
  }
  return Kallsyms::kernel_image(SymbolTable::from_symbols(std::move(symbols), std::move(names)), std::move(markers));
}
}  // namespace

Result<Kallsyms> decode_kernel_image(std::span<const uint8_t> bytes, std::string& boot_id) {
  return decode_kernel_image(bytes, boot_id, FileMapping{});
}

Result<Kallsyms> decode_kernel_image(FileMapping mapping, std::string& boot_id) {
  const std::span<const uint8_t> bytes = mapping.bytes();
  return decode_kernel_image(bytes, boot_id, std::move(mapping));
}

std::optional<std::string> current_boot_id() {
  Result<std::string> text = read_file("/proc/sys/kernel/random/boot_id");
  if (!text) return std::nullopt;
  std::string id(trim(*text));
  if (!plain_boot_id(id)) return std::nullopt;
  return id;
}

std::optional<Kallsyms> read_cached_kernel_image(const CacheLocation& location, const std::string& boot_id,
                                                 const RelocationReference& reference) {
  Result<PrivateDirectory> dir = PrivateDirectory::open(location.base, location.below, CreateMissing::no);
  if (!dir) return std::nullopt;
  Result<FileMapping> mapping = dir->map(kFileName);
  if (!mapping) return std::nullopt;
  std::string cached_boot;
  Result<Kallsyms> image = decode_kernel_image(std::move(mapping).value(), cached_boot);
  if (!image || cached_boot != boot_id) return std::nullopt;
  const std::optional<RelocationReference>& cached = image->relocation_reference();
  if (!cached || cached->name != reference.name || cached->address != reference.address) return std::nullopt;
  return std::move(image).value();
}

Result<void> write_cached_kernel_image(const CacheLocation& location, const std::string& boot_id,
                                       const Kallsyms& kallsyms) {
  if (!plain_boot_id(boot_id)) return Error{"boot id '" + boot_id + "' is not a plain name"};
  VPERF_TRY(PrivateDirectory dir, PrivateDirectory::open(location.base, location.below, CreateMissing::yes));
  const std::vector<uint8_t> bytes = encode_kernel_image(kallsyms, boot_id);
  return dir.replace(kFileName, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace vperf::symbols
