#include "symbols/source_lines.h"

#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/files.h"
#include "core/strings.h"
#include "symbols/demangle.h"

namespace vperf::symbols {
namespace {

std::string function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int name_attr : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name_attr, &attr) != nullptr) {
      if (const char* linkage = dwarf_formstring(&attr)) return demangle(linkage);
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr) {
    if (const char* name = dwarf_formstring(&attr)) return name;
  }
  return "[unknown]";
}

}  // namespace

std::string file_in_cu(const char* file, Dwarf_Die* cu) {
  if (file[0] == '/') return file;
  Dwarf_Attribute attr;
  const char* dir = dwarf_attr(cu, DW_AT_comp_dir, &attr) != nullptr ? dwarf_formstring(&attr) : nullptr;
  if (dir == nullptr || dir[0] == '\0') return file;
  return std::string(dir) + "/" + file;
}

namespace {

SourceLocation call_site(Dwarf_Die* inlined, Dwarf_Die* cu) {
  SourceLocation loc;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  if (dwarf_attr(inlined, DW_AT_call_file, &attr) != nullptr && dwarf_formudata(&attr, &value) == 0 &&
      dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && value < nfiles) {
    if (const char* file = dwarf_filesrc(files, value, nullptr, nullptr)) loc.file = file_in_cu(file, cu);
  }
  if (dwarf_attr(inlined, DW_AT_call_line, &attr) != nullptr && dwarf_formudata(&attr, &value) == 0)
    loc.line = static_cast<int>(value);
  if (dwarf_attr(inlined, DW_AT_call_column, &attr) != nullptr && dwarf_formudata(&attr, &value) == 0)
    loc.column = static_cast<int>(value);
  return loc;
}

// A nest deeper than this is not code a compiler wrote (perf stops an inline chain at 1024).
constexpr size_t kMaxNesting = 1024;

struct FunctionRange {
  uint64_t low, high;
  uint32_t depth;  // inlining depth: an instance inside another sorts after it at one start
  uint32_t function;
};

void collect_functions(Dwarf_Die* parent, uint32_t caller, uint32_t depth, size_t nesting,
                       DwarfInfo::CuFunctions& out, std::vector<FunctionRange>& ranges) {
  if (nesting > kMaxNesting) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    switch (tag) {
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine: {
        // A declaration or an abstract instance has no code: nothing at an address is it.
        const uint32_t id = static_cast<uint32_t>(out.functions.size());
        const bool inlined = tag == DW_TAG_inlined_subroutine;
        const uint32_t own_depth = inlined ? depth + 1 : 0;
        bool has_code = false;
        Dwarf_Addr base = 0, low = 0, high = 0;
        for (ptrdiff_t at = 0; (at = dwarf_ranges(&child, at, &base, &low, &high)) > 0;) {
          if (high <= low) continue;
          ranges.push_back(FunctionRange{low, high, own_depth, id});
          has_code = true;
        }
        if (!has_code) break;
        out.functions.push_back(DwarfInfo::CuFunctions::Function{child, inlined ? caller : DwarfInfo::CuFunctions::kNone, inlined});
        collect_functions(&child, id, own_depth, nesting + 1, out, ranges);
        break;
      }
      // Scopes that hold functions without being one: their functions belong to the caller.
      case DW_TAG_lexical_block:
      case DW_TAG_namespace:
      case DW_TAG_try_block:
      case DW_TAG_catch_block:
      case DW_TAG_module:
        collect_functions(&child, caller, depth, nesting + 1, out, ranges);
        break;
      default:  // types, variables, parameters: no code of their own
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

DwarfInfo::CuFunctions DwarfInfo::CuFunctions::index(Dwarf_Die* cu) {
  CuFunctions out;
  std::vector<FunctionRange> ranges;
  collect_functions(cu, kNone, 0, 0, out, ranges);
  // Sweep the ranges in address order, an enclosing function before what it encloses at the
  // same start, keeping the open ones on a stack: the top is the innermost at any address. A
  // range that runs past its encloser's end (not something a compiler writes) is cut there.
  std::sort(ranges.begin(), ranges.end(), [](const FunctionRange& a, const FunctionRange& b) {
    return a.low != b.low ? a.low < b.low : a.depth < b.depth;
  });
  struct Open {
    uint64_t high;
    uint32_t function;
  };
  std::vector<Open> open;
  uint64_t at = 0;
  auto emit = [&](uint64_t end, uint32_t function) {
    if (end <= at) return;
    if (!out.segments.empty() && out.segments.back().end == at && out.segments.back().function == function)
      out.segments.back().end = end;
    else
      out.segments.push_back(Segment{at, end, function});
    at = end;
  };
  for (const FunctionRange& r : ranges) {
    while (!open.empty() && open.back().high <= r.low) {
      emit(open.back().high, open.back().function);
      open.pop_back();
    }
    if (!open.empty()) emit(r.low, open.back().function);
    at = r.low;
    open.push_back(Open{open.empty() ? r.high : std::min(r.high, open.back().high), r.function});
  }
  while (!open.empty()) {
    emit(open.back().high, open.back().function);
    open.pop_back();
  }
  return out;
}

uint32_t DwarfInfo::CuFunctions::innermost_at(uint64_t vaddr) const {
  auto after = std::upper_bound(segments.begin(), segments.end(), vaddr,
                                [](uint64_t a, const Segment& s) { return a < s.start; });
  if (after == segments.begin()) return kNone;
  const Segment& s = *(after - 1);
  return vaddr < s.end ? s.function : kNone;
}

struct DwarfInfo::IndexCache {
  std::mutex mutex;
  std::unordered_map<Dwarf_Off, std::unique_ptr<const CuFunctions>> units;  // by the unit's DIE offset
};

const DwarfInfo::CuFunctions& DwarfInfo::functions_of(Dwarf_Die* cu) const {
  std::lock_guard lock(index_cache_->mutex);
  auto [it, added] = index_cache_->units.try_emplace(dwarf_dieoffset(cu));
  if (added) it->second = std::make_unique<const CuFunctions>(CuFunctions::index(cu));
  return *it->second;
}

Result<DwarfInfo> DwarfInfo::open(const std::filesystem::path& path) {
  DwarfInfo info;
  Result<ScopedFd> fd = open_regular_file(path);
  if (!fd) return fd.error();
  info.fd_ = std::move(fd).value();
  info.dwarf_ = dwarf_begin(info.fd_.get(), DWARF_C_READ);
  if (info.dwarf_ == nullptr) return Error{path.string() + ": no DWARF: " + dwarf_errmsg(-1)};
  info.index_cache_ = std::make_unique<IndexCache>();
  if (Elf* elf = dwarf_getelf(info.dwarf_)) {
    size_t segments = 0;
    if (elf_getphdrnum(elf, &segments) == 0)
      for (size_t i = 0; i < segments; ++i) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X))
          info.code_ranges_.emplace_back(phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz);
      }
  }
  return info;
}

