#include "symbols/probe_debuginfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/strings.h"
#include "symbols/debuginfo.h"
#include "symbols/debuginfod_client.h"
#include "symbols/elf_file.h"
#include "symbols/source_lines.h"

namespace vperf::symbols {

struct ProbeDebugInfo::State {
  // A linked file's DWARF (libdw), or a kernel module's: a .ko is relocatable (ET_REL), its
  // .debug_info holding relocations against its sections (names, addresses), which libdwfl
  // applies when it lays the sections out, as perf reads modules.
  std::optional<DwarfInfo> linked;
  Dwfl* dwfl = nullptr;
  Dwarf* dw = nullptr;
  std::optional<ElfFile> binary;  // the probed file: its .eh_frame and segments
  bool kernel_code = false;  // kernel code (a module or vmlinux): a static is fetched by its symbol (kprobes' @NAME)
  Dwarf_CFI* eh_cfi = nullptr;
  Dwarf_CFI* debug_cfi = nullptr;
  mutable std::map<Dwarf_Off, bool> optimized_units;
  // Every function DIE that is not a declaration, by DW_AT_name: (unit offset, DIE offset) in
  // unit and DIE order. Built on the second lookup of a plain name, so planning a hundred
  // definitions walks a large library's units twice, not a hundred times.
  mutable std::optional<std::unordered_map<std::string, std::vector<std::pair<Dwarf_Off, Dwarf_Off>>>> functions_by_name;
  // Plain names looked up so far: the first is found by comparing names on one walk of every
  // function (a vmlinux has some 50,000 names: indexing them cost a one-probe command a fifth of
  // its time), a second one builds the index, for commands that look up many.
  mutable unsigned plain_lookups = 0;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (eh_cfi != nullptr) dwarf_cfi_end(eh_cfi);
    if (dwfl != nullptr) dwfl_end(dwfl);  // owns a module's Dwarf
  }
};

namespace {

// x86-64's DWARF register numbers as uprobe fetch arguments name them.
std::optional<std::string> register_name(unsigned number) {
  static constexpr std::string_view kNames[] = {"%ax", "%dx", "%cx", "%bx", "%si", "%di", "%bp", "%sp",
                                                "%r8", "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15"};
  if (number < std::size(kNames)) return std::string(kNames[number]);
  return std::nullopt;
}

const char* die_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr ? dwarf_formstring(&attr) : nullptr;
}

// The name perf probe -l gives a function: its symbol's name where the DWARF records one that
// is not a C++ mangling (a C function renamed by an asm label: glibc's __libc_malloc is the
// symbol __GI___libc_malloc), else its source name.
const char* shown_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  const char* linkage = dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != nullptr ? dwarf_formstring(&attr) : nullptr;
  if (linkage != nullptr && std::string_view(linkage).substr(0, 2) != "_Z") return linkage;
  return die_name(die);
}

bool die_offset(Dwarf* dwarf, Dwarf_Off offset, Dwarf_Die* out) { return dwarf_offdie(dwarf, offset, out) != nullptr; }

// The DIE's DW_AT_type with qualifiers (const, volatile, restrict, atomic) skipped, and
// typedefs too when `through_typedefs`. Null when the DIE has no type (void).
Dwarf_Die* type_of(Dwarf_Die* die, Dwarf_Die* out, bool through_typedefs) {
  Dwarf_Attribute attr;
  Dwarf_Die current = *die;
  for (;;) {
    if (dwarf_attr_integrate(&current, DW_AT_type, &attr) == nullptr || dwarf_formref_die(&attr, out) == nullptr)
      return nullptr;
    const int tag = dwarf_tag(out);
    const bool qualifier = tag == DW_TAG_const_type || tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type ||
                           tag == DW_TAG_atomic_type || tag == DW_TAG_shared_type;
    if (!qualifier && !(through_typedefs && tag == DW_TAG_typedef)) return out;
    current = *out;
  }
}

// perf probe -V's type names: "char*", "struct rec*", "long int", typedef names kept.
std::optional<std::string> type_name(Dwarf_Die* holder) {
  Dwarf_Die type;
  if (type_of(holder, &type, false) == nullptr) return std::nullopt;
  const int tag = dwarf_tag(&type);
  if (tag == DW_TAG_pointer_type || tag == DW_TAG_array_type) {
    std::optional<std::string> pointee = type_name(&type);
    return pointee ? std::optional<std::string>(*pointee + "*") : std::nullopt;
  }
  if (tag == DW_TAG_subroutine_type) return "(function_type)";
  const char* name = die_name(&type);
  if (tag == DW_TAG_structure_type) return std::string("struct ") + (name ? name : "");
  if (tag == DW_TAG_union_type) return std::string("union ") + (name ? name : "");
  if (tag == DW_TAG_enumeration_type) return std::string("enum ") + (name ? name : "");
  if (name == nullptr) return std::nullopt;
  return std::string(name);
}

bool has_pc(Dwarf_Die* die, uint64_t address) { return dwarf_haspc(die, address) == 1; }

// The first address of a DIE with code: its entry_pc/low_pc, else its first range.
std::optional<std::pair<uint64_t, uint64_t>> code_range(Dwarf_Die* die) {
  Dwarf_Addr base = 0, start = 0, end = 0;
  ptrdiff_t offset = dwarf_ranges(die, 0, &base, &start, &end);
  if (offset <= 0) return std::nullopt;
  Dwarf_Addr entry = start;
  if (dwarf_hasattr(die, DW_AT_entry_pc)) dwarf_entrypc(die, &entry);
  return std::pair<uint64_t, uint64_t>(entry, end);
}

bool is_location_list(Dwarf_Attribute* attr) {
  switch (dwarf_whatform(attr)) {
    case DW_FORM_sec_offset:
    case DW_FORM_loclistx:
    case DW_FORM_data4:  // DWARF 2 and 3 wrote location-list offsets as data
    case DW_FORM_data8:
      return true;
    default:
      return false;
  }
}

