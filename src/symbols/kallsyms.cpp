#include "symbols/kallsyms.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
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

// The lines of a kallsyms text, fed in pieces that each end at a line's end: /proc/kallsyms
// (5 MB of text for 120k symbols) is parsed as it is read, and only the kept names are copied,
// so the text is never held whole (on a VM, memory first touched is what a small report costs).
class KallsymsParser {
 public:
  explicit KallsymsParser(std::string_view source) : source_(source) {
    // Virtual memory only until used: a kernel has about 100k kept symbols.
    kernel_.reserve(size_t{1} << 17);
  }

  Result<void> add(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) eol = text.size();
      std::string_view line = text.substr(pos, eol - pos);
      pos = eol + 1;
      ++line_no_;
      if (auto added = add_line(line); !added) return added;
    }
    return {};
  }

  Result<Kallsyms> finish() {
    if (lines_ > 0 && nonzero_ == 0)
      return Error{std::string(source_) + ": every kernel symbol address is 0 (hidden by kernel.kptr_restrict); " +
                   kallsyms_restricted_hint(), EACCES};
    Kallsyms out;
    out.kernel_ = SymbolTable::from_symbols(std::move(kernel_), names_);
    for (auto& [name, syms] : modules_) out.modules_.emplace(name, SymbolTable::from_symbols(std::move(syms), names_));
    out.markers_ = std::move(markers_);
    out.set_relocation_reference();
    return out;
  }

 private:
  Result<void> add_line(std::string_view line) {
    if (trim(line).empty()) return {};
    // ADDRESS ' ' TYPE ' ' NAME [ '\t' '[' MODULE ']' ]
    size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 > line.size() || line[sp1 + 2] != ' ')
      return Error{std::string(source_) + ":" + std::to_string(line_no_) + ": not a kallsyms line: '" +
                   std::string(line.substr(0, 80)) + "'"};
    auto address = parse_u64_base(line.substr(0, sp1), 16);
    if (!address)
      return Error{std::string(source_) + ":" + std::to_string(line_no_) + ": bad address '" +
                   std::string(line.substr(0, sp1)) + "'"};
    ++lines_;
    if (*address != 0) ++nonzero_;
    char type = line[sp1 + 1];
    std::string_view rest = line.substr(sp1 + 3);
    std::string_view name = rest, module;
    if (size_t tab = rest.find('\t'); tab != std::string_view::npos) {
      name = rest.substr(0, tab);
      module = trim(rest.substr(tab + 1));
      if (module.size() >= 2 && module.front() == '[' && module.back() == ']') module = module.substr(1, module.size() - 2);
    }
    if (module.empty() && is_marker(name)) markers_.emplace(std::string(name), *address);
    if (!kept_type(type)) return {};
    Symbol symbol{*address, *address, names_->keep(name), binding_of(type)};  // no size: ends at the next
    if (module.empty()) kernel_.push_back(symbol);
    else module_symbols(module).push_back(symbol);
    return {};
  }

  // A module's lines come together: the last one found is the next one's.
  std::vector<Symbol>& module_symbols(std::string_view module) {
    if (last_module_ == modules_.end() || last_module_->first != module) {
      last_module_ = modules_.find(module);
      if (last_module_ == modules_.end()) last_module_ = modules_.emplace(std::string(module), std::vector<Symbol>{}).first;
    }
    return last_module_->second;
  }

  std::string_view source_;
  std::shared_ptr<SymbolNames> names_ = std::make_shared<SymbolNames>();
  std::vector<Symbol> kernel_;
  std::map<std::string, std::vector<Symbol>, std::less<>> modules_;
  std::map<std::string, std::vector<Symbol>, std::less<>>::iterator last_module_ = modules_.end();
  std::map<std::string, uint64_t, std::less<>> markers_;
  size_t lines_ = 0, nonzero_ = 0, line_no_ = 0;
};

