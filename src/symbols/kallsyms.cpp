#include "symbols/kallsyms.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::symbols {
namespace {

// Kernel symbols kept by address though their type is not (read-only data): the image's text
// bounds, and what a guest's kernel stacks are unwound with (its ORC tables, its version banner).
bool is_marker(std::string_view name) {
  static constexpr std::string_view kMarkers[] = {"_text", "_stext", "_etext", "_sinittext", "_einittext", "__start_orc_unwind_ip",
                                                  "__stop_orc_unwind_ip", "__start_orc_unwind", "linux_banner"};
  for (std::string_view m : kMarkers)
    if (name == m) return true;
  return false;
}

bool kept_type(char type) {
  char t = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
  return t == 'T' || t == 'W' || t == 'D' || t == 'B';
}

SymbolBinding binding_of(char type) {
  if (type == 'W' || type == 'w') return SymbolBinding::Weak;
  return std::isupper(static_cast<unsigned char>(type)) ? SymbolBinding::Global : SymbolBinding::Local;
}

}  // namespace

std::string kallsyms_restricted_hint() {
  return "run as root, or allow kernel addresses with 'sysctl kernel.kptr_restrict=0' and "
         "'sysctl kernel.perf_event_paranoid=1' (or lower)";
}

Result<Kallsyms> Kallsyms::load(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse(std::move(text).value(), path.string());
}

Result<Kallsyms> Kallsyms::parse(std::string owned_text, std::string_view source) {
  Kallsyms out;
  auto names = std::make_shared<SymbolNames>();
  const std::string_view text = names->adopt(std::move(owned_text));
  std::vector<SymbolSource> kernel;
  kernel.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::map<std::string, std::vector<SymbolSource>> modules;
  size_t lines = 0, nonzero = 0, line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (trim(line).empty()) continue;
    // ADDRESS ' ' TYPE ' ' NAME [ '\t' '[' MODULE ']' ]
    size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 > line.size() || line[sp1 + 2] != ' ')
      return Error{std::string(source) + ":" + std::to_string(line_no) + ": not a kallsyms line: '" +
                   std::string(line.substr(0, 80)) + "'"};
    auto address = parse_u64_base(line.substr(0, sp1), 16);
    if (!address)
      return Error{std::string(source) + ":" + std::to_string(line_no) + ": bad address '" +
                   std::string(line.substr(0, sp1)) + "'"};
    ++lines;
    if (*address != 0) ++nonzero;
    char type = line[sp1 + 1];
    std::string_view rest = line.substr(sp1 + 3);
    std::string_view name = rest, module;
    if (size_t tab = rest.find('\t'); tab != std::string_view::npos) {
      name = rest.substr(0, tab);
      module = trim(rest.substr(tab + 1));
      if (module.size() >= 2 && module.front() == '[' && module.back() == ']') module = module.substr(1, module.size() - 2);
    }
    if (module.empty() && is_marker(name)) out.markers_.emplace(std::string(name), *address);
    if (!kept_type(type)) continue;
    SymbolSource sym{*address, 0, name, binding_of(type), !module.empty()};
    if (module.empty()) kernel.push_back(sym);
    else modules[std::string(module)].push_back(sym);
  }
  if (lines > 0 && nonzero == 0)
    return Error{std::string(source) + ": every kernel symbol address is 0 (hidden by kernel.kptr_restrict); " +
                 kallsyms_restricted_hint(), EACCES};

  // perf sizes kernel and module symbols in one pass over one list; its page rounding at the
  // kernel/module boundary is what gives a table's last symbol its end here too.
  out.kernel_ = SymbolTable::build(std::move(kernel), SizeInference::Kallsyms, names);
  for (auto& [name, syms] : modules) out.modules_.emplace(name, SymbolTable::build(std::move(syms), SizeInference::Kallsyms, names));
  for (const char* ref : {"_text", "_stext"}) {
    if (auto it = out.markers_.find(ref); it != out.markers_.end()) {
      out.reloc_ = RelocationReference{ref, it->second};
      break;
    }
  }
  return out;
}

const SymbolTable* Kallsyms::module(std::string_view name) const {
  auto it = modules_.find(std::string(name));
  return it == modules_.end() ? nullptr : &it->second;
}

std::optional<uint64_t> Kallsyms::address_of(std::string_view name) const {
  if (auto it = markers_.find(name); it != markers_.end()) return it->second;
  if (const Symbol* s = kernel_.find_by_name(name)) return s->start;
  return std::nullopt;
}

}  // namespace vperf::symbols