bool has_location_list(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  if (dwarf_attr(die, DW_AT_location, &attr) != nullptr && is_location_list(&attr)) return true;
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return false;
  do {
    if (has_location_list(&child)) return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// Where a variable is at an address: a register, or a register plus offset to dereference.
struct Location {
  bool is_static = false;  // at a fixed address (DW_OP_addr): a global, a file's static, a function's static
  uint64_t address = 0;    // ... that address (ELF virtual)
  unsigned reg = 0;
  bool in_memory = false;  // the value is at reg+offset, not in reg
  int64_t offset = 0;
};

std::string describe(std::string_view what, std::string_view variable) {
  return std::string(what) + " '" + std::string(variable) + "'";
}

}  // namespace

DebuginfoLookup find_probe_debuginfo(const std::filesystem::path& binary, const std::vector<std::filesystem::path>& debug_dirs) {
  DebuginfoLookup out;
  Result<ElfFile> elf = ElfFile::open(binary);
  if (!elf) return out;
  const std::optional<BuildId> id = elf->build_id();
  SymbolConfig config;
  config.debug_dirs = debug_dirs;
  for (const std::filesystem::path& candidate : debuginfo_candidates(config, binary, id, elf->debuglink())) {
    Result<ElfFile> debug = ElfFile::open(candidate);
    if (!debug || !debug->has_debug_info()) continue;
    if (id && !id->empty() && debug->build_id() && !debug->build_id()->empty() && !(*debug->build_id() == *id)) continue;
    out.file = candidate;
    return out;
  }
  if (elf->has_debug_info()) {
    out.file = binary;
    return out;
  }
  if (id && !id->empty() && !debug_dirs.empty()) out.missing = build_id_debug_path(debug_dirs.front(), *id).string();
  // Last, the user's debuginfod servers (perf 6.1 asks them too when DEBUGINFOD_URLS is set).
  if (id && !id->empty() && !debuginfod_urls().empty()) {
    Result<std::filesystem::path> fetched = fetch_debuginfo(*id);
    if (fetched) {
      out.file = *fetched;
      out.missing.clear();
    } else {
      out.missing += (out.missing.empty() ? "" : "; ") + fetched.error().message;
    }
  }
  return out;
}

ProbeDebugInfo::ProbeDebugInfo(std::unique_ptr<State> state) : state_(std::move(state)) {}
ProbeDebugInfo::ProbeDebugInfo(ProbeDebugInfo&&) noexcept = default;
ProbeDebugInfo& ProbeDebugInfo::operator=(ProbeDebugInfo&&) noexcept = default;
ProbeDebugInfo::~ProbeDebugInfo() = default;

Result<ProbeDebugInfo> ProbeDebugInfo::open(const std::filesystem::path& debug_file, const std::filesystem::path& binary, bool kernel) {
  VPERF_TRY(ElfFile elf, ElfFile::open(binary));
  auto state = std::make_unique<State>();
  state->binary.emplace(std::move(elf));
  if (state->binary->type() == ET_REL) {
    static const Dwfl_Callbacks offline = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address, nullptr};
    state->dwfl = dwfl_begin(&offline);
    Dwfl_Module* module = state->dwfl ? dwfl_report_offline(state->dwfl, "", debug_file.c_str(), -1) : nullptr;
    Dwarf_Addr bias = 0;
    if (module != nullptr && dwfl_report_end(state->dwfl, nullptr, nullptr) == 0) state->dw = dwfl_module_getdwarf(module, &bias);
    if (state->dw == nullptr) return Error{debug_file.string() + ": no DWARF: " + dwfl_errmsg(-1)};
    state->kernel_code = true;
    state->debug_cfi = dwarf_getcfi(state->dw);  // relocated .debug_frame; a module's .eh_frame is not laid out
    return ProbeDebugInfo(std::move(state));
  }
  VPERF_TRY(DwarfInfo dwarf, DwarfInfo::open(debug_file));
  state->linked.emplace(std::move(dwarf));
  state->kernel_code = kernel;
  state->dw = state->linked->handle();
  state->eh_cfi = dwarf_getcfi_elf(state->binary->handle());
  state->debug_cfi = dwarf_getcfi(state->dw);  // owned by the Dwarf
  return ProbeDebugInfo(std::move(state));
}

namespace {

// Calls `visit(unit, function)` for each function DIE of every unit (not declarations), in
// unit and DIE order.
template <typename Visit>
void for_each_function(Dwarf* dwarf, Visit&& visit) {
  Dwarf_Off offset = 0, next = 0;
  size_t header_size = 0;
  for (; dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0; offset = next) {
    Dwarf_Die unit;
    if (dwarf_offdie(dwarf, offset + header_size, &unit) == nullptr) continue;
    struct Context {
      Dwarf_Die* unit;
      Visit* visit;
    } context{&unit, &visit};
    dwarf_getfuncs(
        &unit,
        [](Dwarf_Die* function, void* arg) {
          auto* c = static_cast<Context*>(arg);
          if (!dwarf_hasattr(function, DW_AT_declaration)) (*c->visit)(c->unit, function);
          return static_cast<int>(DWARF_CB_OK);
        },
        &context, 0);
  }
}

}  // namespace

std::vector<DwarfProbeSite> ProbeDebugInfo::function_sites(std::string_view pattern, bool with_inlines) const {
  Dwarf* dwarf = state_->dw;
  // The matching function DIEs, by unit in order.
  std::vector<std::pair<Dwarf_Off, std::vector<Dwarf_Off>>> matches;
  auto add_match = [&](Dwarf_Off unit, Dwarf_Off function) {
    if (matches.empty() || matches.back().first != unit) matches.emplace_back(unit, std::vector<Dwarf_Off>());
    matches.back().second.push_back(function);
  };
  const bool plain = pattern.find_first_of("*?[") == std::string_view::npos;
  if (plain && state_->plain_lookups++ == 0) {
    for_each_function(dwarf, [&](Dwarf_Die* unit, Dwarf_Die* function) {
      const char* name = die_name(function);
      if (name != nullptr && pattern == name) add_match(dwarf_dieoffset(unit), dwarf_dieoffset(function));
    });
  } else if (plain) {
    if (!state_->functions_by_name) {
      state_->functions_by_name.emplace();
      for_each_function(dwarf, [&](Dwarf_Die* unit, Dwarf_Die* function) {
        if (const char* name = die_name(function))
          (*state_->functions_by_name)[name].emplace_back(dwarf_dieoffset(unit), dwarf_dieoffset(function));
      });
    }
    if (auto it = state_->functions_by_name->find(std::string(pattern)); it != state_->functions_by_name->end())
      for (const auto& [unit, function] : it->second) add_match(unit, function);
  } else {
    for_each_function(dwarf, [&](Dwarf_Die* unit, Dwarf_Die* function) {
      const char* name = die_name(function);
      if (name != nullptr && glob_match(pattern, name)) add_match(dwarf_dieoffset(unit), dwarf_dieoffset(function));
    });
  }

  std::vector<DwarfProbeSite> sites;
  for (const auto& match : matches) {
    // A named copy, not a structured binding: the lambda below captures it, which clang 14
    // (the fuzz build's compiler) refuses for bindings.
    const Dwarf_Off unit_offset = match.first;
    const auto& functions = match.second;
    Dwarf_Die unit;
    if (!die_offset(dwarf, unit_offset, &unit)) continue;
    // Each function's out-of-line code, then (for an inline declaration) each place it was
    // inlined, found by walking the unit.
    for (Dwarf_Off function_offset : functions) {
      Dwarf_Die function;
      if (!die_offset(dwarf, function_offset, &function)) continue;
      const char* name = die_name(&function);
      if (std::optional<std::pair<uint64_t, uint64_t>> range = code_range(&function)) {
        sites.push_back(DwarfProbeSite{name, range->first, range->second, false, function_offset, function_offset, unit_offset, name,
                                       range->first});
      }
      if (!with_inlines || !dwarf_hasattr(&function, DW_AT_inline)) continue;
      // Instances: DW_TAG_inlined_subroutine whose abstract origin is this function, and the
      // out-of-line function each one runs in.
      auto walk = [&](auto&& self, Dwarf_Die* parent, Dwarf_Off subprogram) -> void {
        Dwarf_Die child;
        if (dwarf_child(parent, &child) != 0) return;
        do {
          const int tag = dwarf_tag(&child);
          Dwarf_Off owner = subprogram;
          if (tag == DW_TAG_subprogram) owner = code_range(&child) ? dwarf_dieoffset(&child) : 0;
          if (tag == DW_TAG_inlined_subroutine && subprogram != 0) {
            Dwarf_Attribute attr;
            Dwarf_Die abstract;
            if (dwarf_attr(&child, DW_AT_abstract_origin, &attr) != nullptr && dwarf_formref_die(&attr, &abstract) != nullptr &&
                dwarf_dieoffset(&abstract) == function_offset) {
              Dwarf_Die owner_die;
              std::optional<std::pair<uint64_t, uint64_t>> range = code_range(&child);
              if (range && die_offset(dwarf, subprogram, &owner_die)) {
                const char* owner_name = die_name(&owner_die);
                sites.push_back(DwarfProbeSite{name, range->first, range->second, true, dwarf_dieoffset(&child), subprogram, unit_offset,
                                               owner_name ? owner_name : "",
                                               code_range(&owner_die).value_or(std::pair<uint64_t, uint64_t>()).first});
              }
            }
          }
          if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine ||
              tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
            self(self, &child, owner);
        } while (dwarf_siblingof(&child, &child) == 0);
      };
      walk(walk, &unit, 0);
    }
  }
  return sites;
}

