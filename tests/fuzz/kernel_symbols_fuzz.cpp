// libFuzzer target for the kernel's symbol texts, host or guest (a guest's copies come from a
// machine vperf does not control): /proc/kallsyms and /proc/modules. Any text must parse or
// fail with an Error; whatever parses must answer lookups, every symbol found at its own start.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "symbols/kallsyms.h"
#include "symbols/kernel_modules.h"

namespace {

void look_up_every_symbol(const vperf::symbols::SymbolTable& table) {
  for (const vperf::symbols::Symbol& symbol : table.symbols())
    if (table.find(symbol.start) == nullptr) __builtin_trap();
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
  return 0;
}
