#include "symbols/kernel_image_cache.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/files.h"
#include "support/fake_event_fs.h"

namespace vperf::symbols {
namespace {

// A slice of a real x86_64 /proc/kallsyms, with module lines the cache must leave out.
constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000040 T startup_64\n"
    "ffffffff81000100 t verify_cpu\n"
    "ffffffff81000200 W weak_helper\n"
    "ffffffff81000300 T do_syscall_64\n"
    "ffffffff81000500 T _etext\n"
    "ffffffff82000000 D some_data\n"
    "ffffffff82100000 r __start_orc_unwind_ip\n"
    "ffffffffc0a00000 t kvm_init\t[kvm]\n";
constexpr const char* kBoot = "0f3b6a7e-2a44-4c55-9e2c-1f6e0b8c7d21";

Kallsyms parsed() {
  Result<Kallsyms> k = Kallsyms::parse(kKallsyms, "fixture");
  if (!k) throw std::runtime_error(k.error().describe());
  return std::move(k).value();
}

Result<Kallsyms> round_trip(const Kallsyms& k, std::string& boot) {
  std::vector<uint8_t> bytes = encode_kernel_image(k, kBoot);
  return decode_kernel_image(bytes, boot);
}

TEST(KernelImageCache, KeepsTheImagesTableMarkersAndReferenceButNoModule) {
  const Kallsyms original = parsed();
  std::string boot;
  Result<Kallsyms> copy = round_trip(original, boot);
  ASSERT_TRUE(copy.ok()) << copy.error().describe();
  EXPECT_EQ(boot, kBoot);
  ASSERT_EQ(copy->kernel().size(), original.kernel().size());
  for (size_t i = 0; i < original.kernel().size(); ++i) {
    const Symbol& a = original.kernel().symbols()[i];
    const Symbol& b = copy->kernel().symbols()[i];
    EXPECT_EQ(a.start, b.start);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.binding, b.binding);
  }
  EXPECT_EQ(copy->markers(), original.markers());
  ASSERT_TRUE(copy->relocation_reference());
  EXPECT_EQ(copy->relocation_reference()->name, "_text");
  EXPECT_EQ(copy->relocation_reference()->address, 0xffffffff81000000u);
  EXPECT_EQ(copy->address_of("__start_orc_unwind_ip"), 0xffffffff82100000u);
  EXPECT_TRUE(copy->modules().empty());
  EXPECT_EQ(copy->kernel().find(0xffffffff81000350)->name, "do_syscall_64");
}

TEST(KernelImageCache, MalformedFilesAreErrorsNotTables) {
  const std::vector<uint8_t> good = encode_kernel_image(parsed(), kBoot);
  std::string boot;
  for (size_t cut : {size_t{0}, size_t{7}, size_t{80}, good.size() - 1}) {
    std::vector<uint8_t> truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_FALSE(decode_kernel_image(truncated, boot).ok()) << "cut at " << cut;
  }
  std::vector<uint8_t> magic = good;
  magic[0] = 'X';
  EXPECT_FALSE(decode_kernel_image(magic, boot).ok());
  // The first symbol's name offset (after magic, boot id, counts and names size) far out of range.
  std::vector<uint8_t> name = good;
  const size_t first_name_offset = 8 + 64 + 4 + 4 + 8 + 16;
  name[first_name_offset + 3] = 0x7f;
  EXPECT_FALSE(decode_kernel_image(name, boot).ok());
  // A symbol count that claims more than the file holds.
  std::vector<uint8_t> count = good;
  count[8 + 64 + 3] = 0x7f;
  EXPECT_FALSE(decode_kernel_image(count, boot).ok());
}

// Entries are checked as lookups reach them (a pass over all of a kernel's was a third of a
// small flame graph's time): a damaged entry in the middle of the file is never a symbol, and
// the rest still are.
TEST(KernelImageCache, ADamagedEntryIsSkippedAndTheRestStillFound) {
  std::string text = "ffffffff81000000 T _text\n";
  constexpr int kSymbols = 1000;
  auto start_of = [](int i) { return 0xffffffff81000000ULL + 16ULL * static_cast<unsigned>(i); };
  char line[64];
  for (int i = 1; i <= kSymbols; ++i) {
    std::snprintf(line, sizeof line, "%016llx t f%d\n", static_cast<unsigned long long>(start_of(i)), i);
    text += line;
  }
  Result<Kallsyms> k = Kallsyms::parse(text, "fixture");
  ASSERT_TRUE(k.ok()) << k.error().describe();
  std::vector<uint8_t> bytes = encode_kernel_image(*k, kBoot);
  constexpr size_t kEntries = 8 + 64 + 4 + 4 + 8, kEntryBytes = 24, kBindingAt = 22;
  auto entry = [&](int i) { return bytes.begin() + static_cast<std::ptrdiff_t>(kEntries + kEntryBytes * static_cast<size_t>(i)); };
  *(entry(500) + kBindingAt) = 9;                                  // an unknown binding
  std::swap_ranges(entry(700), entry(701), entry(701));             // two entries out of order
  std::string boot;
  Result<Kallsyms> image = decode_kernel_image(bytes, boot);
  ASSERT_TRUE(image.ok()) << image.error().describe();
  const SymbolTable& table = image->kernel();
  EXPECT_EQ(table.size(), size_t{kSymbols} + 1);
  EXPECT_EQ(table.find(start_of(500) + 3), nullptr);
  EXPECT_EQ(table.find_by_name("f500"), nullptr);
  EXPECT_TRUE(table.at(500).name.empty());
  for (uint64_t addr : {start_of(700) + 3, start_of(701) + 3}) {
    const Symbol* found = table.find(addr);
    if (found) { EXPECT_TRUE(addr >= found->start && addr < found->end) << found->name; }
  }
  for (int i = 1; i <= kSymbols; ++i) {
    if (i == 500 || i == 700 || i == 701) continue;
    const Symbol* found = table.find(start_of(i) + 3);
    ASSERT_NE(found, nullptr) << "f" << i;
    EXPECT_EQ(found->name, "f" + std::to_string(i));
  }
  std::span<const Symbol> all = table.symbols();
  EXPECT_EQ(all.size(), size_t{kSymbols} - 1) << "all but the damaged entry and the one out of order";
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1].start, all[i].start);
}

