#include "probes/probe_plan.h"

#include <algorithm>
#include <numeric>
#include <cctype>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "core/files.h"
#include "core/name_filter.h"
#include "core/private_files.h"
#include "core/strings.h"
#include "report/annotate_disassembler.h"
#include "probes/probe_cost.h"
#include "symbols/demangle.h"
#include "symbols/elf_file.h"
#include "symbols/function_probe_points.h"
#include "symbols/kallsyms.h"
#include "symbols/probe_debuginfo.h"
#include "symbols/sdt_markers.h"
#include "tracing/probe_definition.h"

namespace vperf::probes {

namespace {

std::string group_event_of(std::string_view name) {  // "probe_libc/malloc" -> "probe_libc:malloc"
  std::string out(name);
  if (size_t slash = out.find('/'); slash != std::string::npos) out[slash] = ':';
  return out;
}

// Where the instructions of `elf`'s code start, to prove a FUNC+OFF is one's first byte:
// x86-64's decoded by capstone from the function's entry (its instructions are 1 to 15 bytes),
// arm64's every 4 bytes (fixed length). Other machines have none: their offsets are refused.
symbols::InstructionDecoder instruction_decoder(const symbols::ElfFile& elf) {
  GElf_Ehdr header;
  if (gelf_getehdr(elf.handle(), &header) == nullptr) return {};
  if (header.e_machine == EM_AARCH64)
    return [](std::span<const uint8_t> code) -> Result<std::vector<uint64_t>> {
      std::vector<uint64_t> starts;
      for (uint64_t at = 0; at < code.size(); at += 4) starts.push_back(at);
      return starts;
    };
  if (header.e_machine != EM_X86_64) return {};
  return [](std::span<const uint8_t> code) -> Result<std::vector<uint64_t>> {
    VPERF_TRY(report::Disassembler disassembler, report::Disassembler::x86_64(report::AsmSyntax::Att));
    std::vector<uint64_t> starts;
    for (const report::Instruction& instruction : disassembler.disassemble(code, 0, {})) {
      // A byte that decodes to nothing leaves every later boundary unknown (data in the code,
      // or an instruction capstone 4 does not know).
      if (instruction.mnemonic == "(bad)")
        return Error{"its byte at +" + std::to_string(instruction.address) + " decodes to no x86-64 instruction capstone knows"};
      starts.push_back(instruction.address);
    }
    return starts;
  };
}

// Whether FUNC+`offset` into the code at [entry, entry + size) of `elf` is a place for a probe
// (inside it, at an instruction's first byte). A kernel module's code has no loaded segments to
// read it from: there only the size is checked, and the kernel itself refuses a kprobe inside an
// instruction (x86's can_probe decodes the function; arm64 takes only 4-byte aligned addresses).
Result<void> check_site_offset(const symbols::ElfFile& elf, const std::string& function, uint64_t entry, uint64_t size, uint64_t offset) {
  if (offset == 0 || offset >= size) return symbols::check_function_offset(function, size, offset, std::vector<uint64_t>{});
  if (elf.type() == ET_REL) return {};
  const symbols::InstructionDecoder decode = instruction_decoder(elf);
  Result<std::vector<uint64_t>> starts = Error{"vperf has no instruction decoder for " + elf.name() + "'s machine"};
  if (decode) {
    Result<std::vector<uint8_t>> code = symbols::loaded_code(elf, entry, size);
    starts = code ? decode(*code) : Result<std::vector<uint64_t>>(code.error());
  }
  return symbols::check_function_offset(function, size, offset, starts);
}

bool matches(const std::string& pattern, const std::string& group_event) {
  if (pattern.empty()) return true;
  if (pattern.find(':') != std::string::npos) return glob_match(pattern, group_event);
  return glob_match(pattern, group_event.substr(group_event.find(':') + 1));
}

// perf's name for an unnamed variable argument with fields: its last member's name
// ("weight" for r->weight, "arr" for r->arr[2]), the variable's when only indexed.
std::string field_argument_name(const tracing::ProbeArgument& arg) {
  for (auto it = arg.fields.rbegin(); it != arg.fields.rend(); ++it)
    if (!it->starts_with('[')) return it->substr(it->starts_with("->") ? 2 : 1);
  return arg.variable;
}

// Where a uprobe is, for fetches of the probed file's own memory: the kernel takes "@+OFFSET"
// from where the probe's segment maps file offset 0, so a symbol at ELF address A is
// "@+(A - address + file_offset)".
struct ProbedSpot {
  const symbols::ElfFile* elf = nullptr;
  uint64_t address = 0;      // the probe's ELF virtual address
  uint64_t file_offset = 0;  // ... and its file offset
};

// The uprobe "@+OFFSET" of a data symbol of the probed file plus `addend`, or an Error.
Result<uint64_t> symbol_fetch_offset(const ProbedSpot& spot, const std::string& expression, const std::string& name, int64_t addend) {
  std::optional<uint64_t> address = spot.elf ? spot.elf->object_symbol(name) : std::nullopt;
  if (!address)
    return Error{"argument '" + expression + "': no data symbol " + name + " in " + (spot.elf ? spot.elf->name() : std::string("the probed file")), 0,
                 "name a global or static variable of the probed file (nm shows them: D, d, B, b), or give its file offset as @+0xOFFSET"};
  // ELF address + addend + file offset - probe address, refused where any step leaves 0..2^64-1.
  uint64_t target = 0, mapped = 0;
  const uint64_t magnitude = addend < 0 ? uint64_t{0} - static_cast<uint64_t>(addend) : static_cast<uint64_t>(addend);
  if (addend < 0 ? *address < magnitude : __builtin_add_overflow(*address, magnitude, &target))
    return Error{"argument '" + expression + "': @" + name + (addend < 0 ? " minus " : " plus ") + std::to_string(magnitude) + " is no address", 0,
                 "give an addend that keeps the address inside the file"};
  if (addend < 0) target = *address - magnitude;
  if (__builtin_add_overflow(target, spot.file_offset, &mapped) || mapped < spot.address)
    return Error{"argument '" + expression + "': @" + name + " lies outside the probed segment's mapping, which uprobes cannot address"};
  return mapped - spot.address;
}

// The raw uprobe text of an argument, or an Error for what needs DWARF. An argument that is one
// symbol ("@counter") is named after it, as a variable is.
Result<std::string> raw_argument(const tracing::ProbeArgument& arg, const ProbedSpot& spot) {
  if (arg.user_access)
    return Error{"argument '" + arg.expression + "@user' marks user memory, which only kernel probes need", 0,
                 "drop @user: a uprobe's fetches read the probed process's memory"};
  VPERF_TRY(std::string expression, tracing::rewrite_symbol_fetches(arg.expression, [&](const std::string& name, int64_t addend) {
              return symbol_fetch_offset(spot, arg.expression, name, addend);
            }));
  std::string name = arg.name;
  if (name.empty() && expression != arg.expression && arg.expression.size() > 1 && tracing::is_probe_event_name(arg.expression.substr(1)))
    name = arg.expression.substr(1);
  std::string text = name.empty() ? expression : name + "=" + expression;
  if (!arg.type.empty()) text += ":" + arg.type;
  return text;
}

// `taken` holds GROUP/EVENT names (uprobe_events' and those planned so far).
bool is_taken(const std::vector<std::string>& taken, const std::string& group, const std::string& event) {
  return std::find(taken.begin(), taken.end(), group + "/" + event) != taken.end();
}

Error taken_error(const std::string& group, const std::string& event, std::string_view other_way) {
  return Error{"event " + group + ":" + event + " already exists", EEXIST,
               "delete it first (vperf probe -d " + group + ":" + event + ")" + std::string(other_way)};
}

// EVENT, or EVENT_1, EVENT_2, ... : the first name in `group` nothing uses.
std::string free_name(const std::string& group, const std::string& event, const std::vector<std::string>& taken) {
  if (!is_taken(taken, group, event)) return event;
  for (int i = 1;; ++i)
    if (!is_taken(taken, group, event + "_" + std::to_string(i))) return event + "_" + std::to_string(i);
}

// x86-64's register names as uprobe fetch arguments take them: every width of a register is
// the register ("%eax", "%al" -> "%ax"; "%r14d" -> "%r14").
std::optional<std::string> uprobe_register(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kNamed[] = {
      {"rax", "ax"}, {"eax", "ax"}, {"ax", "ax"}, {"al", "ax"}, {"ah", "ax"},
      {"rbx", "bx"}, {"ebx", "bx"}, {"bx", "bx"}, {"bl", "bx"}, {"bh", "bx"},
      {"rcx", "cx"}, {"ecx", "cx"}, {"cx", "cx"}, {"cl", "cx"}, {"ch", "cx"},
      {"rdx", "dx"}, {"edx", "dx"}, {"dx", "dx"}, {"dl", "dx"}, {"dh", "dx"},
      {"rsi", "si"}, {"esi", "si"}, {"si", "si"}, {"sil", "si"},
      {"rdi", "di"}, {"edi", "di"}, {"di", "di"}, {"dil", "di"},
      {"rbp", "bp"}, {"ebp", "bp"}, {"bp", "bp"}, {"bpl", "bp"},
      {"rsp", "sp"}, {"esp", "sp"}, {"sp", "sp"}, {"spl", "sp"},
      {"rip", "ip"}, {"eip", "ip"}, {"ip", "ip"}};
  for (const auto& [from, to] : kNamed)
    if (name == from) return "%" + std::string(to);
  // r8..r15 with a d, w or b suffix
  if (name.size() >= 2 && name[0] == 'r' && std::isdigit(static_cast<unsigned char>(name[1]))) {
    std::string_view number = name.substr(1);
    if (!number.empty() && (number.back() == 'd' || number.back() == 'w' || number.back() == 'b')) number.remove_suffix(1);
    if (std::optional<uint64_t> n = parse_u64(number); n && *n >= 8 && *n <= 15) return "%r" + std::to_string(*n);
  }
  return std::nullopt;
}

// A USDT argument word as a uprobe fetch argument, perf's conversion: "8@%rbx" -> "%bx:u64",
// "-4@112(%rsp)" -> "+112(%sp):s32". nullopt for what uprobes cannot fetch (constants,
// %rip-relative symbols), which perf leaves out too.
std::optional<std::string> uprobe_fetch(const symbols::SdtArgument& arg) {
  const std::string type = std::string(arg.is_signed ? ":s" : ":u") + std::to_string(arg.size * 8);
  std::string_view operand = arg.operand;
  if (operand.starts_with('%')) {
    std::optional<std::string> reg = uprobe_register(operand.substr(1));
    return reg ? std::optional<std::string>(*reg + type) : std::nullopt;
  }
  const size_t open = operand.find("(%");
  if (open == std::string_view::npos || !operand.ends_with(')')) return std::nullopt;
  std::optional<std::string> reg = uprobe_register(operand.substr(open + 2, operand.size() - open - 3));
  std::string_view displacement = operand.substr(0, open);
  const bool negative = displacement.starts_with('-');
  if (negative) displacement.remove_prefix(1);
  std::optional<uint64_t> offset = displacement.empty() ? std::optional<uint64_t>(0) : parse_u64(displacement);
  if (!reg || !offset) return std::nullopt;
  return std::string(negative ? "-" : "+") + std::to_string(*offset) + "(" + *reg + ")" + type;
}

// perf's is_sdt_event: "%[sdt_]PROVIDER:NAME", or "sdt_PROVIDER:NAME" with no '='.
bool is_sdt_event(std::string_view text) {
  return text.starts_with('%') ||
         (text.starts_with("sdt_") && text.find(':') != std::string_view::npos && text.find('=') == std::string_view::npos);
}

// A probe on the USDT marker `text` names ("sdt_python:function__entry") in `file`.
Result<PlannedProbe> plan_sdt_probe(const std::filesystem::path& file, std::string_view text) {
  std::string_view name = text.substr(text.starts_with('%') ? 1 : 0);
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos || name.find(' ') != std::string_view::npos)
    return Error{"'" + std::string(text) + "' is not sdt_PROVIDER:NAME", 0, "name a marker as perf does: sdt_python:function__entry"};
  std::string group(name.substr(0, colon));
  if (!group.starts_with("sdt_")) group = "sdt_" + group;
  const std::string event(name.substr(colon + 1));
  VPERF_TRY(std::vector<symbols::SdtMarker> markers, symbols::read_sdt_markers(file));
  for (const symbols::SdtMarker& m : markers) {
    if ("sdt_" + m.provider != group || m.name != event) continue;
    if (!m.file_offset) return Error{group + ":" + event + " in " + file.string() + " lies in no loaded segment"};
    VPERF_TRY(std::vector<symbols::SdtArgument> args, symbols::parse_sdt_arguments(m.arguments));
    PlannedProbe p;
    p.event = tracing::UprobeEvent{group, event, file, *m.file_offset, m.semaphore_offset, false, {}};
    for (size_t i = 0; i < args.size(); ++i)
      if (std::optional<std::string> fetch = uprobe_fetch(args[i])) p.event.arguments.push_back("arg" + std::to_string(i + 1) + "=" + *fetch);
    p.definition = tracing::uprobe_definition(p.event);
    p.point = "%" + group + ":" + event;
    return p;
  }
  return Error{"no USDT marker " + group + ":" + event + " in " + file.string(), 0,
               "list the file's markers with: readelf -n " + file.string()};
}


// The file whose symbol table names the -x file's functions, as perf reads it: its separate
// debuginfo when that has a .symtab (libc6-dbg's has the static functions .dynsym lacks), else
// the file itself.
std::filesystem::path symbol_file(const std::filesystem::path& file, const std::vector<std::filesystem::path>& debug_dirs) {
  symbols::DebuginfoLookup lookup = symbols::find_probe_debuginfo(file, debug_dirs);
  if (lookup.file && *lookup.file != file)
    if (Result<symbols::ElfFile> debug = symbols::ElfFile::open(*lookup.file); debug && debug->has_symtab()) return *lookup.file;
  return file;
}

// The -x file's DWARF, looked for once per plan and only when a definition needs it.
struct DebugInfoSource {
  bool looked = false;
  std::optional<symbols::ProbeDebugInfo> info;
  std::string missing;  // the build-id path that would hold it
};

symbols::ProbeDebugInfo* debug_info(DebugInfoSource& source, const std::filesystem::path& file,
                                    const std::vector<std::filesystem::path>& debug_dirs, bool kernel = false) {
  if (!source.looked) {
    source.looked = true;
    symbols::DebuginfoLookup lookup = symbols::find_probe_debuginfo(file, debug_dirs);
    source.missing = lookup.missing;
    if (lookup.file)
      if (Result<symbols::ProbeDebugInfo> info = symbols::ProbeDebugInfo::open(*lookup.file, file, kernel)) source.info = std::move(info).value();
  }
  return source.info ? &*source.info : nullptr;
}

bool is_scope_expansion(const tracing::ProbeArgument& arg) { return arg.expression == "$params" || arg.expression == "$vars"; }
bool needs_dwarf(const tracing::ProbeArgument& arg) { return !arg.variable.empty() || is_scope_expansion(arg); }

// An argument as perf shows it in "(on ... with ARGS)": NAME= when named (a variable with fields
// is named after its last member), the expression, :TYPE.
std::string shown_argument(const tracing::ProbeArgument& arg) {
  std::string name = arg.name;
  if (name.empty() && !arg.fields.empty()) name = field_argument_name(arg);
  return (name.empty() ? "" : name + "=") + arg.expression + (arg.type.empty() ? "" : ":" + arg.type);
}

// The DWARF instances of def.function. A name DWARF does not have may be an alias in the
// symbol table (libc's malloc of __libc_malloc): then the function whose code starts at the
// symbol's address, as perf finds it.
std::vector<symbols::DwarfProbeSite> dwarf_sites(const symbols::ProbeDebugInfo& dwarf, const std::filesystem::path& file,
                                                 const tracing::ProbeDefinition& def, bool inlines) {
  std::vector<symbols::DwarfProbeSite> sites = dwarf.function_sites(def.function, inlines);
  if (!sites.empty() || def.function.find_first_of("*?[") != std::string::npos) return sites;
  Result<std::vector<symbols::FunctionProbePoint>> points = symbols::function_probe_points(file, def.function, 0);
  if (!points) return sites;
  for (const symbols::FunctionProbePoint& point : *points) {
    const std::string target = dwarf.function_at(point.address);
    if (target.empty()) continue;
    for (const symbols::DwarfProbeSite& site : dwarf.function_sites(target, false))
      if (site.entry == point.address) sites.push_back(site);
  }
  return sites;
}

// The uprobe argument of a variable argument at one site: NAME=FETCH[:TYPE]. Unnamed, it is
// named as perf names it: after its last member, else "VAR" or "VAR_TYPE".
Result<std::vector<std::string>> variable_arguments(const symbols::ProbeDebugInfo& dwarf, const symbols::DwarfProbeSite& site,
                                                    uint64_t address, const tracing::ProbeArgument& arg) {
  std::vector<std::string> out;
  auto add = [&](const std::string& name, const symbols::VariableFetch& value) {
    out.push_back(name + "=" + value.fetch + (value.type.empty() ? "" : ":" + value.type));
  };
  if (is_scope_expansion(arg)) {
    for (const std::string& variable : dwarf.scope_variables(site, address, arg.expression == "$vars")) {
      VPERF_TRY(symbols::VariableFetch value, dwarf.fetch(site, address, variable, {}, ""));
      add(variable, value);
    }
    return out;
  }
  VPERF_TRY(symbols::VariableFetch value, dwarf.fetch(site, address, arg.variable, arg.fields, arg.type));
  std::string name = arg.name;
  if (name.empty()) name = arg.fields.empty() ? arg.variable + (arg.type.empty() ? "" : "_" + arg.type) : field_argument_name(arg);
  add(name, value);
  return out;
}

struct PlannedSite {
  uint64_t file_offset = 0;            // a uprobe's place
  std::string symbol;                  // a kernel module's probe: the out-of-line function holding it,
  uint64_t symbol_offset = 0;          // ... and the offset from its entry (kprobes' MOD:FUNC+OFF)
  std::vector<std::string> arguments;  // uprobe_events' (kprobe_events') words
  std::string note;
  std::string event;  // the event's name when the point does not give one (a file's line: its function)
};

Result<std::string> kernel_argument(const tracing::ProbeArgument& arg);

// Whether the probes go into the kernel with DWARF: a module's (-m) or the kernel image's (-k).
bool kernel_dwarf(const ProbeRequest& request) { return request.executable.empty() && (!request.module.empty() || !request.vmlinux.empty()); }

// An argument that needs no DWARF, as the probe's kind takes it: a kernel module's as kprobes
// do (@user, @SYMBOL as written), a file's as uprobes do.
Result<std::string> plain_argument(const ProbeRequest& request, const tracing::ProbeArgument& arg, const ProbedSpot& spot) {
  return kernel_dwarf(request) ? kernel_argument(arg) : raw_argument(arg, spot);
}

// Where a probe at ELF address `address` of `file` goes: its file offset for a uprobe (nullopt
// outside every loaded segment). A kernel module has no segments: its probes go by symbol.
std::optional<uint64_t> probe_file_offset(const ProbeRequest& request, const std::vector<symbols::LoadSegment>& segments, uint64_t address) {
  if (kernel_dwarf(request)) return 0;
  return symbols::vaddr_to_file_offset(segments, address);
}

// perf's lazy match of a source line: a glob over the line with spaces and tabs left out of
// both ("if(*)*" matches "  if (r->in.flag) local += ...").
bool lazy_line_matches(std::string_view line, std::string_view pattern) {
  auto squeeze = [](std::string_view text) {
    std::string out;
    for (char c : text)
      if (c != ' ' && c != '\t' && c != '\r') out += c;
    return out;
  };
  return glob_match(squeeze(pattern), squeeze(line));
}

// The numbers of the lines of `source` that match a lazy pattern.
Result<std::vector<int>> lazy_lines(const std::string& source, std::string_view pattern) {
  Result<std::string> text = read_file(source);
  if (!text)
    return Error{"lazy pattern '" + std::string(pattern) + "' needs the source " + source + ", which cannot be read: " + text.error().message, 0,
                 "probe by line number (FUNC:LINE or FILE:LINE) where the source is not installed"};
  std::vector<int> lines;
  int number = 0;
  for (std::string_view line : split(*text, '\n')) {
    ++number;
    if (lazy_line_matches(line, pattern)) lines.push_back(number);
  }
  return lines;
}

// The probes of a source-line point: FUNC:RLN (lines relative to FUNC's declaration),
// SRC:ALN, FUNC;PATTERN (FUNC's own lines matching), SRC;PATTERN, each at every statement
// address of the line (perf probes them all), with variables fetched there.
Result<std::vector<PlannedSite>> plan_line_sites(const std::filesystem::path& file, const ProbeRequest& request,
                                                 const tracing::ProbeDefinition& def, symbols::ProbeDebugInfo* dwarf,
                                                 const std::string& missing) {
  if (dwarf == nullptr)
    return Error{"source lines need " + file.string() + "'s debuginfo, which is not installed", 0,
                 missing.empty() ? "rebuild it with -g, or probe the function" : "install its debug package (it provides " + missing + ")"};
  std::vector<symbols::LineProbe> found;
  std::string what;
  if (!def.function.empty()) {
    std::vector<symbols::DwarfProbeSite> sites = dwarf_sites(*dwarf, file, def, request.inlines);
    if (sites.empty())
      return Error{"no function " + def.function + " in the DWARF of " + file.string(), 0, "list the functions with: vperf probe -x " + file.string() + " -F"};
    for (const symbols::DwarfProbeSite& site : sites) {
      std::optional<symbols::SourceDeclaration> decl = dwarf->declaration(site);
      if (!decl || (!def.file.empty() && !decl->file.ends_with(def.file))) continue;
      std::vector<symbols::LineProbe> here;
      if (def.line) {
        here = dwarf->line_probes(decl->file, {decl->line + static_cast<int>(*def.line)}, nullptr, def.function);
      } else {
        VPERF_TRY(std::vector<int> lines, lazy_lines(decl->file, def.lazy_pattern));
        here = dwarf->line_probes(decl->file, lines, &site);
      }
      for (symbols::LineProbe& p : here)
        if (std::none_of(found.begin(), found.end(), [&](const symbols::LineProbe& f) { return f.address == p.address; })) found.push_back(std::move(p));
      if (def.line) break;  // relative lines count from the first definition, as perf
    }
    what = def.function + (def.line ? ":" + std::to_string(*def.line) : ";" + def.lazy_pattern);
  } else {
    std::vector<std::string> sources = dwarf->source_files(def.file);
    if (sources.empty())
      return Error{"no source file " + def.file + " in the DWARF of " + file.string(), 0, "give the file's name as the compiler saw it (see vperf probe -L FUNC)"};
    std::vector<int> lines;
    if (def.line) {
      lines.push_back(static_cast<int>(*def.line));
    } else {
      VPERF_TRY(lines, lazy_lines(sources.front(), def.lazy_pattern));
    }
    found = dwarf->line_probes(sources.front(), lines);
    what = def.file + (def.line ? ":" + std::to_string(*def.line) : ";" + def.lazy_pattern);
  }
  if (found.empty())
    return Error{"no code at " + what + " in " + file.string(), 0, "see which lines have code with: vperf probe -x " + file.string() + " -L " +
                                                                       (def.function.empty() ? def.file + ":1" : def.function)};
  VPERF_TRY(symbols::ElfFile elf, symbols::ElfFile::open(file));
  const std::vector<symbols::LoadSegment> segments = elf.load_segments();
  std::vector<PlannedSite> out;
  for (const symbols::LineProbe& probe : found) {
    std::optional<uint64_t> file_offset = probe_file_offset(request, segments, probe.address);
    if (!file_offset) return Error{what + " in " + file.string() + " is in no loaded segment"};
    PlannedSite planned;
    planned.file_offset = *file_offset;
    planned.symbol = probe.scope.owner;
    planned.symbol_offset = probe.address - probe.scope.owner_entry;
    if (!def.function.empty()) planned.event = def.function + (def.line ? "_L" + std::to_string(*def.line) : "");
    else planned.event = probe.scope.function;
    for (const tracing::ProbeArgument& arg : def.arguments) {
      if (!needs_dwarf(arg)) {
        VPERF_TRY(std::string raw, plain_argument(request, arg, ProbedSpot{&elf, probe.address, *file_offset}));
        planned.arguments.push_back(std::move(raw));
        continue;
      }
      VPERF_TRY(std::vector<std::string> fetched, variable_arguments(*dwarf, probe.scope, probe.address, arg));
      for (std::string& word : fetched) planned.arguments.push_back(std::move(word));
    }
    out.push_back(std::move(planned));
  }
  return out;
}

// Where the probes of one function definition go and what each fetches: every DWARF instance
// of the function when the file has debuginfo, else the symbol table's addresses.
Result<std::vector<PlannedSite>> plan_sites(const std::filesystem::path& file, const ProbeRequest& request,
                                            const tracing::ProbeDefinition& def, DebugInfoSource& debug) {
  const bool variables = std::any_of(def.arguments.begin(), def.arguments.end(), needs_dwarf);
  if (variables && def.return_probe)
    for (const tracing::ProbeArgument& arg : def.arguments)
      if (needs_dwarf(arg))
        return Error{"argument '" + arg.expression + "' is a variable, and a return probe fires after the function's variables are gone", 0,
                     "fetch $retval (or +0($retval):string) on a %return probe, variables on the entry"};
  symbols::ProbeDebugInfo* dwarf = def.address ? nullptr : debug_info(debug, file, request.debug_dirs, kernel_dwarf(request));
  if (!def.address && (def.line || !def.lazy_pattern.empty() || def.function.empty())) return plan_line_sites(file, request, def, dwarf, debug.missing);
  std::vector<symbols::DwarfProbeSite> sites;
  if (dwarf != nullptr) sites = dwarf_sites(*dwarf, file, def, request.inlines);
  if (variables && sites.empty()) {
    if (dwarf == nullptr)
      return Error{"argument '" + def.arguments.front().expression + "' needs " + file.string() + "'s debuginfo, which is not installed", 0,
                   debug.missing.empty() ? "rebuild it with -g, or fetch by register (%di, +8(%si):s64)"
                                         : "install its debug package (it provides " + debug.missing + "), or fetch by register (%di, +8(%si):s64)"};
    if (!def.address)
      return Error{"no function " + def.function + " in the DWARF of " + file.string(), 0,
                   "list the functions with: vperf probe -x " + file.string() + " -F"};
  }
  std::vector<PlannedSite> out;
  if (sites.empty() && kernel_dwarf(request)) {  // a kernel function by name: the kernel finds [MOD:]FUNC
    if (def.address) return Error{"a kernel module's probe goes by function, not address", 0, "give FUNC[+OFFSET]"};
    PlannedSite site;
    site.symbol = def.function;
    site.symbol_offset = def.offset.value_or(0);
    for (const tracing::ProbeArgument& arg : def.arguments) {
      VPERF_TRY(std::string word, kernel_argument(arg));
      site.arguments.push_back(std::move(word));
    }
    out.push_back(std::move(site));
    return out;
  }
  if (sites.empty()) {  // the symbol table: no DWARF, or a function DWARF does not describe (assembly)
    std::vector<symbols::FunctionProbePoint> points;
    Result<symbols::ElfFile> elf = symbols::ElfFile::open(file);
    if (def.address) {
      points.push_back(symbols::FunctionProbePoint{*def.address, *def.address});
    } else {
      VPERF_TRY(points, symbols::function_probe_points(file, def.function, def.offset.value_or(0),
                                                       elf ? instruction_decoder(*elf) : symbols::InstructionDecoder{}));
    }
    for (const symbols::FunctionProbePoint& point : points) {
      PlannedSite site;
      site.file_offset = point.file_offset;
      for (const tracing::ProbeArgument& arg : def.arguments) {
        VPERF_TRY(std::string raw, raw_argument(arg, ProbedSpot{elf ? &*elf : nullptr, point.address, point.file_offset}));
        site.arguments.push_back(std::move(raw));
      }
      out.push_back(std::move(site));
    }
    return out;
  }
  VPERF_TRY(symbols::ElfFile elf, symbols::ElfFile::open(file));
  const std::vector<symbols::LoadSegment> segments = elf.load_segments();
  for (const symbols::DwarfProbeSite& site : sites) {
    if (def.return_probe && site.inlined) continue;  // an inlined copy never returns: perf skips it too
    if (def.offset) VPERF_TRY(check_site_offset(elf, def.function, site.entry, site.high > site.entry ? site.high - site.entry : 0, *def.offset));
    uint64_t address = site.entry + def.offset.value_or(0);
    PlannedSite planned;
    // Unoptimised code keeps its parameters in registers only until the prologue has stored
    // them in the frame, where DWARF says they are: such probes go after the prologue.
    if (variables && !def.offset && !def.return_probe && !dwarf->optimized(site) && dwarf->after_prologue(site) != site.entry) {
      planned.note = "Target program is compiled without optimization. Skipping prologue.\nProbe on address " + hex(site.entry) +
                     " to force probing at the function entry.";
      address = dwarf->after_prologue(site);
    }
    std::optional<uint64_t> file_offset = probe_file_offset(request, segments, address);
    if (!file_offset) return Error{def.function + " in " + file.string() + " is in no loaded segment"};
    planned.file_offset = *file_offset;
    planned.symbol = site.owner;
    planned.symbol_offset = address - site.owner_entry;
    for (const tracing::ProbeArgument& arg : def.arguments) {
      if (!needs_dwarf(arg)) {
        VPERF_TRY(std::string raw, plain_argument(request, arg, ProbedSpot{&elf, address, *file_offset}));
        planned.arguments.push_back(std::move(raw));
        continue;
      }
      VPERF_TRY(std::vector<std::string> fetched, variable_arguments(*dwarf, site, address, arg));
      for (std::string& word : fetched) planned.arguments.push_back(std::move(word));
    }
    out.push_back(std::move(planned));
  }
  if (out.empty()) return Error{"every instance of " + def.function + " in " + file.string() + " is inlined: none returns", 0,
                                "probe its entry, or the %return of the function it is inlined into"};
  return out;
}
// A kernel probe's argument: as written, with @user turned into the kernel's user-memory fetch
// ("+0(%si)@user" is "+u0(%si)").
Result<std::string> kernel_argument(const tracing::ProbeArgument& arg) {
  if (needs_dwarf(arg))
    return Error{"argument '" + arg.expression + "' is a variable: a kernel function's variables need the kernel's debuginfo (a vmlinux with DWARF)",
                 0, "give it with -k VMLINUX, or fetch by register: dfd=%di filename=+0(%si):string (x86-64 passes arguments in di, si, dx, cx, r8, r9)"};
  std::string expression = arg.expression;
  if (arg.user_access) {
    if ((expression.starts_with('+') || expression.starts_with('-')) && expression.find('(') != std::string::npos)
      expression.insert(1, "u");
    else
      return Error{"argument '" + arg.expression + "@user' is not a memory fetch", 0, "mark a fetch as user memory: +0(%si)@user:string"};
  }
  std::string text = arg.name.empty() ? expression : arg.name + "=" + expression;
  if (!arg.type.empty()) text += ":" + arg.type;
  return text;
}

// A kprobe's FUNC+`offset` inside FUNC, whose size is where the next symbol of `kallsyms`
// starts. Only the size: the running kernel's text is not readable here (only /proc/kcore
// holds it), and the kernel proves the boundary itself (x86's can_probe decodes FUNC from its
// start and refuses an address inside an instruction with EILSEQ; arm64 takes only 4-byte
// aligned ones). A FUNC+OFF past FUNC's end would be on the next function, which it also allows.
Result<void> check_kernel_offset(const std::filesystem::path& kallsyms, const std::string& function, uint64_t offset) {
  if (offset == 0) return {};
  Result<symbols::Kallsyms> symbols = symbols::Kallsyms::load(kallsyms);
  if (!symbols)
    return Error{function + "+" + std::to_string(offset) + " cannot be checked against " + function + "'s size: " + symbols.error().message, 0,
                 symbols.error().hint.empty() ? "probe the function's entry (" + function + ")" : symbols.error().hint};
  const symbols::Symbol* symbol = symbols->kernel().find_by_name(function);
  for (auto module = symbols->modules().begin(); symbol == nullptr && module != symbols->modules().end(); ++module)
    symbol = module->second.find_by_name(function);
  if (symbol == nullptr)
    return Error{"no kernel function " + function + " in " + kallsyms.string(), 0, "list the kernel's functions with: vperf probe -F"};
  if (offset < symbol->size()) return {};
  return symbols::check_function_offset(function, symbol->size(), offset, std::vector<uint64_t>{});
}

// Probes on kernel functions: FUNC[+OFF] and FUNC%return by symbol, group "probe".
Result<std::vector<PlannedProbe>> plan_kernel_probes(const ProbeRequest& request, std::vector<std::string>& taken) {
  std::vector<PlannedProbe> out;
  for (const std::string& text : request.definitions) {
    if (is_sdt_event(text))
      return Error{"'" + text + "' is a USDT marker, which lives in a program or library", 0, "give the file: vperf probe -x FILE " + text};
    VPERF_TRY(tracing::ProbeDefinition def, tracing::parse_probe_definition(text));
    if (def.address || def.function.empty() || def.line || !def.lazy_pattern.empty() || !def.file.empty())
      return Error{"probe definition '" + text + "': kernel addresses, source lines and lazy patterns need the kernel's debuginfo (a vmlinux with DWARF)",
                   0, "give it with -k VMLINUX, or probe the kernel function by name: FUNC, FUNC+OFFSET or FUNC%return"};
    if (def.function.find_first_of("*?[") != std::string::npos)
      return Error{"kernel function globs ('" + def.function + "') are not in vperf probe yet", 0, "name one function per definition (-a FUNC -a FUNC2)"};
    if (def.offset) VPERF_TRY(check_kernel_offset(request.kallsyms, def.function, *def.offset));
    std::vector<std::string> arguments, shown;
    for (const tracing::ProbeArgument& arg : def.arguments) {
      VPERF_TRY(std::string word, kernel_argument(arg));
      arguments.push_back(std::move(word));
      shown.push_back(shown_argument(arg));
    }
    const std::string group = !request.group.empty() ? request.group : def.group.empty() ? "probe" : def.group;
    const std::string base_name = !def.event.empty() ? def.event : def.function + (def.return_probe ? "__return" : "");
    if (!tracing::is_probe_event_name(base_name))
      return Error{"probe definition '" + text + "': '" + base_name + "' is not a valid event name", 0, "name the event: NAME=" + text};
    if (!request.force && is_taken(taken, group, base_name)) return taken_error(group, base_name, ", or add another with -f");
    const std::string name = free_name(group, base_name, taken);
    taken.push_back(group + "/" + name);
    PlannedProbe p;
    p.kernel = true;
    p.event.group = group;
    p.event.event = name;
    p.event.is_return = def.return_probe;
    p.event.arguments = arguments;
    p.definition = tracing::kprobe_definition(tracing::KprobeEvent{group, name, def.function, def.offset.value_or(0), def.return_probe, arguments});
    p.point = def.function + (def.offset ? "+" + std::to_string(*def.offset) : "") + (def.return_probe ? "%return" : "");
    p.shown_arguments = std::move(shown);
    out.push_back(std::move(p));
  }
  return out;
}

// The running kernel's release (uname -r), which names its module and debuginfo directories.
std::string running_kernel_release() {
  struct utsname uts;
  return ::uname(&uts) == 0 ? uts.release : "";
}

// -m's module: a .ko path as given, or a module name ("vperf_probe_module", '-' and '_' alike)
// looked up under /lib/modules/RELEASE, as perf does.
Result<std::filesystem::path> module_file(const std::filesystem::path& module) {
  std::error_code ec;
  if (module.string().find('/') != std::string::npos || std::filesystem::is_regular_file(module, ec)) return module;
  const std::filesystem::path root = std::filesystem::path("/lib/modules") / running_kernel_release();
  auto normal = [](std::string name) {
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
  };
  const std::string wanted = normal(module.string()) + ".ko";
  for (auto it = std::filesystem::recursive_directory_iterator(root, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && normal(it->path().filename().string()) == wanted) return it->path();
  return Error{"no kernel module " + module.string() + " under " + root.string(), ENOENT, "give the module's .ko file: -m PATH/NAME.ko"};
}

// The -x file of a command that reads it (-V, -L, -F, --list-sdt), by its real path.
// The file a request reads, as given: -x's, else -m's module file, else -k's vmlinux (empty when
// none is given), with the option that named it.
struct ProbedTarget {
  std::filesystem::path given;
  std::string option;  // "-x", "-m", "-k"
};

Result<ProbedTarget> probed_target(const ProbeRequest& request) {
  if (!request.executable.empty()) return ProbedTarget{request.executable, "-x"};
  if (!request.module.empty()) {
    VPERF_TRY(std::filesystem::path file, module_file(request.module));
    return ProbedTarget{file, "-m"};
  }
  return ProbedTarget{request.vmlinux, request.vmlinux.empty() ? "-x" : "-k"};
}

Result<std::filesystem::path> probed_file(const ProbeRequest& request, std::string_view option, std::string_view hint) {
  VPERF_TRY(const ProbedTarget target, probed_target(request));
  std::error_code ec;
  std::filesystem::path file = target.given.empty() ? std::filesystem::path() : std::filesystem::canonical(target.given, ec);
  if (target.given.empty() || ec)
    return Error{std::string(option) + " needs the file to read: " + target.option + " " + target.given.string() + (ec ? ": " + ec.message() : ""),
                 0, std::string(hint)};
  // What is wrong with a file that is no ELF file, said before its debuginfo is looked for (a
  // directory has none, but "rebuild it with -g" would not help).
  VPERF_TRY(symbols::open_probe_target(file));
  return file;
}

// The running kernel's vmlinux with DWARF, from perf's places for it (vmlinux_path__init in
// perf 6.1, in its order), or an Error in perf's words naming where it looked: a kernel probe
// on a source line or with variables, and -L/-V on a kernel function, need it.
Result<std::filesystem::path> running_kernel_debuginfo() {
  const std::string release = running_kernel_release();
  const std::vector<std::filesystem::path> places = {
      "vmlinux", "/boot/vmlinux", "/boot/vmlinux-" + release, "/usr/lib/debug/boot/vmlinux-" + release,
      "/lib/modules/" + release + "/build/vmlinux", "/usr/lib/debug/lib/modules/" + release + "/vmlinux",
      "/usr/lib/debug/boot/vmlinux-" + release + ".debug"};
  std::string looked;
  for (const std::filesystem::path& place : places) {
    if (Result<symbols::ElfFile> elf = symbols::ElfFile::open(place); elf && elf->has_debug_info()) return place;
    looked += (looked.empty() ? "" : ", ") + place.string();
  }
  return Error{std::string(kNoKernelPathMessage) + ": no vmlinux with DWARF for kernel " + release + " in " + looked, 0,
               "install the kernel's debug package (Debian: linux-image-" + release + "-dbg), or give one with -k VMLINUX"};
}

// Whether a kernel probe definition needs the kernel's DWARF: a source line, a file, a lazy
// pattern or an address to place it, or a variable to fetch.
bool kernel_definition_needs_dwarf(const std::string& text) {
  Result<tracing::ProbeDefinition> def = tracing::parse_probe_definition(text);
  if (!def) return false;  // planning says what is wrong with it
  return def->address || def->line || !def->lazy_pattern.empty() || !def->file.empty() ||
         std::any_of(def->arguments.begin(), def->arguments.end(), needs_dwarf);
}

// `request` with the running kernel's vmlinux as its -k, when it probes the kernel image, gave
// no -k, and `needed` says DWARF is needed: as perf finds it.
Result<ProbeRequest> with_running_kernel(const ProbeRequest& request, bool needed) {
  if (!needed || !request.executable.empty() || !request.module.empty() || !request.vmlinux.empty()) return request;
  ProbeRequest out = request;
  VPERF_TRY(out.vmlinux, running_kernel_debuginfo());
  return out;
}

// A kernel module's name as the kernel knows it: .modinfo's "name=", else the file's stem with
// '-' read as '_' (the kernel's own rule for module names).
Result<std::string> kernel_module_name(const std::filesystem::path& ko) {
  VPERF_TRY(symbols::ElfFile elf, symbols::ElfFile::open(ko));
  if (elf.type() != ET_REL) return Error{ko.string() + " is not a kernel module (a relocatable .ko)", 0, "give the module's .ko file"};
  if (std::optional<symbols::ElfFile::Section> info = elf.section(".modinfo"))
    if (Elf_Data* data = elf_getdata(info->scn, nullptr); data != nullptr && data->d_buf != nullptr)
      for (std::string_view entry : split(std::string_view(static_cast<const char*>(data->d_buf), data->d_size), '\0'))
        if (entry.starts_with("name=") && tracing::is_probe_event_name(entry.substr(5))) return std::string(entry.substr(5));
  std::string name = ko.filename().string();
  name = name.substr(0, name.find('.'));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

Result<std::vector<PlannedProbe>> plan_probes(const ProbeRequest& given, const std::vector<std::string>& existing) {
  VPERF_TRY(const ProbeRequest request,
            with_running_kernel(given, std::any_of(given.definitions.begin(), given.definitions.end(), kernel_definition_needs_dwarf)));
  if (request.executable.empty() && !kernel_dwarf(request)) {
    std::vector<std::string> taken;
    for (const std::string& line : existing) taken.push_back(tracing::uprobe_name(line));
    return plan_kernel_probes(request, taken);
  }
  const bool kernel = kernel_dwarf(request);
  VPERF_TRY(const ProbedTarget target, probed_target(request));
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical(target.given, ec);
  if (ec)
    return Error{target.option + " " + target.given.string() + ": " + ec.message(), ec.value(),
                 !kernel ? "give the path of an executable or library" : "give the module's .ko file, or the kernel's vmlinux with DWARF (its DWARF places the probes)"};
  VPERF_TRY(symbols::open_probe_target(file));
  // A module's probes are MOD:FUNC+OFF; the kernel image's FUNC+OFF.
  VPERF_TRY(const std::string module_prefix, kernel && !request.module.empty() ? kernel_module_name(file) : Result<std::string>(std::string()));
  std::vector<std::string> taken;
  for (const std::string& line : existing) taken.push_back(tracing::uprobe_name(line));
  DebugInfoSource debug;

  std::vector<PlannedProbe> out;
  for (const std::string& text : request.definitions) {
    if (is_sdt_event(text)) {
      VPERF_TRY(PlannedProbe p, plan_sdt_probe(file, text));
      if (!request.group.empty()) {
        p.event.group = request.group;
        p.definition = tracing::uprobe_definition(p.event);
      }
      if (is_taken(taken, p.event.group, p.event.event)) return taken_error(p.event.group, p.event.event, "");
      taken.push_back(p.event.group + "/" + p.event.event);
      out.push_back(std::move(p));
      continue;
    }
    VPERF_TRY(tracing::ProbeDefinition def, tracing::parse_probe_definition(text));
    VPERF_TRY(std::vector<PlannedSite> sites, plan_sites(file, request, def, debug));
    if (sites.size() > request.max_probes)
      return Error{"'" + text + "' gives " + std::to_string(sites.size()) + " probe points, more than --max-probes (" + std::to_string(request.max_probes) + ")",
                   0, "raise --max-probes, or narrow the point (FUNC@SRC, --no-inlines)"};
    const std::string group = !request.group.empty() ? request.group
                              : !def.group.empty()    ? def.group
                              : kernel                ? "probe"
                                                      : tracing::default_uprobe_group(file);
    std::vector<std::string> shown;
    for (const tracing::ProbeArgument& arg : def.arguments) shown.push_back(shown_argument(arg));
    // The point as written, what perf's "(on ...)" shows.
    std::string point = text.substr(0, text.find_first_of(" \t\n\r\v\f"));
    if (const size_t eq = point.find('='); eq != std::string::npos && point.find_first_of(";@+%") > eq) point.erase(0, eq + 1);
    // Every address of one definition shares its event where the kernel appends probes to an
    // event (perf 6.1 does so); elsewhere each takes the next free number.
    std::map<std::string, std::string> named;  // base name -> the name this definition gave it
    for (PlannedSite& site : sites) {
      std::string base_name = def.event;
      if (base_name.empty())
        base_name = def.address ? "abs_" + hex(*def.address).substr(2)
                  : !site.event.empty() ? site.event
                                        : def.function + (def.return_probe ? "__return" : "");
      if (!tracing::is_probe_event_name(base_name))
        return Error{"probe definition '" + text + "': '" + base_name + "' is not a valid event name", 0, "name the event: NAME=" + text};
      std::string name;
      if (auto it = named.find(base_name); it != named.end() && request.append) {
        name = it->second;
      } else {
        if (!named.count(base_name) && !request.force && is_taken(taken, group, base_name))
          return taken_error(group, base_name, ", or add another with -f");
        name = free_name(group, base_name, taken);
        taken.push_back(group + "/" + name);
        named.emplace(base_name, name);
      }
      PlannedProbe p;
      if (kernel) {
        p.kernel = true;
        p.event.group = group;
        p.event.event = name;
        p.event.is_return = def.return_probe;
        p.event.arguments = site.arguments;
        p.definition = tracing::kprobe_definition(
            tracing::KprobeEvent{group, name, (module_prefix.empty() ? "" : module_prefix + ":") + site.symbol, site.symbol_offset, def.return_probe,
                                 std::move(site.arguments)});
      } else {
        p.event = tracing::UprobeEvent{group, name, file, site.file_offset, std::nullopt, def.return_probe, std::move(site.arguments)};
        p.definition = tracing::uprobe_definition(p.event);
      }
      p.point = point;
      p.shown_arguments = shown;
      p.note = std::move(site.note);
      out.push_back(std::move(p));
    }
  }
  return out;
}

Result<std::vector<std::string>> probe_point_variables(const ProbeRequest& given, const std::string& definition, bool externs, bool ranges) {
  VPERF_TRY(const ProbeRequest request, with_running_kernel(given, true));
  VPERF_TRY(const std::filesystem::path file, probed_file(request, "-V", "give -x FILE, -m MODULE.ko or -k VMLINUX"));
  VPERF_TRY(tracing::ProbeDefinition def, tracing::parse_probe_definition(definition));
  if (def.address || def.function.empty() || def.line || !def.lazy_pattern.empty())
    return Error{"-V takes a function point, FUNC[+OFFSET] ('" + definition + "' is not one)", 0, "name the function: -V FUNC"};
  DebugInfoSource debug;
  symbols::ProbeDebugInfo* dwarf = debug_info(debug, file, request.debug_dirs, kernel_dwarf(request));
  if (dwarf == nullptr)
    return Error{file.string() + " has no debuginfo: its variables are unknown", 0,
                 debug.missing.empty() ? "rebuild it with -g" : "install its debug package (it provides " + debug.missing + ")"};
  const std::vector<symbols::DwarfProbeSite> sites = dwarf_sites(*dwarf, file, def, request.inlines);
  if (sites.empty())
    return Error{"no function " + def.function + " in the DWARF of " + file.string(), 0, "list the functions with: vperf probe -x " + file.string() + " -F"};
  VPERF_TRY(const symbols::ElfFile elf, symbols::ElfFile::open(file));
  std::vector<std::string> out{"Available variables at " + definition.substr(0, definition.find(' '))};
  for (const symbols::DwarfProbeSite& site : sites) {
    if (def.return_probe && site.inlined) continue;
    if (def.offset) VPERF_TRY(check_site_offset(elf, def.function, site.entry, site.high > site.entry ? site.high - site.entry : 0, *def.offset));
    const uint64_t address = site.entry + def.offset.value_or(0);
    out.push_back("\t@<" + site.owner + "+" + std::to_string(address - site.owner_entry) + ">");
    std::vector<std::string> variables = dwarf->available_variables(site, address, externs, ranges);
    if (variables.empty()) out.push_back("\t\t(No matched variables)");
    for (const std::string& variable : variables) out.push_back("\t\t" + variable);
  }
  return out;
}

Result<std::vector<std::string>> probe_source_listing(const ProbeRequest& given, const std::string& range_text) {
  VPERF_TRY(const ProbeRequest request, with_running_kernel(given, true));
  VPERF_TRY(const std::filesystem::path file, probed_file(request, "-L", "give -x FILE, -m MODULE.ko or -k VMLINUX"));
  VPERF_TRY(tracing::LineRange range, tracing::parse_line_range(range_text));
  DebugInfoSource debug;
  symbols::ProbeDebugInfo* dwarf = debug_info(debug, file, request.debug_dirs, kernel_dwarf(request));
  if (dwarf == nullptr)
    return Error{file.string() + " has no debuginfo: its source lines are unknown", 0,
                 debug.missing.empty() ? "rebuild it with -g" : "install its debug package (it provides " + debug.missing + ")"};
  std::string source, header;
  int offset = 0;
  int64_t first = static_cast<int64_t>(range.start);
  std::vector<int> numbered;
  if (!range.function.empty()) {
    tracing::ProbeDefinition def;
    def.function = range.function;
    std::vector<symbols::DwarfProbeSite> sites = dwarf_sites(*dwarf, file, def, true);
    std::optional<symbols::SourceDeclaration> decl;
    const symbols::DwarfProbeSite* site = nullptr;
    for (const symbols::DwarfProbeSite& s : sites) {
      decl = dwarf->declaration(s);
      if (decl && (range.file.empty() || decl->file.ends_with(range.file))) {
        site = &s;
        break;
      }
    }
    if (site == nullptr)
      return Error{"no function " + range.function + " in the DWARF of " + file.string(), 0, "list the functions with: vperf probe -x " + file.string() + " -F"};
    source = decl->file;
    offset = decl->line;
    first = int64_t{offset} + static_cast<int64_t>(range.start);
    header = "<" + range.function + "@" + source + ":" + std::to_string(range.start) + ">";
    // Every instance's own lines: an out-of-line copy and each place it was inlined.
    for (const symbols::DwarfProbeSite& s : sites)
      for (int line : dwarf->listing_lines(source, &s)) numbered.push_back(line);
  } else {
    std::vector<std::string> sources = dwarf->source_files(range.file);
    if (sources.empty())
      return Error{"no source file " + range.file + " in the DWARF of " + file.string(), 0, "give the file's name as the compiler saw it"};
    source = sources.front();
    header = "<" + source + ":" + std::to_string(range.start) + ">";
    numbered = dwarf->listing_lines(source);
  }
  std::sort(numbered.begin(), numbered.end());
  numbered.erase(std::unique(numbered.begin(), numbered.end()), numbered.end());
  Result<std::string> text = read_file(source);
  if (!text) return Error{"cannot read the source " + source + ": " + text.error().message, 0, "-L shows the source as DWARF names it; install or rebuild it there"};
  std::vector<std::string_view> lines = split(*text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  // perf's layout: a line with code gets its number (relative to the function's declaration
  // for a function), the others are indented to match; an open range ends two lines after its
  // last numbered line, or at the end of the file.
  // In 64 bits: a relative range's end (up to 2^31 - 1) plus the declaration's line passes an int.
  const int64_t range_end = range.end ? int64_t{offset} + static_cast<int64_t>(*range.end) : INT64_MAX;
  const int64_t last_numbered = [&] {
    int64_t last = first - 1;
    for (int line : numbered)
      if (line >= first && line <= range_end) last = line;
    return last;
  }();
  const int64_t last = range.end ? range_end : last_numbered + 2 + 1;
  // A range from past the source's end shows nothing: an Error, as perf's "Specified source line
  // is not found". One that starts inside and ends past it shows the lines there are, as perf.
  if (first > static_cast<int64_t>(lines.size()))
    return Error{"line range '" + range_text + "' starts at line " + std::to_string(first) + " of " + source + ", which has " +
                     std::to_string(lines.size()) + " lines",
                 0, "start the range inside the file" + std::string(range.function.empty() ? "" : " (relative lines count from the function's declaration, line " + std::to_string(offset) + ")")};
  std::vector<std::string> out{header};
  for (int64_t line = std::max<int64_t>(first, 1); line <= last && line <= static_cast<int64_t>(lines.size()); ++line) {
    const std::string_view content = lines[line - 1];
    if (std::binary_search(numbered.begin(), numbered.end(), line) && line <= last_numbered) {
      std::string number = std::to_string(line - offset);
      out.push_back(std::string(number.size() < 7 ? 7 - number.size() : 0, ' ') + number + "  " + std::string(content));
    } else {
      out.push_back("         " + std::string(content));
    }
  }
  return out;
}

Result<std::vector<std::string>> list_sdt_markers(const ProbeRequest& request, bool details) {
  VPERF_TRY(const std::filesystem::path file, probed_file(request, "--list-sdt", "give -x FILE, an executable or library built with <sys/sdt.h> markers"));
  VPERF_TRY(std::vector<symbols::SdtMarker> markers, symbols::read_sdt_markers(file));
  std::vector<std::string> out;
  for (const symbols::SdtMarker& m : markers) {
    std::string line = "  sdt_" + m.provider + ":" + m.name;
    if (line.size() < 52) line.resize(52, ' ');
    line += " [SDT event]";
    if (details)
      line += "  at " + (m.file_offset ? hex(*m.file_offset) : std::string("?")) +
              (m.semaphore_offset ? ", semaphore " + hex(*m.semaphore_offset) : std::string()) + (m.arguments.empty() ? "" : ", args " + m.arguments);
    out.push_back(std::move(line));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// perf probe -F without a file: the running kernel's and its loaded modules' functions,
// /proc/kallsyms' text and weak symbols, once per symbol (two static functions of one name are
// two lines, as perf lists them, where kallsyms shows addresses), sorted. perf also lists a
// module's data objects when it finds the module's file; no probe can take those as a function.
Result<std::vector<std::string>> kernel_functions(const NameFilter& filter, const std::filesystem::path& kallsyms) {
  VPERF_TRY(std::string text, read_file(kallsyms));
  std::set<std::pair<std::string_view, std::string_view>> seen;  // (address, name)
  std::vector<std::string> out;
  for (std::string_view line : split(text, '\n')) {
    // "ADDRESS TYPE NAME", and for a module's symbol "\t[module]" after it: a loaded module's
    // functions are probe points too (perf lists them). BPF programs and ftrace trampolines
    // ("[bpf]", "[__builtin__ftrace]") are not.
    if (const size_t tab = line.find('\t'); tab != std::string_view::npos) {
      const std::string_view module = line.substr(tab + 1);
      if (module == "[bpf]" || module.starts_with("[__builtin")) continue;
      line = line.substr(0, tab);
    }
    const std::vector<std::string_view> fields = split(line, ' ');
    if (fields.size() != 3 || fields[1].size() != 1) continue;
    const char type = static_cast<char>(std::toupper(static_cast<unsigned char>(fields[1][0])));
    if ((type != 'T' && type != 'W') || !seen.emplace(fields[0], fields[2]).second) continue;
    if (filter.matches(fields[2])) out.emplace_back(fields[2]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<std::vector<std::string>> probe_functions(const ProbeRequest& request, const std::string& filter_text) {
  VPERF_TRY(NameFilter filter, NameFilter::parse(filter_text));
  if (request.executable.empty() && request.module.empty() && request.vmlinux.empty()) return kernel_functions(filter, "/proc/kallsyms");
  VPERF_TRY(const std::filesystem::path file, probed_file(request, "-F", "give -x FILE"));
  VPERF_TRY(symbols::ElfFile elf, symbols::ElfFile::open(symbol_file(file, request.debug_dirs)));
  symbols::SymbolNames plt_names;
  std::vector<symbols::SymbolSource> all = elf.function_symbols();
  for (symbols::SymbolSource& plt : elf.plt_symbols(plt_names)) all.push_back(plt);
  // Every name a probe can take, aliases included (libc's access and __access are one
  // function, and users probe either); each name once.
  std::vector<std::string> out;
  for (const symbols::SymbolSource& symbol : all) {
    std::string name = symbols::demangle(symbol.name);
    if (filter.matches(name)) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// What vperf probe added, to tell later whether a probe's file was replaced: one line per
// probe, "GROUP/EVENT DEVICE INODE", in the user's cache (probes do not outlive a boot, and a
// line for a name added again is replaced).
constexpr std::string_view kLedgerFile = "uprobes";

std::map<std::string, std::string> read_ledger() {
  std::map<std::string, std::string> out;
  std::optional<PrivateDirectory> directory = probes_cache_directory(CreateMissing::no);
  if (!directory) return out;
  Result<std::string> text = directory->read(std::string(kLedgerFile));
  if (!text) return out;
  for (std::string_view line : split(*text, '\n'))
    if (const size_t space = line.find(' '); space != std::string_view::npos) out[std::string(line.substr(0, space))] = std::string(line.substr(space + 1));
  return out;
}

std::optional<std::string> file_identity(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino);
}

// Records the files of `probes` as they are now; lines of probes no longer in `current`
// (uprobe_events' names) go. Best effort: without a cache directory nothing is recorded, and
// -l can then only tell a file that is gone.
void record_probe_files(const std::vector<PlannedProbe>& probes, const std::vector<std::string>& current) {
  std::optional<PrivateDirectory> directory = probes_cache_directory(CreateMissing::yes);
  if (!directory) return;
  std::map<std::string, std::string> ledger = read_ledger();
  std::erase_if(ledger, [&](const auto& entry) { return std::find(current.begin(), current.end(), entry.first) == current.end(); });
  for (const PlannedProbe& p : probes)
    if (std::optional<std::string> identity = file_identity(p.event.file)) ledger[p.event.group + "/" + p.event.event] = *identity;
  std::string text;
  for (const auto& [name, identity] : ledger) text += name + " " + identity + "\n";
  (void)directory->replace(std::string(kLedgerFile), text);
}

// perf's synthesize_perf_probe_point: a file name longer than 30 bytes is cut to its last 30,
// from the first '/' in them ("/work/main/src/workloads/spin.cpp" -> "main/src/workloads/spin.cpp").
std::string shortened_source_name(const std::string& file) {
  constexpr size_t kKept = 30;
  if (file.size() <= kKept) return file;
  const std::string tail = file.substr(file.size() - kKept);
  const size_t slash = tail.find('/');
  return slash == std::string::npos ? tail : tail.substr(slash + 1);
}

// perf -l's point for a probe: from DWARF when the file has it, else from the symbol table.
std::string point_name(const tracing::UprobeEvent& event, const std::vector<std::filesystem::path>& debug_dirs,
                       std::map<std::string, DebugInfoSource>& debug) {
  Result<symbols::ElfFile> elf = symbols::ElfFile::open(event.file);
  if (!elf) return hex(event.file_offset);
  std::optional<uint64_t> address = symbols::file_offset_to_vaddr(elf->load_segments(), event.file_offset);
  if (!address) return hex(event.file_offset);
  const std::string suffix = event.is_return ? "%return" : "";
  if (symbols::ProbeDebugInfo* dwarf = debug_info(debug[event.file.string()], event.file, debug_dirs))
    if (std::optional<symbols::ProbeDebugInfo::PointName> point = dwarf->point_at(*address))
      return point->function + (point->offset ? "+" + std::to_string(point->offset) : point->relative_line ? ":" + std::to_string(point->relative_line) : "") +
             suffix + (point->shown_file.empty() ? "" : "@" + shortened_source_name(point->shown_file));
  Result<symbols::ElfFile> symbols_elf = symbols::ElfFile::open(symbol_file(event.file, debug_dirs));
  if (symbols_elf) {
    const symbols::SymbolTable table = symbols::SymbolTable::build(symbols_elf->function_symbols(), symbols::SizeInference::Elf);
    if (const symbols::Symbol* symbol = table.find(*address)) {
      const uint64_t offset = *address - symbol->start;
      return symbols::demangle(symbol->name) + (offset ? "+" + std::to_string(offset) : "") + suffix;
    }
  }
  return hex(*address) + suffix;
}

Result<void> add_probe(const tracing::Tracefs& tracefs, const PlannedProbe& probe) {
  return probe.kernel ? tracing::add_kprobe(tracefs, probe.definition) : tracing::add_uprobe(tracefs, probe.definition);
}

Result<void> remove_probe(const tracing::Tracefs& tracefs, const PlannedProbe& probe) {
  return probe.kernel ? tracing::remove_kprobe(tracefs, probe.event.group, probe.event.event)
                      : tracing::remove_uprobe(tracefs, probe.event.group, probe.event.event);
}

// What a refused write of `probe` means, said for vperf probe's user: the kernel's own text
// ("File exists") names neither the cause nor the way out.
Error refused_probe_error(const PlannedProbe& probe, const Error& refused) {
  const std::string name = probe.event.group + ":" + probe.event.event;
  if (refused.errno_value == EEXIST)
    return Error{"event " + name + " already exists: a probe of that name was added after vperf probe looked (another vperf or perf probe running at the same time?)",
                 EEXIST, "pick another name with EVENT=" + probe.point + " (e.g. " + name + "_2=" + probe.point +
                             "), or delete the other first: vperf probe -d " + name};
  if (refused.errno_value == EILSEQ && probe.kernel)
    return Error{"the kernel refused " + probe.point + ": it is not the first byte of an instruction (" + refused.message + ")", EILSEQ,
                 "give the offset of an instruction's first byte (objdump -d vmlinux, or perf annotate, shows them)"};
  return refused;
}

}  // namespace

Result<void> add_probes(const tracing::Tracefs& tracefs, const std::vector<PlannedProbe>& probes, bool record) {
  for (size_t i = 0; i < probes.size(); ++i) {
    if (Result<void> added = add_probe(tracefs, probes[i]); !added) {
      for (size_t j = 0; j < i; ++j) (void)remove_probe(tracefs, probes[j]);
      return refused_probe_error(probes[i], added.error());
    }
  }
  if (record) {
    std::vector<std::string> current;
    if (Result<std::vector<std::string>> lines = tracing::uprobe_definitions(tracefs))
      for (const std::string& line : *lines) current.push_back(tracing::uprobe_name(line));
    record_probe_files(probes, current);
  }
  return {};
}

Result<std::vector<std::string>> delete_probes(const tracing::Tracefs& tracefs, const std::string& pattern) {
  std::vector<std::string> removed;
  auto remove_matching = [&](const std::vector<std::string>& lines, bool kernel) -> Result<void> {
    for (const std::string& line : lines) {
      const std::string name = tracing::uprobe_name(line);
      const std::string group_event = group_event_of(name);
      // An event with several probes (appended) has a line each and goes at once.
      if (!matches(pattern, group_event) || std::find(removed.begin(), removed.end(), group_event) != removed.end()) continue;
      const size_t slash = name.find('/');
      VPERF_TRY(kernel ? tracing::remove_kprobe(tracefs, name.substr(0, slash), name.substr(slash + 1))
                       : tracing::remove_uprobe(tracefs, name.substr(0, slash), name.substr(slash + 1)));
      removed.push_back(group_event);
    }
    return {};
  };
  if (tracing::has_kprobes(tracefs)) {
    VPERF_TRY(std::vector<std::string> kernel_lines, tracing::kprobe_definitions(tracefs));
    VPERF_TRY(remove_matching(kernel_lines, true));
  }
  VPERF_TRY(std::vector<std::string> lines, tracing::uprobe_definitions(tracefs));
  VPERF_TRY(remove_matching(lines, false));
  if (removed.empty())
    return Error{"no probe event matches '" + pattern + "'", ENOENT, "list the probes with: vperf probe -l"};
  return removed;
}

Result<std::vector<std::string>> list_probes(const tracing::Tracefs& tracefs, const std::string& pattern, bool hits,
                                             const std::vector<std::filesystem::path>& debug_dirs) {
  std::vector<std::string> out;
  if (tracing::has_kprobes(tracefs)) {
    VPERF_TRY(std::vector<std::string> kernel_lines, tracing::kprobe_definitions(tracefs));
    std::sort(kernel_lines.begin(), kernel_lines.end());  // perf lists them sorted by their definitions
    for (const std::string& line : kernel_lines) {
      const std::string group_event = group_event_of(tracing::uprobe_name(line));
      if (!matches(pattern, group_event)) continue;
      // "p:GROUP/EVENT SYMBOL+OFF ARG ..." (or the kernel's own spelling of what it was given)
      std::vector<std::string_view> words;
      for (std::string_view w : split(line, ' '))
        if (!w.empty()) words.push_back(w);
      std::string point = words.size() > 1 ? std::string(words[1]) : std::string();
      if (point.ends_with("+0")) point.resize(point.size() - 2);
      if (line.starts_with('r')) point += "%return";
      std::vector<std::string> arguments;
      for (size_t i = 2; i < words.size(); ++i) arguments.emplace_back(words[i].substr(0, words[i].find('=')));
      std::string text = "  " + group_event;
      if (text.size() < 22) text.resize(22, ' ');
      out.push_back(text + " (on " + point + (arguments.empty() ? "" : " with " + join(arguments, " ")) + ")");
    }
  }
  VPERF_TRY(std::vector<std::string> lines, tracing::uprobe_definitions(tracefs));
  std::vector<std::pair<std::string, uint64_t>> profile;
  if (hits) {
    VPERF_TRY(profile, tracing::uprobe_hits(tracefs));
  }
  const std::map<std::string, std::string> ledger = read_ledger();
  const ProbeHitCost cost = hits ? probe_hit_cost() : ProbeHitCost{};
  std::map<std::string, DebugInfoSource> debug;
  // perf lists them sorted by their uprobe_events lines ("p:probe_libc/malloc ..." before
  // "p:probe_x/..." before "r:..."); uprobe_profile keeps the file's order, hence the index.
  std::vector<size_t> order(lines.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lines[a] < lines[b]; });
  for (size_t index : order) {
    const std::string& line = lines[index];
    const std::string name = tracing::uprobe_name(line);
    const std::string group_event = group_event_of(name);
    if (!matches(pattern, group_event)) continue;
    Result<tracing::UprobeEvent> event = tracing::parse_uprobe_definition(line);
    if (!event) {
      out.push_back("  " + group_event + " (on " + line + ")");
      continue;
    }
    std::vector<std::string> arguments;
    for (const std::string& arg : event->arguments) arguments.push_back(arg.substr(0, arg.find('=')));
    std::string text = "  " + group_event;
    if (text.size() < 22) text.resize(22, ' ');
    text += " (on " + point_name(*event, debug_dirs, debug) + " in " + event->file.string() +
            (arguments.empty() ? "" : " with " + join(arguments, " ")) + ")";
    // uprobe_profile has a line per probe, in uprobe_events' order.
    if (hits && profile.size() == lines.size() && profile[index].first == event->file.string() + " " + event->event)
      text += "  hits: " + std::to_string(profile[index].second) + " " + probe_cost_so_far(profile[index].second, cost);
    const std::optional<std::string> identity = file_identity(event->file);
    if (!identity) text += "  [stale: " + event->file.string() + " is gone]";
    else if (auto it = ledger.find(name); it != ledger.end() && it->second != *identity)
      text += "  [stale: " + event->file.string() + " was replaced after the probe was added; add it again]";
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace vperf::probes