std::string ProbeDebugInfo::function_at(uint64_t address) const {
  Dwarf_Die unit;
  if (dwarf_addrdie(state_->dw, address, &unit) == nullptr) return {};
  Dwarf_Die* raw = nullptr;
  const int n = dwarf_getscopes(&unit, address, &raw);
  std::unique_ptr<Dwarf_Die, decltype(&std::free)> scopes(raw, &std::free);
  for (int i = n - 1; i >= 0; --i) {  // outermost first: the out-of-line function, not an inlined one
    Dwarf_Die* scope = &scopes.get()[i];
    if (dwarf_tag(scope) != DW_TAG_subprogram) continue;
    std::optional<std::pair<uint64_t, uint64_t>> range = code_range(scope);
    const char* name = die_name(scope);
    if (range && range->first == address && name != nullptr) return name;
  }
  return {};
}

bool ProbeDebugInfo::optimized(const DwarfProbeSite& site) const {
  auto [it, inserted] = state_->optimized_units.try_emplace(site.unit, false);
  if (inserted) {
    Dwarf_Die unit;
    it->second = die_offset(state_->dw, site.unit, &unit) && has_location_list(&unit);
  }
  return it->second;
}

uint64_t ProbeDebugInfo::after_prologue(const DwarfProbeSite& site) const {
  Dwarf_Die unit;
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (!die_offset(state_->dw, site.unit, &unit) || dwarf_getsrclines(&unit, &lines, &count) != 0) return site.entry;
  size_t first = count;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Addr address = 0;
    if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &address) == 0 && address == site.entry) {
      first = i;
      break;
    }
  }
  if (first == count) return site.entry;
  // The row after the entry's, unless the entry's row marks the end of the prologue itself
  // (clang) or the function ends first.
  bool prologue_end = false;
  dwarf_lineprologueend(dwarf_onesrcline(lines, first), &prologue_end);
  if (prologue_end || first + 1 >= count) return site.entry;
  Dwarf_Addr next = 0;
  if (dwarf_lineaddr(dwarf_onesrcline(lines, first + 1), &next) != 0 || next >= site.high) return site.entry;
  return next;
}

namespace {

// perf's search for a variable by name: the scope's children depth first, entering only the
// blocks that hold the address; a match needs a location, a constant or an external definition.
bool find_variable(Dwarf_Die* scope, std::string_view name, uint64_t address, Dwarf_Die* out) {
  Dwarf_Die child;
  if (dwarf_child(scope, &child) != 0) return false;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) {
      const char* n = die_name(&child);
      if (n != nullptr && name == n &&
          (dwarf_hasattr(&child, DW_AT_external) || dwarf_hasattr(&child, DW_AT_location) ||
           dwarf_hasattr(&child, DW_AT_const_value))) {
        *out = child;
        return true;
      }
    }
    if ((address == 0 || has_pc(&child, address)) && find_variable(&child, name, address, out)) return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// The defining DIE of a declaration (gcc names the declaration and gives the unit's
// definition only DW_AT_specification); `die` is left as it is when the unit has none.
void definition_of(Dwarf_Die* unit, Dwarf_Die* die) {
  Dwarf_Die child;
  if (dwarf_child(unit, &child) != 0) return;
  do {
    Dwarf_Attribute attr;
    Dwarf_Die spec;
    if (dwarf_tag(&child) == DW_TAG_variable && dwarf_attr(&child, DW_AT_specification, &attr) != nullptr &&
        dwarf_formref_die(&attr, &spec) != nullptr && dwarf_dieoffset(&spec) == dwarf_dieoffset(die)) {
      *die = child;
      return;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The frame base of the site's function at `address` as one location operation, with
// DW_OP_call_frame_cfa turned into the CFA's rule (a register plus offset) from the CFI.
Result<std::optional<Dwarf_Op>> frame_base(const ProbeDebugInfo::State& state, const DwarfProbeSite& site, uint64_t address) {
  Dwarf_Die subprogram;
  Dwarf_Attribute attr;
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (!die_offset(state.dw, site.subprogram, &subprogram) || dwarf_attr(&subprogram, DW_AT_frame_base, &attr) == nullptr ||
      dwarf_getlocation_addr(&attr, address, &ops, &count, 1) <= 0 || count == 0)
    return std::optional<Dwarf_Op>();
  if (count != 1 || ops[0].atom != DW_OP_call_frame_cfa) return std::optional<Dwarf_Op>(ops[0]);
  for (Dwarf_CFI* cfi : {state.eh_cfi, state.debug_cfi}) {
    Dwarf_Frame* frame = nullptr;
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, address, &frame) != 0) continue;
    Dwarf_Op* cfa = nullptr;
    size_t cfa_count = 0;
    std::optional<Dwarf_Op> rule;
    if (dwarf_frame_cfa(frame, &cfa, &cfa_count) == 0 && cfa_count >= 1) rule = cfa[0];
    std::free(frame);
    if (rule) return rule;
  }
  return Error{"no call frame information for " + hex(address) + " in " + state.binary->name(), 0,
               "the frame base of " + site.function + " comes from .eh_frame or .debug_frame, and neither covers it"};
}

// A variable's location at `address` (perf's convert_variable_location). `site_entry` lets a
// parameter whose location list starts just after the entry use its first location.
Result<Location> locate(const ProbeDebugInfo::State& state, const DwarfProbeSite& site, Dwarf_Die* variable, uint64_t address,
                        std::string_view name) {
  Dwarf_Attribute attr;
  if (dwarf_hasattr(variable, DW_AT_declaration) && !dwarf_hasattr(variable, DW_AT_location))
    return Error{describe("variable", name) + " is only declared in this compile unit (extern): its definition is in another", 0,
                 "fetch it through the symbol table: " + std::string(name) + "=@" + std::string(name) + ":s32 (give its type)"};
  if (dwarf_hasattr(variable, DW_AT_const_value) && !dwarf_hasattr(variable, DW_AT_location))
    return Error{describe("variable", name) + " is a constant the compiler folded away: it has no location to fetch", 0,
                 "its value is fixed at this point; read it from the source"};
  if (dwarf_attr(variable, DW_AT_location, &attr) == nullptr)
    return Error{describe("variable", name) + " has no location (optimised out)", 0, "probe where it is live, or rebuild with -O0 -g"};
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation_addr(&attr, address, &ops, &count, 1) <= 0) {
    // Only a parameter at the function's entry may take the first location after it.
    bool found = false;
    if (address == site.entry && dwarf_tag(variable) == DW_TAG_formal_parameter)
      for (uint64_t a = address + 1; a < site.high && !found; ++a) found = dwarf_getlocation_addr(&attr, a, &ops, &count, 1) > 0;
    if (!found)
      return Error{"the location of " + describe("variable", name) + " is not known at " + hex(address) + " (optimised out there)", 0,
                   "list what is available there with -V, or probe another line"};
  }
  if (count == 0) return Error{describe("variable", name) + " has an empty location at " + hex(address) + " (optimised out)"};
  Location location;
  Dwarf_Op op = ops[0];
  if (op.atom == DW_OP_addr) {
    if (count > 1 && (ops[1].atom == DW_OP_GNU_push_tls_address || ops[1].atom == DW_OP_form_tls_address))
      return Error{describe("variable", name) + " is thread-local: each thread has its own copy, at an address uprobes cannot compute", 0,
                   "probe where a local or parameter points at it"};
    location.is_static = true;
    location.address = op.number;
    return location;
  }
  if (op.atom == DW_OP_fbreg) {
    VPERF_TRY(std::optional<Dwarf_Op> base, frame_base(state, site, address));
    if (!base) return Error{describe("variable", name) + " lives in a frame whose base DWARF does not give at " + hex(address)};
    location.in_memory = true;
    location.offset = static_cast<int64_t>(op.number);
    op = *base;
  }
  if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31) {
    location.reg = op.atom - DW_OP_breg0;
    location.offset += static_cast<int64_t>(op.number);
    location.in_memory = true;
  } else if (op.atom >= DW_OP_reg0 && op.atom <= DW_OP_reg31) {
    location.reg = op.atom - DW_OP_reg0;
  } else if (op.atom == DW_OP_bregx) {
    location.reg = static_cast<unsigned>(op.number);
    location.offset += static_cast<int64_t>(op.number2);
    location.in_memory = true;
  } else if (op.atom == DW_OP_regx) {
    location.reg = static_cast<unsigned>(op.number);
  } else if (op.atom == DW_OP_entry_value || op.atom == DW_OP_GNU_entry_value) {
    return Error{"at " + hex(address) + " " + describe("variable", name) + " is only known as the value it had at the function's entry, which no register holds any more", 0,
                 "probe the function's entry for it"};
  } else {
    return Error{"the location of " + describe("variable", name) + " at " + hex(address) + " is a DWARF expression uprobes cannot fetch (DW_OP 0x" +
                     hex(op.atom).substr(2) + ")",
                 0, "fetch it by register or stack offset instead (see -V and the disassembly)"};
  }
  if (!register_name(location.reg))
    return Error{describe("variable", name) + " is in DWARF register " + std::to_string(location.reg) + ", which uprobes cannot read"};
  return location;
}