TEST(KernelImageCache, AnEntryServesOnlyItsBootAndItsRelocationReference) {
  test::TempTree home;
  const CacheLocation location{home.root(), "vperf/kernel-symbols"};
  const Kallsyms k = parsed();
  ASSERT_TRUE(write_cached_kernel_image(location, kBoot, k).ok());
  struct stat st {};
  ASSERT_EQ(::stat((location.path() / "kernel-image").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const RelocationReference text{"_text", 0xffffffff81000000};
  std::optional<Kallsyms> hit = read_cached_kernel_image(location, kBoot, text);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->kernel().size(), k.kernel().size());
  // Another boot, another KASLR offset, or hidden addresses: a miss.
  EXPECT_FALSE(read_cached_kernel_image(location, "11111111-2a44-4c55-9e2c-1f6e0b8c7d21", text));
  EXPECT_FALSE(read_cached_kernel_image(location, kBoot, RelocationReference{"_text", 0xffffffff9a000000}));
  EXPECT_FALSE(read_cached_kernel_image(location, kBoot, RelocationReference{"_text", 0}));
  // Nothing there yet: a miss, not an error.
  EXPECT_FALSE(read_cached_kernel_image(CacheLocation{home.root(), "other"}, kBoot, text));
  // A boot id that is not a plain name is never a path.
  EXPECT_FALSE(write_cached_kernel_image(location, "../../etc", k).ok());
}

// The process's resident anonymous memory, from /proc/self/status.
uint64_t rss_anon_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string row; std::getline(status, row);)
    if (row.starts_with("RssAnon:")) return std::stoull(row.substr(8));
  return 0;
}

