// libFuzzer target for the kernel's symbol texts, host or guest (a guest's copies come from a
// machine vperf does not control): /proc/kallsyms and /proc/modules. Any text must parse or
// fail with an Error; whatever parses must answer lookups, every symbol found at its own start.
// The same texts also become the kernel and module MMAP records record writes (host and guest),
// each of which must hold exactly the bytes its header's size says.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "data/synthesize.h"
#include "symbols/kallsyms.h"
#include "symbols/kernel_modules.h"

namespace {

void look_up_every_symbol(const vperf::symbols::SymbolTable& table) {
  for (const vperf::symbols::Symbol& symbol : table.symbols())
    if (table.find(symbol.start) == nullptr) __builtin_trap();
}

void check_sizes(const std::vector<vperf::data::RecordBytes>& records) {
  for (const vperf::data::RecordBytes& record : records) {
    uint16_t size = 0;
    std::memcpy(&size, record.data() + 6, sizeof size);  // perf_event_header.size
    if (size != record.size()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto kallsyms = vperf::symbols::Kallsyms::parse(text, "fuzz/kallsyms");
  if (kallsyms) {
    look_up_every_symbol(kallsyms->kernel());
    for (const auto& [name, table] : kallsyms->modules()) look_up_every_symbol(table);
    (void)kallsyms->address_of("_etext");
  }
  auto modules = vperf::symbols::parse_kernel_modules(text, "fuzz/modules");
  if (modules)
    for (const vperf::symbols::KernelModule& module : *modules) (void)vperf::symbols::module_dso_name(module.name);
  const vperf::data::SampleFormat tid_trailer{.sample_type = PERF_SAMPLE_TID, .sample_id_all = true};  // 8 bytes
  check_sizes(vperf::data::kernel_map_records(text, text, std::nullopt, tid_trailer));
  check_sizes(vperf::data::kernel_map_records(text, text, pid_t{1234}, vperf::data::SampleFormat{}));
  return 0;
}