// The member `name` of a struct or union, with its byte offset; members of anonymous members
// are found too, their offsets added.
bool find_member(Dwarf_Die* aggregate, std::string_view name, Dwarf_Die* out, int64_t* offset);

// A member's byte offset; 0 for a bitfield placed by DW_AT_data_bit_offset (DWARF 4 and
// later), whose bits count from the start of the struct.
int64_t member_offset(Dwarf_Die* member) {
  Dwarf_Attribute attr;
  if (dwarf_attr(member, DW_AT_data_member_location, &attr) == nullptr) return 0;
  Dwarf_Word value = 0;
  if (dwarf_formudata(&attr, &value) == 0) return static_cast<int64_t>(value);
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation(&attr, &ops, &count) == 0 && count == 1 && ops[0].atom == DW_OP_plus_uconst) return static_cast<int64_t>(ops[0].number);
  return 0;
}

bool find_member(Dwarf_Die* aggregate, std::string_view name, Dwarf_Die* out, int64_t* offset) {
  Dwarf_Die child;
  if (dwarf_child(aggregate, &child) != 0) return false;
  do {
    if (dwarf_tag(&child) != DW_TAG_member) continue;
    const char* n = die_name(&child);
    if (n != nullptr && name == n) {
      *offset = member_offset(&child);
      *out = child;
      return true;
    }
    Dwarf_Die inner;
    int64_t inner_offset = 0;
    if (n == nullptr && type_of(&child, &inner, true) != nullptr && find_member(&inner, name, out, &inner_offset)) {
      *offset = member_offset(&child) + inner_offset;
      return true;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

int64_t byte_size(Dwarf_Die* type) {
  Dwarf_Attribute attr;
  Dwarf_Word size = 0;
  if (dwarf_attr_integrate(type, DW_AT_byte_size, &attr) != nullptr && dwarf_formudata(&attr, &size) == 0) return static_cast<int64_t>(size);
  return -1;
}

bool is_signed(Dwarf_Die* type) {
  Dwarf_Attribute attr;
  Dwarf_Word encoding = 0;
  if (dwarf_attr(type, DW_AT_encoding, &attr) == nullptr || dwarf_formudata(&attr, &encoding) != 0) return false;
  return encoding == DW_ATE_signed || encoding == DW_ATE_signed_char || encoding == DW_ATE_signed_fixed;
}

// A variable's value as a fetch goes to it: from the register or the static address it lives
// at, through a chain of dereferences (refs[0] applies to the register, each next one to the
// value the previous one fetched), to the DIE whose DW_AT_type is the value's type.
struct FetchWalk {
  std::vector<int64_t> refs;
  Dwarf_Die holder;
  std::string path;        // "var", "var->next[2]": what the messages name
  std::string field_name;  // the last member taken, the argument's default name
  std::string see_types;   // the hint that lists the site's variables and types
};

// One `[N]` of the fetch: an array's or a pointer's element.
Result<void> take_index(FetchWalk& w, Dwarf_Die& type, int tag, const std::string& field) {
  std::optional<uint64_t> index = parse_u64(std::string_view(field).substr(1, field.size() - 2));
  if (!index || (tag != DW_TAG_array_type && tag != DW_TAG_pointer_type))
    return Error{"'" + w.path + "' is not an array or a pointer: it cannot take " + field, 0, w.see_types};
  Dwarf_Die element;
  if (type_of(&type, &element, true) == nullptr)
    return Error{"'" + w.path + "' points to void: it cannot take " + field, 0, "fetch it with an explicit offset and type: +N(...):u64"};
  const int64_t size = byte_size(&element);
  if (size <= 0) return Error{"the elements of '" + w.path + "' have no size in DWARF", 0, "fetch it with an explicit offset and type: +N(...):u64"};
  if (tag == DW_TAG_pointer_type) w.refs.push_back(0);
  if (w.refs.empty()) return Error{"'" + w.path + "' is an array in a register, which uprobes cannot index", 0, "fetch by register and offset instead"};
  // The kernel takes a fetch's offset as a signed long: an index whose offset does not fit one is refused, never wrapped.
  int64_t step = 0;
  if (*index > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(static_cast<int64_t>(*index), size, &step) ||
      __builtin_add_overflow(w.refs.back(), step, &w.refs.back()))
    return Error{"'" + w.path + field + "' lies past what a fetch's offset can reach (a signed 64-bit number of bytes)", 0,
                 "give an index within the array"};
  w.holder = type;
  return {};
}

// One `.member` or `->member` of the fetch.
Result<void> take_member(FetchWalk& w, Dwarf_Die& type, int tag, const std::string& field) {
  const bool arrow = field.starts_with("->");
  const std::string member_name = field.substr(arrow ? 2 : 1);
  Dwarf_Die aggregate = type;
  if (arrow) {
    if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type)
      return Error{"'" + w.path + "' is a struct, not a pointer", 0, "write '" + w.path + "." + member_name + "'"};
    if (tag != DW_TAG_pointer_type) return Error{"'" + w.path + "' is not a pointer to a struct or union: it has no member " + member_name, 0, w.see_types};
    if (type_of(&type, &aggregate, true) == nullptr)
      return Error{"'" + w.path + "' points to void: it has no member " + member_name, 0, "fetch it with an explicit offset and type: +N(...):u64"};
    w.refs.push_back(0);
  } else if (tag == DW_TAG_pointer_type) {
    return Error{"'" + w.path + "' is a pointer, not a struct", 0, "write '" + w.path + "->" + member_name + "'"};
  }
  const int aggregate_tag = dwarf_tag(&aggregate);
  if (aggregate_tag != DW_TAG_structure_type && aggregate_tag != DW_TAG_union_type && aggregate_tag != DW_TAG_class_type)
    return Error{"'" + w.path + "' is not a struct or union: it has no member " + member_name, 0, w.see_types};
  Dwarf_Die member;
  int64_t offset = 0;
  if (!find_member(&aggregate, member_name, &member, &offset))
    return Error{"'" + w.path + "' has no member '" + member_name + "'", 0,
                 "see the type's members with: pahole or gdb -batch -ex 'ptype " + w.path + "'"};
  if (w.refs.empty()) return Error{"'" + w.path + "' is a struct in a register, which uprobes cannot take members of", 0, "fetch by register instead"};
  w.refs.back() += offset;
  w.holder = member;
  w.field_name = member_name;
  return {};
}

Result<void> take_field(FetchWalk& w, const std::string& field) {
  Dwarf_Die type;
  if (type_of(&w.holder, &type, true) == nullptr) return Error{"'" + w.path + "' has no type to take '" + field + "' of", 0, w.see_types};
  const int tag = dwarf_tag(&type);
  VPERF_TRY(field.starts_with('[') ? take_index(w, type, tag, field) : take_member(w, type, tag, field));
  w.path += field;
  return {};
}

// The fetch text, built dereference by dereference: a register's "+8(%di)", or a static's own
// address first ("@+0x1234", a kernel module's "@name+8").
struct FetchText {
  std::string fetch;
  std::optional<uint64_t> static_offset;
  std::string static_symbol;
  void dereference(int64_t offset) {
    if (fetch.empty()) {  // the first reference of a static: its own address, offset within it
      fetch = static_symbol.empty() ? "@+" + hex(*static_offset + static_cast<uint64_t>(offset))
                                    : "@" + static_symbol + (offset < 0 ? "-" : "+") + std::to_string(offset < 0 ? -offset : offset);
      return;
    }
    fetch = (offset < 0 ? "-" : "+") + std::to_string(offset < 0 ? -offset : offset) + "(" + fetch + ")";
  }
};

// The fetch's type: a bitfield's, a string's (:string), the cast given, or the DWARF type's size
// and signedness. Applies the dereferences.
Result<std::string> fetch_type(FetchWalk& w, FetchText& text, std::string_view cast) {
  Dwarf_Attribute attr;
  Dwarf_Word bit_size = 0;
  if (dwarf_attr(&w.holder, DW_AT_bit_size, &attr) != nullptr && dwarf_formudata(&attr, &bit_size) == 0 && cast.empty()) {
    // A bitfield: its container is its type's size, the bit offset within it little-endian.
    Dwarf_Die type;
    Dwarf_Word bit_offset = 0;
    const int64_t container = type_of(&w.holder, &type, true) ? byte_size(&type) : -1;
    if (container <= 0 || dwarf_attr(&w.holder, DW_AT_data_bit_offset, &attr) == nullptr || dwarf_formudata(&attr, &bit_offset) != 0)
      return Error{"the bitfield '" + w.path + "' has a layout vperf cannot read (pre-DWARF 4 bit offsets)", 0,
                   "fetch its container and mask it: " + w.path + ":x32"};
    const uint64_t container_bits = static_cast<uint64_t>(container) * 8;
    w.refs.back() += static_cast<int64_t>(bit_offset / container_bits) * container;
    for (int64_t offset : w.refs) text.dereference(offset);
    return "b" + std::to_string(bit_size) + "@" + std::to_string(bit_offset % container_bits) + "/" + std::to_string(container_bits);
  }
  Dwarf_Die type;
  const bool has_type = type_of(&w.holder, &type, true) != nullptr;
  if (cast == "string" || cast == "ustring") {
    const int tag = has_type ? dwarf_tag(&type) : 0;
    if (tag != DW_TAG_pointer_type && tag != DW_TAG_array_type)
      return Error{"'" + w.path + "' is not a pointer or an array: it cannot be read as a string", 0, "drop :string, or give a char pointer or array"};
    Dwarf_Die element;
    const char* element_name = type_of(&type, &element, true) ? die_name(&element) : nullptr;
    if (element_name == nullptr || (std::string_view(element_name) != "char" && std::string_view(element_name) != "unsigned char"))
      return Error{"'" + w.path + "' is not a char pointer or array: it cannot be read as a string", 0, "drop :string, or cast: +0(...):string"};
    if (tag == DW_TAG_pointer_type) w.refs.push_back(0);
    for (int64_t offset : w.refs) text.dereference(offset);
    return std::string(cast);
  }
  for (int64_t offset : w.refs) text.dereference(offset);
  if (!cast.empty() && cast != "s" && cast != "u" && cast != "x") return std::string(cast);
  if (!has_type) return Error{"'" + w.path + "' has no type in DWARF", 0, "give one: " + w.path + ":u64"};
  const int64_t size = byte_size(&type);
  if (size <= 0) return std::string();  // no size (an array): the kernel's default
  const char prefix = !cast.empty() ? cast[0] : is_signed(&type) ? 's' : 'x';
  return prefix + std::to_string(std::min<int64_t>(size * 8, 64));
}

}  // namespace

Result<VariableFetch> ProbeDebugInfo::fetch(const DwarfProbeSite& site, uint64_t address, std::string_view variable,
                                            const std::vector<std::string>& fields, std::string_view cast) const {
  Dwarf* dwarf = state_->dw;
  Dwarf_Die scope, unit, found;
  if (!die_offset(dwarf, site.scope, &scope) || !die_offset(dwarf, site.unit, &unit))
    return Error{"the DWARF of " + site.function + " cannot be read again"};
  if (!find_variable(&scope, variable, address, &found) && !find_variable(&unit, variable, 0, &found))
    return Error{describe("variable", variable) + " is not in " + site.function + "'s scope", 0,
                 "list the variables there with: vperf probe -x FILE -V " + site.function};
  if (dwarf_hasattr(&found, DW_AT_declaration)) definition_of(&unit, &found);
  VPERF_TRY(Location location, locate(*state_, site, &found, address, variable));
  // A variable at a fixed address is fetched as uprobes fetch a file's own memory: "@+OFFSET",
  // the offset from where the probed segment's file offset 0 is mapped (the kernel adds the
  // probe's address minus its file offset). perf 6.1 writes "@NAME", which uprobes refuse.
  FetchText text;
  if (location.is_static && state_->kernel_code) {  // a kernel module's: kprobes fetch "@NAME+OFFSET", as perf writes
    const char* name = die_name(&found);
    text.static_symbol = name != nullptr ? name : std::string(variable);
    text.static_offset = 0;
    location.in_memory = true;
    location.offset = 0;
  } else if (location.is_static) {
    std::optional<uint64_t> probe_offset = vaddr_to_file_offset(state_->binary->load_segments(), address);
    if (!probe_offset || location.address + *probe_offset < address)
      return Error{describe("variable", variable) + " lies below the probed segment's mapping: uprobes cannot address it from " + hex(address)};
    text.static_offset = location.address + *probe_offset - address;
    location.in_memory = true;
    location.offset = 0;
  }
  FetchWalk walk{{}, found, std::string(variable), {}, "see the types with: vperf probe -x FILE -V " + site.function};
  if (location.in_memory) walk.refs.push_back(location.offset);
  for (const std::string& field : fields) VPERF_TRY(take_field(walk, field));

  VariableFetch out;
  out.field_name = walk.field_name;
  if (!text.static_offset) text.fetch = *register_name(location.reg);
  VPERF_TRY(out.type, fetch_type(walk, text, cast));
  out.fetch = std::move(text.fetch);
  return out;
}

std::vector<std::string> ProbeDebugInfo::scope_variables(const DwarfProbeSite& site, uint64_t address, bool with_locals) const {
  std::vector<std::string> names;
  Dwarf_Die scope;
  if (!die_offset(state_->dw, site.scope, &scope)) return names;
  auto walk = [&](auto&& self, Dwarf_Die* parent) -> void {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      const int tag = dwarf_tag(&child);
      if (tag == DW_TAG_formal_parameter || (with_locals && tag == DW_TAG_variable)) {
        const char* name = die_name(&child);
        if (name != nullptr && locate(*state_, site, &child, address, name)) names.emplace_back(name);
      }
      if (has_pc(&child, address)) self(self, &child);
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  walk(walk, &scope);
  return names;
}

namespace {

// perf probe --range's "@<FUNC+[START-END,...]>": where a variable's location is valid, as
// offsets from the site's function entry: each entry of its location list, or, for a single
// location, the ranges of the scope that declares it.
std::string location_ranges(Dwarf_Die* function, Dwarf_Die* variable) {
  Dwarf_Addr entry = 0;
  const char* name = die_name(function);
  Dwarf_Attribute attr;
  if (dwarf_entrypc(function, &entry) != 0 || name == nullptr || dwarf_attr(variable, DW_AT_location, &attr) == nullptr) return {};
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  Dwarf_Addr base = 0, start = 0, end = 0;
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  for (ptrdiff_t offset = 0; (offset = dwarf_getlocations(&attr, offset, &base, &start, &end, &ops, &count)) > 0;) {
    if (start == 0) {  // one location for the whole scope: the declaring scope's ranges
      ranges.clear();
      Dwarf_Die* scopes = nullptr;
      const int depth = dwarf_getscopes_die(variable, &scopes);
      if (depth > 1)
        for (ptrdiff_t r = 0; (r = dwarf_ranges(&scopes[1], r, &base, &start, &end)) > 0;) ranges.emplace_back(start - entry, end - entry);
      std::free(scopes);
      break;
    }
    ranges.emplace_back(start - entry, end - entry);
  }
  if (ranges.empty()) return {};
  std::string out = "@<" + std::string(name) + "+[";
  for (size_t i = 0; i < ranges.size(); ++i)
    out += (i ? "," : "") + std::to_string(ranges[i].first) + "-" + std::to_string(ranges[i].second);
  return out + "]>";
}

}  // namespace

std::vector<std::string> ProbeDebugInfo::available_variables(const DwarfProbeSite& site, uint64_t address, bool externs, bool ranges) const {
  std::vector<std::string> lines;
  Dwarf* dwarf = state_->dw;
  Dwarf_Die function, owner;
  const bool have_function = die_offset(dwarf, site.scope, &function);
  const bool have_owner = die_offset(dwarf, site.subprogram, &owner);  // ranges count from the out-of-line function, as perf's
  // A local's line: "TYPE\tNAME", with --range tagged [VAL] (valid at the address) or [INV]
  // (a variable, not a parameter, whose location starts later in the site) and followed by
  // where it is valid.
  auto add_local = [&](Dwarf_Die* die) {
    const int tag = dwarf_tag(die);
    const char* name = die_name(die);
    if ((tag != DW_TAG_formal_parameter && tag != DW_TAG_variable) || name == nullptr || !dwarf_hasattr(die, DW_AT_location)) return;
    bool valid = true;
    if (!dwarf_hasattr(die, DW_AT_external) && !locate(*state_, site, die, address, name)) {
      if (!ranges || tag != DW_TAG_variable) return;
      Dwarf_Attribute attr;
      Dwarf_Op* ops = nullptr;
      size_t count = 0;
      bool later = false;
      Dwarf_Addr high = 0;  // perf searches up to the scope's DW_AT_high_pc: none (DW_AT_ranges), no search
      dwarf_attr(die, DW_AT_location, &attr);
      uint64_t a = address + 1;
      if (have_function && dwarf_highpc(&function, &high) == 0)
        for (; a <= high && !later; ++a) later = dwarf_getlocation_addr(&attr, a, &ops, &count, 1) > 0;
      // ... and lists it only when that first location is one a probe can fetch (not a constant).
      if (!later || !locate(*state_, site, die, a - 1, name)) return;
      valid = false;
    }
    std::string line = type_name(die).value_or("(unknown_type)") + "\t" + name;
    if (ranges) line = (valid ? "[VAL]\t" : "[INV]\t") + line + "\t" + (have_owner ? location_ranges(&owner, die) : std::string());
    lines.push_back(std::move(line));
  };
  auto walk = [&](auto&& self, Dwarf_Die* parent) -> void {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      add_local(&child);
      if (has_pc(&child, address)) self(self, &child);
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  if (have_function) walk(walk, &function);
  Dwarf_Die unit;
  if (externs && die_offset(dwarf, site.unit, &unit)) {
    // The unit's own variables as perf lists them: those at a fixed address (globals and the
    // file's statics), in a register, and extern declarations; not thread-locals (their
    // location is no address).
    Dwarf_Die child;
    if (dwarf_child(&unit, &child) == 0) do {
        const char* name = die_name(&child);
        if (dwarf_tag(&child) != DW_TAG_variable || name == nullptr) continue;
        Dwarf_Attribute attr;
        Dwarf_Op* ops = nullptr;
        size_t count = 0;
        if (dwarf_attr(&child, DW_AT_location, &attr) == nullptr) {
          if (!dwarf_hasattr(&child, DW_AT_external)) continue;
        } else if (dwarf_getlocation(&attr, &ops, &count) != 0 || count != 1 ||
                   !(ops[0].atom == DW_OP_addr || (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
          continue;  // a global register variable (the kernel's current_stack_pointer) is listed too
        }
        lines.push_back(std::string(ranges ? "[EXT]\t" : "") + type_name(&child).value_or("(unknown_type)") + "\t" + name);
      } while (dwarf_siblingof(&child, &child) == 0);
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  return lines;
}

namespace {

// perf's strtailcmp: equal from the end until the shorter one runs out ("t.c" matches
// "/tmp/pp/t.c").
bool tail_matches(std::string_view a, std::string_view b) {
  while (!a.empty() && !b.empty()) {
    if (a.back() != b.back()) return false;
    a.remove_suffix(1);
    b.remove_suffix(1);
  }
  return true;
}

struct LineRow {
  std::string file;
  int line = 0;
  uint64_t address = 0;
};

// A unit's line-table rows that begin a statement (what a line probe may take), in table order.
std::vector<LineRow> statement_rows(Dwarf_Die* unit) {
  std::vector<LineRow> rows;
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(unit, &lines, &count) != 0) return rows;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Line* line = dwarf_onesrcline(lines, i);
    Dwarf_Addr address = 0;
    int number = 0;
    bool flag = false;
    if (line == nullptr || dwarf_lineaddr(line, &address) != 0 || dwarf_lineno(line, &number) != 0) continue;
    if (dwarf_lineendsequence(line, &flag) != 0 || flag) continue;
    if (dwarf_linebeginstatement(line, &flag) != 0 || !flag) continue;
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    if (file != nullptr) rows.push_back(LineRow{file_in_cu(file, unit), number, address});
  }
  return rows;
}

// `in_cu`: a relative name is made the compile directory's (as source_lines.h's file_in_cu);
// else as the line table has it.
std::string attribute_file(Dwarf_Die* die, Dwarf_Die* unit, int attribute, bool in_cu = true) {
  Dwarf_Attribute attr;
  Dwarf_Word index = 0;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_attr_integrate(die, attribute, &attr) == nullptr || dwarf_formudata(&attr, &index) != 0) return {};
  Dwarf_Die origin_unit;
  // The file index belongs to the unit of the DIE that holds the attribute (an abstract origin
  // may be in another unit with LTO); the same unit is the common case.
  Dwarf_Die* files_unit = unit;
  if (dwarf_attr(die, attribute, &attr) == nullptr && dwarf_diecu(die, &origin_unit, nullptr, nullptr) != nullptr) files_unit = &origin_unit;
  if (dwarf_getsrcfiles(files_unit, &files, &count) != 0 || index >= count) return {};
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  if (name == nullptr) return {};
  return in_cu ? file_in_cu(name, files_unit) : std::string(name);
}

int attribute_line(Dwarf_Die* die, int attribute) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr_integrate(die, attribute, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) return 0;
  return static_cast<int>(value);
}



}  // namespace

std::vector<std::string> ProbeDebugInfo::source_files(std::string_view file) const {
  std::set<std::string> out;
  Dwarf* dwarf = state_->dw;
  Dwarf_Off offset = 0, next = 0;
  size_t header_size = 0;
  for (; dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0; offset = next) {
    Dwarf_Die unit;
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_offdie(dwarf, offset + header_size, &unit) == nullptr || dwarf_getsrcfiles(&unit, &files, &count) != 0) continue;
    for (size_t i = 0; i < count; ++i)
      if (const char* name = dwarf_filesrc(files, i, nullptr, nullptr); name != nullptr && tail_matches(name, file))
        out.insert(file_in_cu(name, &unit));
  }
  return {out.begin(), out.end()};
}

std::optional<SourceDeclaration> ProbeDebugInfo::declaration(const DwarfProbeSite& site) const {
  Dwarf_Die die, unit;
  if (!die_offset(state_->dw, site.scope, &die) || !die_offset(state_->dw, site.unit, &unit)) return std::nullopt;
  SourceDeclaration out{attribute_file(&die, &unit, DW_AT_decl_file), attribute_line(&die, DW_AT_decl_line)};
  if (out.file.empty() || out.line <= 0) return std::nullopt;
  return out;
}

// The concrete scopes that hold `address`, innermost first, ending with the out-of-line
// function: dwarf_getscopes follows an inlined instance into its abstract origin, so the chain
// above the innermost function-like scope is taken from dwarf_getscopes_die.
static std::vector<Dwarf_Die> concrete_function_scopes(Dwarf_Die* unit, uint64_t address) {
  std::vector<Dwarf_Die> out;
  Dwarf_Die* raw = nullptr;
  const int n = dwarf_getscopes(unit, address, &raw);
  std::unique_ptr<Dwarf_Die, decltype(&std::free)> scopes(raw, &std::free);
  Dwarf_Die* innermost = nullptr;
  for (int i = 0; i < n && innermost == nullptr; ++i) {
    const int tag = dwarf_tag(&scopes.get()[i]);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) innermost = &scopes.get()[i];
  }
  if (innermost == nullptr) return out;
  Dwarf_Die* raw_chain = nullptr;
  const int m = dwarf_getscopes_die(innermost, &raw_chain);
  std::unique_ptr<Dwarf_Die, decltype(&std::free)> chain(raw_chain, &std::free);
  for (int i = 0; i < m; ++i) {
    const int tag = dwarf_tag(&chain.get()[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    out.push_back(chain.get()[i]);
    if (tag == DW_TAG_subprogram) break;
  }
  return out;
}


namespace {

// The line perf probe -L reports for an address: a function's declaration line at its entry,
// else the first statement row at the greatest row address not above it (perf's
// cu_find_lineinfo). A line is numbered only when its rows map back to it.
std::optional<std::pair<std::string, int>> reported_line(Dwarf_Die* unit, uint64_t address) {
  std::vector<Dwarf_Die> scopes = concrete_function_scopes(unit, address);
  if (!scopes.empty() && dwarf_tag(&scopes.back()) == DW_TAG_subprogram) {
    std::optional<std::pair<uint64_t, uint64_t>> range = code_range(&scopes.back());
    if (range && range->first == address)
      return std::pair<std::string, int>(attribute_file(&scopes.back(), unit, DW_AT_decl_file), attribute_line(&scopes.back(), DW_AT_decl_line));
  }
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(unit, &lines, &count) != 0 || count == 0) return std::nullopt;
  auto address_of = [&](size_t i) {
    Dwarf_Addr a = 0;
    dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
    return a;
  };
  size_t low = 0, high = count - 1;  // the last row at or below the address
  while (low < high) {
    const size_t mid = high - (high - low) / 2;
    if (address < address_of(mid)) high = mid - 1;
    else low = mid;
  }
  const Dwarf_Addr at = address_of(low);
  while (low > 0 && address_of(low - 1) == at) --low;
  for (size_t i = low; i < count; ++i) {
    Dwarf_Line* line = dwarf_onesrcline(lines, i);
    bool statement = false;
    if (address_of(i) > address || dwarf_linebeginstatement(line, &statement) != 0) return std::nullopt;
    if (!statement) continue;
    int number = 0;
    const char* name = dwarf_linesrc(line, nullptr, nullptr);
    if (name == nullptr || dwarf_lineno(line, &number) != 0) return std::nullopt;
    return std::pair<std::string, int>(file_in_cu(name, unit), number);
  }
  return std::nullopt;
}

// The innermost inlined instance inside `function` whose code holds `address`.
bool innermost_inlined(Dwarf_Die* function, uint64_t address, Dwarf_Die* out) {
  bool found = false;
  Dwarf_Die parent = *function;
  for (bool deeper = true; deeper;) {
    deeper = false;
    Dwarf_Die child;
    if (dwarf_child(&parent, &child) != 0) break;
    do {
      const int tag = dwarf_tag(&child);
      if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) && has_pc(&child, address)) {
        if (tag == DW_TAG_inlined_subroutine) {
          *out = child;
          found = true;
        }
        parent = child;
        deeper = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  return found;
}

// Function lines the line table leaves out, as perf adds them for -L: a function's
// declaration line at its entry, and its inlined callees' call lines at their entries (the
// callees' own declarations and deeper calls too when `recursive`).
void listing_function_rows(Dwarf_Die* function, Dwarf_Die* unit, bool recursive, std::vector<LineRow>& rows) {
  if (std::optional<std::pair<uint64_t, uint64_t>> range = code_range(function))
    rows.push_back(LineRow{attribute_file(function, unit, DW_AT_decl_file), attribute_line(function, DW_AT_decl_line), range->first});
  auto walk = [&](auto&& self, Dwarf_Die* parent) -> void {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      std::optional<std::pair<uint64_t, uint64_t>> range;
      if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) {
        range = code_range(&child);
        if (range) rows.push_back(LineRow{attribute_file(&child, unit, DW_AT_call_file), attribute_line(&child, DW_AT_call_line), range->first});
        if (!recursive) continue;
        if (range) rows.push_back(LineRow{attribute_file(&child, unit, DW_AT_decl_file), attribute_line(&child, DW_AT_decl_line), range->first});
      }
      self(self, &child);
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  walk(walk, function);
}

}  // namespace

namespace {

// perf's rows of a function's own code (die_walk_lines on a function): its statement rows,
// where a row inside an inlined callee counts only as that callee's call line or when the
// callee is the function again (recursion inlined); then its declaration line at its entry
// and its direct callees' call lines at theirs.
std::vector<LineRow> own_rows(Dwarf_Die* function, Dwarf_Die* unit) {
  const std::string decl_file = attribute_file(function, unit, DW_AT_decl_file);
  const int decl_line = attribute_line(function, DW_AT_decl_line);
  std::vector<LineRow> rows;
  for (LineRow& row : statement_rows(unit)) {
    if (!has_pc(function, row.address)) continue;
    Dwarf_Die callee;
    if (innermost_inlined(function, row.address, &callee) &&
        !(attribute_file(&callee, unit, DW_AT_call_file) == row.file && attribute_line(&callee, DW_AT_call_line) == row.line) &&
        !(attribute_line(&callee, DW_AT_decl_line) == decl_line && attribute_file(&callee, unit, DW_AT_decl_file) == decl_file))
      continue;
    rows.push_back(std::move(row));
  }
  listing_function_rows(function, unit, false, rows);
  return rows;
}

// The function lines of every function in a unit, inlined callees included (perf's walk of a
// whole unit's lines adds them).
void all_function_rows(Dwarf_Die* unit, std::vector<LineRow>& rows) {
  std::pair<Dwarf_Die*, std::vector<LineRow>*> context(unit, &rows);
  dwarf_getfuncs(
      unit,
      [](Dwarf_Die* f, void* arg) {
        auto* c = static_cast<std::pair<Dwarf_Die*, std::vector<LineRow>*>*>(arg);
        listing_function_rows(f, c->first, true, *c->second);
        return static_cast<int>(DWARF_CB_OK);
      },
      &context, 0);
}

// The function a line probe at `address` belongs to (perf's find_best_scope): of the functions
// and inlined instances holding the address, declared in the line's file, the one named
// `prefer` when given, else the one declared nearest above the line; the innermost otherwise.
std::optional<DwarfProbeSite> best_scope(Dwarf_Die* unit, uint64_t address, const std::string& file, int line, std::string_view prefer) {
  std::vector<Dwarf_Die> scopes = concrete_function_scopes(unit, address);
  if (scopes.empty() || dwarf_tag(&scopes.back()) != DW_TAG_subprogram) return std::nullopt;
  Dwarf_Die& outer = scopes.back();
  size_t best = 0;
  int best_distance = -1;
  for (size_t i = 0; i < scopes.size(); ++i) {
    if (attribute_file(&scopes[i], unit, DW_AT_decl_file) != file) continue;
    const char* name = die_name(&scopes[i]);
    if (!prefer.empty()) {
      if (name != nullptr && glob_match(prefer, name)) {
        best = i;
        break;
      }
      continue;
    }
    const int distance = line - attribute_line(&scopes[i], DW_AT_decl_line);
    if (distance >= 0 && (best_distance < 0 || distance < best_distance)) {
      best = i;
      best_distance = distance;
    }
  }
  Dwarf_Die& inner = scopes[best];
  std::optional<std::pair<uint64_t, uint64_t>> range = code_range(&inner), outer_range = code_range(&outer);
  if (!range || !outer_range) return std::nullopt;
  const char* name = die_name(&inner);
  const char* outer_name = die_name(&outer);
  return DwarfProbeSite{name ? name : "", range->first, range->second, dwarf_tag(&inner) == DW_TAG_inlined_subroutine, dwarf_dieoffset(&inner),
                        dwarf_dieoffset(&outer), dwarf_dieoffset(unit), outer_name ? outer_name : "", outer_range->first};
}

// The rows a walk of `unit` takes: `within`'s own rows when it is given (and in this unit), else
// every statement row and function line of the unit.
std::vector<LineRow> walked_rows(Dwarf* dwarf, Dwarf_Die* unit, const DwarfProbeSite* within) {
  Dwarf_Die function;
  if (within != nullptr && die_offset(dwarf, within->scope, &function)) return own_rows(&function, unit);
  std::vector<LineRow> rows = statement_rows(unit);
  all_function_rows(unit, rows);
  return rows;
}

// `visit` for `within`'s compile unit when it is given, else for every unit.
template <typename Visit>
void for_each_unit(Dwarf* dwarf, const DwarfProbeSite* within, Visit&& visit) {
  Dwarf_Die unit;
  if (within != nullptr) {
    if (die_offset(dwarf, within->unit, &unit)) visit(&unit);
    return;
  }
  Dwarf_Off offset = 0, next = 0;
  size_t header_size = 0;
  for (; dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0; offset = next)
    if (dwarf_offdie(dwarf, offset + header_size, &unit) != nullptr) visit(&unit);
}

}  // namespace

std::vector<LineProbe> ProbeDebugInfo::line_probes(std::string_view file, const std::vector<int>& lines, const DwarfProbeSite* within,
                                                   std::string_view prefer_function) const {
  Dwarf* dwarf = state_->dw;
  const std::set<int> wanted(lines.begin(), lines.end());
  std::vector<LineProbe> out;
  std::set<std::pair<int, uint64_t>> seen;
  for_each_unit(dwarf, within, [&](Dwarf_Die* unit) {
    for (const LineRow& row : walked_rows(dwarf, unit, within)) {
      if (!wanted.count(row.line) || !tail_matches(row.file, file) || !seen.emplace(row.line, row.address).second) continue;
      std::optional<DwarfProbeSite> scope = within != nullptr ? std::optional<DwarfProbeSite>(*within)
                                                              : best_scope(unit, row.address, row.file, row.line, prefer_function);
      if (scope) out.push_back(LineProbe{row.address, row.line, *scope});
    }
  });
  return out;
}

std::optional<ProbeDebugInfo::PointName> ProbeDebugInfo::point_at(uint64_t address) const {
  Dwarf_Die unit;
  if (dwarf_addrdie(state_->dw, address, &unit) == nullptr) return std::nullopt;
  std::vector<Dwarf_Die> scopes = concrete_function_scopes(&unit, address);
  if (scopes.empty() || dwarf_tag(&scopes.back()) != DW_TAG_subprogram) return std::nullopt;
  Dwarf_Die function = scopes.back();
  std::optional<std::pair<uint64_t, uint64_t>> range = code_range(&function);
  const char* name = shown_function_name(&function);
  if (!range || name == nullptr) return std::nullopt;
  PointName out{name, 0, 0, attribute_file(&function, &unit, DW_AT_decl_file),
                attribute_file(&function, &unit, DW_AT_decl_file, false)};
  if (address == range->first) return out;  // the entry: relative line 0
  std::optional<std::pair<std::string, int>> line = reported_line(&unit, address);
  int base_line = attribute_line(&function, DW_AT_decl_line);
  std::string base_file = out.file;
  std::string base_shown_file = out.shown_file;
  // Into the inlined functions holding the address, outermost first: at an instance's entry
  // the line is its call line; inside its body it counts from the instance's declaration.
  for (auto it = scopes.rbegin() + 1; it != scopes.rend(); ++it) {
    std::optional<std::pair<uint64_t, uint64_t>> inlined = code_range(&*it);
    if (inlined && inlined->first == address) {
      line = std::pair<std::string, int>(attribute_file(&*it, &unit, DW_AT_call_file), attribute_line(&*it, DW_AT_call_line));
      break;
    }
    const char* inlined_name = die_name(&*it);
    if (inlined_name == nullptr) break;
    out.function = inlined_name;
    base_line = attribute_line(&*it, DW_AT_decl_line);
    base_file = attribute_file(&*it, &unit, DW_AT_decl_file);
    base_shown_file = attribute_file(&*it, &unit, DW_AT_decl_file, false);
  }
  if (line && line->second > 0 && line->first == base_file) {
    out.relative_line = line->second - base_line;
    out.file = base_file;
    out.shown_file = base_shown_file;
  } else {
    out.function = name;
    out.offset = address - range->first;
  }
  return out;
}

std::vector<int> ProbeDebugInfo::listing_lines(std::string_view file, const DwarfProbeSite* within) const {
  Dwarf* dwarf = state_->dw;
  std::set<int> out;
  for_each_unit(dwarf, within, [&](Dwarf_Die* unit) {
    for (const LineRow& row : walked_rows(dwarf, unit, within)) {
      if (row.line <= 0 || !tail_matches(row.file, file)) continue;
      std::optional<std::pair<std::string, int>> back = reported_line(unit, row.address);
      if (back && back->second == row.line && back->first == row.file) out.insert(row.line);
    }
  });
  return {out.begin(), out.end()};
}
}  // namespace vperf::symbols