namespace {

// Hands a kallsyms file to `take` in pieces of whole lines (the last line may lack its '\n'),
// read as the kernel generates it, until the end or until `take` says it has what it wanted
// (false). /proc/kallsyms is 5 MB of text the kernel formats on every read: a reader that
// needs one early line stops there, and one that needs all never holds the text whole.
// `buffer_size` is what one read asks for: procfs formats that much text per call.
template <typename TakeLines>
Result<void> read_kallsyms_lines(const std::filesystem::path& path, size_t buffer_size, TakeLines take) {
  auto opened = open_regular_file(path);
  if (!opened) return opened.error();
  const int fd = opened.value().get();
  const size_t kBuffer = buffer_size;
  auto buffer = std::make_unique<char[]>(kBuffer);
  size_t held = 0;  // bytes of an unfinished line carried to the front of the buffer
  for (;;) {
    if (held == kBuffer) return Error{path.string() + ": a line longer than " + std::to_string(kBuffer) + " bytes: not a kallsyms file"};
    ssize_t n = ::read(fd, buffer.get() + held, kBuffer - held);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("read " + path.string());
    }
    std::string_view text(buffer.get(), held + static_cast<size_t>(n));
    if (n == 0) {
      VPERF_TRY(take(text));
      return {};
    }
    size_t complete = text.rfind('\n') + 1;  // 0 when no line ended in this buffer
    VPERF_TRY(bool more, take(text.substr(0, complete)));
    if (!more) return {};
    held = text.size() - complete;
    std::memmove(buffer.get(), buffer.get() + complete, held);
  }
}

}  // namespace

Result<Kallsyms> Kallsyms::load(const std::filesystem::path& path) {
  KallsymsParser parser(path.string());
  constexpr size_t kWholeFileBuffer = size_t{1} << 20;  // fewer calls for 5 MB
  auto parse_lines = [&](std::string_view lines) -> Result<bool> {
    if (auto added = parser.add(lines); !added) return added.error();
    return true;
  };
  VPERF_TRY(read_kallsyms_lines(path, kWholeFileBuffer, parse_lines));
  return parser.finish();
}

Result<std::optional<RelocationReference>> Kallsyms::load_relocation_reference(const std::filesystem::path& path) {
  // "_text" wins wherever it is, as in a full load; it comes in the first lines of x86's kallsyms.
  std::optional<RelocationReference> found;
  constexpr size_t kFirstLinesBuffer = 4096;  // a page: the kernel formats no more than asked
  auto find_reference = [&](std::string_view lines) -> Result<bool> {
    for (std::string_view line : split(lines, '\n')) {
      // ADDRESS ' ' TYPE ' ' NAME: only a whole "_text"/"_stext" name of the kernel image.
      const size_t sp1 = line.find(' ');
      if (sp1 == std::string_view::npos || sp1 + 3 > line.size()) continue;
      std::string_view name = line.substr(sp1 + 3);
      if (name != "_text" && name != "_stext") continue;
      if (found && found->name == "_stext" && name == "_stext") continue;
      std::optional<uint64_t> address = parse_u64_base(line.substr(0, sp1), 16);
      if (!address) continue;
      found = RelocationReference{std::string(name), *address};
      if (name == "_text") return false;
    }
    return true;
  };
  VPERF_TRY(read_kallsyms_lines(path, kFirstLinesBuffer, find_reference));
  // Hidden addresses (kptr_restrict) read as 0: no reference, as a full load's Error gives none.
  if (found && found->address == 0) return std::optional<RelocationReference>{};
  return found;
}

Result<Kallsyms> Kallsyms::parse(std::string_view text, std::string_view source) {
  KallsymsParser parser(source);
  if (auto added = parser.add(text); !added) return added.error();
  return parser.finish();
}

void Kallsyms::set_relocation_reference() {
  for (const char* ref : {"_text", "_stext"}) {
    if (auto it = markers_.find(ref); it != markers_.end()) {
      reloc_ = RelocationReference{ref, it->second};
      return;
    }
  }
}

Kallsyms Kallsyms::kernel_image(SymbolTable kernel, std::map<std::string, uint64_t, std::less<>> markers) {
  Kallsyms out;
  out.kernel_ = std::move(kernel);
  out.markers_ = std::move(markers);
  out.set_relocation_reference();
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