DwarfInfo::DwarfInfo(DwarfInfo&& other) noexcept
    : fd_(std::move(other.fd_)),
      dwarf_(std::exchange(other.dwarf_, nullptr)),
      index_cache_(std::move(other.index_cache_)),
      code_ranges_(std::move(other.code_ranges_)) {}

DwarfInfo& DwarfInfo::operator=(DwarfInfo&& other) noexcept {
  if (this != &other) {
    if (dwarf_ != nullptr) dwarf_end(dwarf_);
    fd_ = std::move(other.fd_);
    dwarf_ = std::exchange(other.dwarf_, nullptr);
    index_cache_ = std::move(other.index_cache_);
    code_ranges_ = std::move(other.code_ranges_);
  }
  return *this;
}

DwarfInfo::~DwarfInfo() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

namespace {

// The line-table row of `vaddr` in compile unit `cu`.
std::optional<SourceLocation> line_in_cu(Dwarf_Die* cu, uint64_t vaddr) {
  Dwarf_Line* line = dwarf_getsrc_die(cu, vaddr);
  if (line == nullptr) return std::nullopt;
  SourceLocation loc;
  if (const char* file = dwarf_linesrc(line, nullptr, nullptr)) loc.file = file_in_cu(file, cu);
  dwarf_lineno(line, &loc.line);
  dwarf_linecol(line, &loc.column);
  return loc;
}

}  // namespace

Dwarf_Die* DwarfInfo::code_unit(uint64_t vaddr, Dwarf_Die* cu) const {
  if (!code_ranges_.empty() &&
      std::none_of(code_ranges_.begin(), code_ranges_.end(), [&](const auto& r) { return vaddr >= r.first && vaddr < r.second; }))
    return nullptr;
  return dwarf_addrdie(dwarf_, vaddr, cu);
}

std::optional<SourceLocation> DwarfInfo::line_at(uint64_t vaddr) const {
  Dwarf_Die cu;
  if (code_unit(vaddr, &cu) == nullptr) return std::nullopt;
  return line_in_cu(&cu, vaddr);
}

bool DwarfInfo::covers(uint64_t vaddr) const {
  Dwarf_Die cu;
  return code_unit(vaddr, &cu) != nullptr;
}

Result<std::vector<InlineFrame>> DwarfInfo::frames_at(uint64_t vaddr) const {
  Dwarf_Die cu;
  if (code_unit(vaddr, &cu) == nullptr) return Error{"no DWARF compile unit covers " + hex(vaddr)};
  const CuFunctions& unit = functions_of(&cu);
  uint32_t at = unit.innermost_at(vaddr);
  if (at == CuFunctions::kNone) return Error{"no function in the DWARF scopes at " + hex(vaddr)};
  // Innermost first: each inlined instance, then the function it is inlined into, at the call
  // site; the chain ends at the out-of-line subprogram.
  std::vector<InlineFrame> frames;
  SourceLocation here = line_in_cu(&cu, vaddr).value_or(SourceLocation{});
  for (; at != CuFunctions::kNone && frames.size() < kMaxNesting; at = unit.functions[at].caller) {
    Dwarf_Die die = unit.functions[at].die;
    const bool inlined = unit.functions[at].inlined;
    frames.push_back(InlineFrame{function_name(&die), here, inlined});
    if (inlined) here = call_site(&die, &cu);
  }
  return frames;
}

}  // namespace vperf::symbols