// The cached table is looked up in the file's entries where they lie: a Symbol is made for each
// symbol a lookup reaches, once, not for all of them (the 100k here would be 4 MB of anonymous
// memory, a page fault per 4 KB, on every reading command with a real kernel's 150k symbols).
TEST(KernelImageCache, SymbolsAreMadeOnlyWhereLookupsReach) {
  test::TempTree home;
  const CacheLocation location{home.root(), "vperf/kernel-symbols"};
  std::string text = "ffffffff81000000 T _text\n";
  constexpr int kSymbols = 100000;
  char line[64];
  for (int i = 1; i <= kSymbols; ++i) {
    std::snprintf(line, sizeof line, "%016llx t f%d\n", 0xffffffff81000000ULL + 16ULL * static_cast<unsigned>(i), i);
    text += line;
  }
  {
    Result<Kallsyms> k = Kallsyms::parse(text, "fixture");
    ASSERT_TRUE(k.ok()) << k.error().describe();
    ASSERT_TRUE(write_cached_kernel_image(location, kBoot, *k).ok());
  }
  const uint64_t before_kb = rss_anon_kb();
  std::optional<Kallsyms> hit = read_cached_kernel_image(location, kBoot, RelocationReference{"_text", 0xffffffff81000000});
  ASSERT_TRUE(hit);
  const SymbolTable& table = hit->kernel();
  ASSERT_EQ(table.size(), size_t{kSymbols} + 1);
  const Symbol* found = table.find(0xffffffff81000000ULL + 16 * 77777 + 3);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->name, "f77777");
  EXPECT_EQ(found->start, 0xffffffff81000000ULL + 16 * 77777);
  EXPECT_EQ(found->end, found->start + 16);
  EXPECT_EQ(table.find_by_name("f12345"), &table.at(12345)) << "one Symbol per symbol, however it is reached";
  EXPECT_EQ(table.find(0xffffffff81000000ULL + 16 * 77777), found);
  const uint64_t grown_kb = rss_anon_kb() - before_kb;
  EXPECT_LT(grown_kb, 1024u) << "the table's Symbols took " << grown_kb << " KB: made for every symbol";

  // Every symbol when all are asked for, the ones made before among them, alike.
  std::span<const Symbol> all = table.symbols();
  ASSERT_EQ(all.size(), size_t{kSymbols} + 1);
  EXPECT_EQ(all[77777].name, found->name);
  EXPECT_EQ(all[77777].start, found->start);
  EXPECT_EQ(all[77777].end, found->end);
  EXPECT_EQ(table.find(0xffffffff81000000ULL + 16 * 77777), found) << "a lookup's Symbol stays where it was";
  EXPECT_EQ(all[0].name, "_text");
  EXPECT_EQ(all[kSymbols].name, "f" + std::to_string(kSymbols));
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1].start, all[i].start);
}

TEST(KernelImageCache, AFileAnotherUserCouldWriteIsNotRead) {
  test::TempTree home;
  const CacheLocation location{home.root(), "vperf/kernel-symbols"};
  ASSERT_TRUE(write_cached_kernel_image(location, kBoot, parsed()).ok());
  ASSERT_EQ(::chmod((location.path() / "kernel-image").c_str(), 0666), 0);
  EXPECT_FALSE(read_cached_kernel_image(location, kBoot, RelocationReference{"_text", 0xffffffff81000000}));
}

// The fuzz seed is written from the layout in kernel_image_cache.h by a script, not by vperf:
// decoding it proves the documented layout is the one read.
TEST(KernelImageCache, TheDocumentedLayoutIsTheOneRead) {
  Result<std::string> seed = read_file(std::filesystem::path(VPERF_SOURCE_DIR) / "tests/fuzz/corpus/kernel_image_cache/seed-host-slice");
  ASSERT_TRUE(seed.ok()) << seed.error().describe();
  std::string boot;
  Result<Kallsyms> image = decode_kernel_image(std::span(reinterpret_cast<const uint8_t*>(seed->data()), seed->size()), boot);
  ASSERT_TRUE(image.ok()) << image.error().describe();
  EXPECT_EQ(boot, kBoot);
  ASSERT_EQ(image->kernel().size(), 6u);
  EXPECT_EQ(image->kernel().find(0xffffffff81000250)->name, "weak_helper");
  EXPECT_EQ(image->kernel().find(0xffffffff81000250)->binding, SymbolBinding::Weak);
  EXPECT_EQ(image->kernel().find(0xffffffff81000150)->binding, SymbolBinding::Local);
  EXPECT_EQ(image->address_of("_etext"), 0xffffffff81000500u);
  ASSERT_TRUE(image->relocation_reference());
  EXPECT_EQ(image->relocation_reference()->name, "_text");
}

TEST(KernelImageCache, ThisBootHasAnId) {
  std::optional<std::string> boot = current_boot_id();
  ASSERT_TRUE(boot);
  EXPECT_EQ(boot->size(), 36u);
}

}  // namespace
}  // namespace vperf::symbols
