#pragma once
// What perf probe reads from DWARF to place a probe and fetch its arguments (perf 6.1's
// probe-finder rules, written from its documented behaviour and checked against its output):
//
// - Sites: every out-of-line instance of a function (a DW_TAG_subprogram with code) and every
//   place it was inlined (DW_TAG_inlined_subroutine), by DW_AT_name, in DIE order.
// - The prologue: a uprobe at a function's entry with variable arguments moves past the
//   prologue (to the function's second line-table row) when the compile unit was built without
//   optimisation (no location lists in it), where arguments live in the frame only after the
//   prologue stores them. Optimised code keeps the entry: its parameters are in registers there.
// - Variables: looked up in the site's scope (its lexical blocks that hold the address, depth
//   first), their DWARF location evaluated at the address: a register (DW_OP_reg*), a register
//   plus offset (DW_OP_breg*), or the frame base plus offset (DW_OP_fbreg, with the frame base
//   DW_OP_call_frame_cfa evaluated through .eh_frame or .debug_frame). A parameter whose location
//   list starts just after the entry is taken from its first location (perf's "fuzzed by fentry"
//   rule).
// - Fields: "->member" dereferences a pointer to a struct or union, ".member" moves within one,
//   "[N]" indexes an array (within) or a pointer (dereference).
// - Types: a cast string/ustring on a char pointer or array fetches the string (one more
//   dereference for a pointer); another explicit type is used as given; otherwise a base type's
//   size and signedness (s for signed, x for the rest: pointers, unsigned, structs), none when
//   DWARF gives no size (arrays).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace vperf::symbols {

// One place a probe on a function goes.
struct DwarfProbeSite {
  std::string function;   // the function's DW_AT_name
  uint64_t entry = 0;     // ELF virtual address of the (inlined) instance's entry
  uint64_t high = 0;      // ... and of the end of its first range (exclusive)
  bool inlined = false;
  uint64_t scope = 0;       // DIE offsets: the subprogram or inlined instance,
  uint64_t subprogram = 0;  // the out-of-line function whose frame it runs in,
  uint64_t unit = 0;        // and its compile unit
  std::string owner;        // the out-of-line function's DW_AT_name (the function itself unless inlined)
  uint64_t owner_entry = 0;  // ... and its entry
};

// A probe on a source line: one statement address of it, in the function (or inlined
// instance) whose code holds the address.
struct LineProbe {
  uint64_t address = 0;
  int line = 0;
  DwarfProbeSite scope;
};

// Where a function is declared: its source file (absolute when DWARF gives the directory) and line.
struct SourceDeclaration {
  std::string file;
  int line = 0;
};

// A variable as a uprobe fetches it.
struct VariableFetch {
  std::string fetch;       // "%di", "+8(%cx)", "+0(+16(-48(%bp)))"
  std::string type;        // "s32", "x64", "string"; empty: the kernel's default
  std::string field_name;  // the last member named in the fields ("weight" for r->weight), else empty
};

// Where the DWARF of `binary` is: its separate debuginfo under `debug_dirs` (by build-id, then
// by path and .gnu_debuglink, a stale build-id skipped), else the binary itself, else what the
// debuginfod servers of DEBUGINFOD_URLS give for its build-id. `missing` is set, when there is
// none, to the build-id path a debug package would install (and what debuginfod answered).
struct DebuginfoLookup {
  std::optional<std::filesystem::path> file;
  std::string missing;  // "/usr/lib/debug/.build-id/ab/cdef....debug"
};
DebuginfoLookup find_probe_debuginfo(const std::filesystem::path& binary, const std::vector<std::filesystem::path>& debug_dirs);

class ProbeDebugInfo {
 public:
  // `debug_file` holds .debug_info (the binary or its separate debuginfo); `binary` is the
  // probed file, whose .eh_frame gives the frame base where .debug_frame does not.
  // `kernel`: the kernel image (vmlinux), whose statics kprobes fetch by symbol; a module (.ko,
  // ET_REL) is taken as kernel code by itself.
  static Result<ProbeDebugInfo> open(const std::filesystem::path& debug_file, const std::filesystem::path& binary, bool kernel = false);
  ProbeDebugInfo(ProbeDebugInfo&&) noexcept;
  ProbeDebugInfo& operator=(ProbeDebugInfo&&) noexcept;
  ~ProbeDebugInfo();

