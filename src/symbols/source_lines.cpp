#include "symbols/source_lines.h"

#include <dwarf.h>
#include <fcntl.h>

#include <cstdlib>
#include <memory>
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

}  // namespace

Result<DwarfInfo> DwarfInfo::open(const std::filesystem::path& path) {
  DwarfInfo info;
  Result<ScopedFd> fd = open_regular_file(path);
  if (!fd) return fd.error();
  info.fd_ = std::move(fd).value();
  info.dwarf_ = dwarf_begin(info.fd_.get(), DWARF_C_READ);
  if (info.dwarf_ == nullptr) return Error{path.string() + ": no DWARF: " + dwarf_errmsg(-1)};
  return info;
}

DwarfInfo::DwarfInfo(DwarfInfo&& other) noexcept : fd_(std::move(other.fd_)), dwarf_(std::exchange(other.dwarf_, nullptr)) {}

DwarfInfo& DwarfInfo::operator=(DwarfInfo&& other) noexcept {
  if (this != &other) {
    if (dwarf_ != nullptr) dwarf_end(dwarf_);
    fd_ = std::move(other.fd_);
    dwarf_ = std::exchange(other.dwarf_, nullptr);
  }
  return *this;
}

DwarfInfo::~DwarfInfo() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

std::optional<SourceLocation> DwarfInfo::line_at(uint64_t vaddr) const {
  Dwarf_Die cu;
  if (dwarf_addrdie(dwarf_, vaddr, &cu) == nullptr) return std::nullopt;
  Dwarf_Line* line = dwarf_getsrc_die(&cu, vaddr);
  if (line == nullptr) return std::nullopt;
  SourceLocation loc;
  if (const char* file = dwarf_linesrc(line, nullptr, nullptr)) loc.file = file_in_cu(file, &cu);
  dwarf_lineno(line, &loc.line);
  dwarf_linecol(line, &loc.column);
  return loc;
}

Result<std::vector<InlineFrame>> DwarfInfo::frames_at(uint64_t vaddr) const {
  Dwarf_Die cu;
  if (dwarf_addrdie(dwarf_, vaddr, &cu) == nullptr) return Error{"no DWARF compile unit covers " + hex(vaddr)};
  Dwarf_Die* raw_scopes = nullptr;
  int n = dwarf_getscopes(&cu, vaddr, &raw_scopes);
  if (n < 0) return Error{std::string("dwarf_getscopes at ") + hex(vaddr) + ": " + dwarf_errmsg(-1)};
  std::unique_ptr<Dwarf_Die, decltype(&std::free)> scopes(raw_scopes, &std::free);

  // dwarf_getscopes follows an inlined instance into its abstract origin, not to its call
  // site; so take the innermost function-like scope and walk its concrete parents with
  // dwarf_getscopes_die (what eu-addr2line -i does).
  Dwarf_Die* innermost = nullptr;
  for (int i = 0; i < n && innermost == nullptr; ++i) {
    int tag = dwarf_tag(&scopes.get()[i]);
    if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) innermost = &scopes.get()[i];
  }
  if (innermost == nullptr) return Error{"no function in the DWARF scopes at " + hex(vaddr)};
  Dwarf_Die* raw_chain = nullptr;
  int m = dwarf_getscopes_die(innermost, &raw_chain);
  if (m < 0) return Error{std::string("dwarf_getscopes_die at ") + hex(vaddr) + ": " + dwarf_errmsg(-1)};
  std::unique_ptr<Dwarf_Die, decltype(&std::free)> chain(raw_chain, &std::free);

  std::vector<InlineFrame> frames;
  SourceLocation here = line_at(vaddr).value_or(SourceLocation{});
  for (int i = 0; i < m; ++i) {
    Dwarf_Die* scope = &chain.get()[i];
    int tag = dwarf_tag(scope);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    frames.push_back(InlineFrame{function_name(scope), here, tag == DW_TAG_inlined_subroutine});
    if (tag == DW_TAG_subprogram) break;  // the out-of-line owner: the chain ends here
    here = call_site(scope, &cu);
  }
  if (frames.empty()) return Error{"no function in the DWARF scopes at " + hex(vaddr)};
  return frames;
}

}  // namespace vperf::symbols