  // The sites of functions whose DW_AT_name matches `pattern` (a glob); `with_inlines` false
  // leaves out inlined instances (--no-inlines).
  std::vector<DwarfProbeSite> function_sites(std::string_view pattern, bool with_inlines) const;

  // The DW_AT_name of the out-of-line function whose code starts at `address` (an alias
  // symbol's target: libc's malloc is __libc_malloc in DWARF), empty when none does.
  std::string function_at(uint64_t address) const;

  // The statement addresses of `lines` of the source file whose path ends with `file` (perf's
  // tail match): every line-table row that begins a statement, and the entries of functions
  // declared (or inlined, at their call lines) there; in line-table order, one per address and
  // line. `within`: only the rows of that function's own code (its inlined callees' rows left
  // out), as a lazy pattern in FUNC;PATTERN walks them.
  // `prefer_function`: name each probe after the function of that name holding it (FUNC:RLN),
  // else after the function declared nearest above the line.
  std::vector<LineProbe> line_probes(std::string_view file, const std::vector<int>& lines, const DwarfProbeSite* within = nullptr,
                                     std::string_view prefer_function = {}) const;

  // The source file and line where a site's function is declared.
  std::optional<SourceDeclaration> declaration(const DwarfProbeSite& site) const;

  // The lines perf probe -L numbers: lines of `file` with a statement row whose address maps
  // back to the same line (in `within`'s own code when given, else anywhere in the units that
  // have the file), and the declaration lines of the functions there.
  std::vector<int> listing_lines(std::string_view file, const DwarfProbeSite* within = nullptr) const;

  // The source files of the compile units whose path ends with `file`, as DWARF spells them.
  std::vector<std::string> source_files(std::string_view file) const;

  // Where `address` is in source terms, as perf probe -l names a probe point: the out-of-line
  // function (or the inlined function whose body holds it), and the line relative to its
  // declaration, or else the byte offset from the out-of-line function's entry; with the
  // declaring file. nullopt when no function's code holds it.
  struct PointName {
    std::string function;
    int relative_line = 0;  // 0 with offset 0: the entry
    uint64_t offset = 0;
    std::string file;
    // The declaring file as the line table names it (relative names stay relative), which
    // perf probe -l prints: "./malloc/malloc.c" where `file` is "./malloc/./malloc/malloc.c".
    std::string shown_file;
  };
  std::optional<PointName> point_at(uint64_t address) const;

  // Whether the site's compile unit was built with optimisation (has location lists).
  bool optimized(const DwarfProbeSite& site) const;
  // The address after the site's prologue (the function's second line-table row).
  uint64_t after_prologue(const DwarfProbeSite& site) const;

  // `variable` with `fields` at `address` in the site, cast to `type` (may be empty).
  Result<VariableFetch> fetch(const DwarfProbeSite& site, uint64_t address, std::string_view variable,
                              const std::vector<std::string>& fields, std::string_view type) const;

  // The names $params (formal parameters) or $vars (and local variables in scope) stand for at
  // `address`: those whose location is known there, in DIE order.
  std::vector<std::string> scope_variables(const DwarfProbeSite& site, uint64_t address, bool with_locals) const;

  // perf probe -V's lines for the site: "TYPE\tNAME" of every parameter and local variable
  // whose location is known at `address` (the unit's globals and statics too with `externs`),
  // sorted as perf sorts them. `ranges` (--range) tags each [VAL], [INV] (valid only later in
  // the site) or [EXT] and appends where a local is valid: "\t@<FUNC+[START-END,...]>".
  std::vector<std::string> available_variables(const DwarfProbeSite& site, uint64_t address, bool externs, bool ranges) const;

  struct State;  // libdw's handles, defined in the .cpp

 private:
  explicit ProbeDebugInfo(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace vperf::symbols
