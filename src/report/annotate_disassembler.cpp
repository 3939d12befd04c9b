#include "report/annotate_disassembler.h"

#include <capstone/capstone.h>

#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "core/shared_library.h"
#include "core/strings.h"

namespace vperf::report {
namespace {

// capstone's functions, loaded by the first Disassembler rather than linked, so only annotate
// loads the library (core/shared_library.h). Each member has the declared function's name and type.
struct CapstoneApi {
  decltype(&::cs_open) cs_open = nullptr;
  decltype(&::cs_close) cs_close = nullptr;
  decltype(&::cs_option) cs_option = nullptr;
  decltype(&::cs_strerror) cs_strerror = nullptr;
  decltype(&::cs_malloc) cs_malloc = nullptr;
  decltype(&::cs_free) cs_free = nullptr;
  decltype(&::cs_disasm_iter) cs_disasm_iter = nullptr;
  decltype(&::cs_insn_group) cs_insn_group = nullptr;
  decltype(&::cs_insn_name) cs_insn_name = nullptr;
  decltype(&::cs_reg_name) cs_reg_name = nullptr;

  static Result<CapstoneApi> load() {
    VPERF_TRY(SharedLibrary library, SharedLibrary::open("libcapstone.so.4", "install capstone: apt-get install libcapstone4"));
    CapstoneApi api;
    VPERF_BIND_FUNCTION(library, api, cs_open);
    VPERF_BIND_FUNCTION(library, api, cs_close);
    VPERF_BIND_FUNCTION(library, api, cs_option);
    VPERF_BIND_FUNCTION(library, api, cs_strerror);
    VPERF_BIND_FUNCTION(library, api, cs_malloc);
    VPERF_BIND_FUNCTION(library, api, cs_free);
    VPERF_BIND_FUNCTION(library, api, cs_disasm_iter);
    VPERF_BIND_FUNCTION(library, api, cs_insn_group);
    VPERF_BIND_FUNCTION(library, api, cs_insn_name);
    VPERF_BIND_FUNCTION(library, api, cs_reg_name);
    return api;
  }
};

// Loaded once, by the first Disassembler::x86_64; a Disassembler exists only after it loaded.
const Result<CapstoneApi>& capstone_api() { return loaded_once<CapstoneApi>(); }
const CapstoneApi& capstone() { return capstone_api().value(); }

csh as_csh(size_t handle) { return static_cast<csh>(handle); }

std::string bare_hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%" PRIx64, value);
  return text;
}

// A number as capstone writes one ("8", "-8", "0x3608", "-0x80").
std::optional<int64_t> parse_number(std::string_view text) {
  bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  std::string digits(text);
  char* end = nullptr;
  errno = 0;
  uint64_t magnitude = std::strtoull(digits.c_str(), &end, digits.starts_with("0x") ? 16 : 10);
  if (errno != 0 || end == digits.c_str() || *end != '\0') return std::nullopt;
  return negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
}

// Every way a general-purpose register is named: only these fix an integer operand's size.
bool is_general_register(std::string_view name) {
  static constexpr std::array<std::string_view, 68> kNames = {
      "al",   "ah",   "ax",   "eax",  "rax",  "bl",   "bh",   "bx",   "ebx",  "rbx",  "cl",   "ch",   "cx",  "ecx",
      "rcx",  "dl",   "dh",   "dx",   "edx",  "rdx",  "sil",  "si",   "esi",  "rsi",  "dil",  "di",   "edi", "rdi",
      "bpl",  "bp",   "ebp",  "rbp",  "spl",  "sp",   "esp",  "rsp",  "r8b",  "r8w",  "r8d",  "r8",   "r9b", "r9w",
      "r9d",  "r9",   "r10b", "r10w", "r10d", "r10",  "r11b", "r11w", "r11d", "r11",  "r12b", "r12w", "r12d", "r12",
      "r13b", "r13w", "r13d", "r13",  "r14b", "r14w", "r14d", "r14",  "r15b", "r15w", "r15d", "r15"};
  for (std::string_view n : kNames)
    if (n == name) return true;
  return false;
}

// Shifts and rotates take the count in %cl whatever the operand size.
bool counts_in_cl(std::string_view base) {
  static constexpr std::array<std::string_view, 10> kShifts = {"shl", "shr", "sal", "sar", "rol",
                                                               "ror", "rcl", "rcr", "shld", "shrd"};
  for (std::string_view s : kShifts)
    if (s == base) return true;
  return false;
}

// One-byte opcodes of the string instructions (ins, outs, movs, cmps, stos, lods, scas).
bool is_string_opcode(uint8_t opcode) {
  return (opcode >= 0x6c && opcode <= 0x6f) || (opcode >= 0xa4 && opcode <= 0xa7) || (opcode >= 0xaa && opcode <= 0xaf);
}

// Splits at ", " outside parentheses.
std::vector<std::string> split_operands(std::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    else if (text[i] == ')') --depth;
    else if (text[i] == ',' && depth == 0) {
      parts.emplace_back(text.substr(begin, i - begin));
      begin = i + 1;
      while (begin < text.size() && text[begin] == ' ') ++begin;
      i = begin - 1;
    }
  }
  if (begin < text.size()) parts.emplace_back(text.substr(begin));
  return parts;
}

std::string signed_hex(int64_t value) {
  return value < 0 ? "-" + hex(static_cast<uint64_t>(-value)) : hex(static_cast<uint64_t>(value));
}

uint64_t truncate_to(int64_t value, unsigned bytes) {
  if (bytes == 0 || bytes >= 8) return static_cast<uint64_t>(value);
  return static_cast<uint64_t>(value) & ((uint64_t{1} << (8 * bytes)) - 1);
}

struct OperandFacts {
  unsigned immediate_size = 8;      // bytes, of the first immediate operand
  bool displacement_encoded = false;  // the instruction has displacement bytes
  std::optional<uint64_t> branch_target;
};

std::string objdump_operand(std::string text, const OperandFacts& facts, const AddressNamer& namer) {
  std::string indirect;
  if (text.starts_with("*")) {
    indirect = "*";
    text.erase(0, 1);
  }
  if (text.starts_with("%") && text.find(':') == std::string::npos) return indirect + text;  // a register
  if (text.starts_with("$")) {
    auto value = parse_number(std::string_view(text).substr(1));
    if (!value) return indirect + text;
    return indirect + "$" + hex(truncate_to(*value, facts.immediate_size));
  }
  std::string segment;
  if (text.starts_with("%") && text.find(':') != std::string::npos) {
    segment = text.substr(0, text.find(':') + 1);
    text.erase(0, segment.size());
  }
  size_t paren = text.find('(');
  std::string displacement = text.substr(0, paren);
  std::string base_index = paren == std::string::npos ? "" : text.substr(paren);
  if (paren == std::string::npos && segment.empty() && facts.branch_target) {
    std::string target = bare_hex(*facts.branch_target);
    if (namer) {
      if (auto name = namer(*facts.branch_target)) target += " <" + *name + ">";
    }
    return indirect + target;
  }
  if (auto value = parse_number(displacement)) displacement = paren == std::string::npos ? hex(static_cast<uint64_t>(*value)) : signed_hex(*value);
  else if (displacement.empty() && paren != std::string::npos && (facts.displacement_encoded || base_index.starts_with("(,")))
    displacement = "0x0";
  if (!base_index.empty()) {
    std::vector<std::string> parts = split_operands(std::string_view(base_index).substr(1, base_index.size() - 2));
    if (parts.size() == 2) parts.emplace_back("1");
    std::string joined = "(";
    for (size_t i = 0; i < parts.size(); ++i) joined += (i ? "," : "") + parts[i];
    base_index = joined + ")";
  }
  return indirect + segment + displacement + base_index;
}

// Where objdump names an encoding differently from capstone:
//  - 66 90 is "xchg %ax,%ax" (capstone: nop);
//  - a segment prefix on a multi-byte nop is a prefix word ("cs nopw 0x0(%rax,%rax,1)"), and
//    each 0x66 beyond the operand-size one is "data16";
//  - movd with a 64-bit general register (66 REX.W 0F 6E/7E) is "movq".
void objdump_idioms(const cs_insn& insn, std::string& mnemonic, std::string& operands) {
  if (insn.size == 2 && insn.bytes[0] == 0x66 && insn.bytes[1] == 0x90) {
    mnemonic = "xchg";
    operands = "%ax,%ax";
    return;
  }
  if (insn.id == X86_INS_NOP && operands.size() > 4 && operands[0] == '%' && operands[3] == ':') {
    std::string segment = operands.substr(1, 2);
    operands.erase(0, 4);
    size_t opsize_prefixes = 0;
    while (opsize_prefixes < insn.size && insn.bytes[opsize_prefixes] == 0x66) ++opsize_prefixes;
    std::string prefix;
    for (size_t k = 1; k < opsize_prefixes; ++k) prefix += "data16 ";
    mnemonic = prefix + segment + " " + mnemonic;
    return;
  }
  if (mnemonic == "movd") {
    for (const std::string& operand : split_operands(operands)) {
      std::string_view name = std::string_view(operand).substr(operand.starts_with("%") ? 1 : 0);
      bool wide = operand.starts_with("%r") && is_general_register(name) && !name.ends_with("b") &&
                  !name.ends_with("w") && !name.ends_with("d");
      if (wide) mnemonic = "movq";
    }
  }
}

}  // namespace

std::string objdump_att_mnemonic(const std::string& mnemonic, const std::string& base_name, bool has_sizing_register) {
  size_t space = mnemonic.rfind(' ');
  std::string prefix = space == std::string::npos ? "" : mnemonic.substr(0, space + 1);
  std::string word = space == std::string::npos ? mnemonic : mnemonic.substr(space + 1);
  if (word.size() != base_name.size() + 1 || !word.starts_with(base_name)) return mnemonic;
  char suffix = word.back();
  if (suffix != 'b' && suffix != 'w' && suffix != 'l' && suffix != 'q') return mnemonic;
  static constexpr std::array<std::string_view, 7> kFixedSize = {"call", "ret", "push", "pop", "jmp", "leave", "enter"};
  bool fixed_size = false;
  for (std::string_view f : kFixedSize)
    if (f == base_name) fixed_size = true;
  if (has_sizing_register || (fixed_size && suffix == 'q')) return prefix + base_name;
  return mnemonic;
}

Result<Disassembler> Disassembler::x86_64(AsmSyntax syntax) {
  if (!capstone_api()) return capstone_api().error();
  csh handle = 0;
  if (cs_err err = capstone().cs_open(CS_ARCH_X86, CS_MODE_64, &handle); err != CS_ERR_OK)
    return Error{std::string("capstone: cs_open: ") + capstone().cs_strerror(err)};
  Disassembler d;
  d.handle_ = static_cast<size_t>(handle);
  d.syntax_ = syntax;
  capstone().cs_option(handle, CS_OPT_SYNTAX, syntax == AsmSyntax::Att ? CS_OPT_SYNTAX_ATT : CS_OPT_SYNTAX_INTEL);
  if (cs_err err = static_cast<cs_err>(capstone().cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON)); err != CS_ERR_OK)
    return Error{std::string("capstone: detail mode: ") + capstone().cs_strerror(err)};
  return d;
}

Disassembler::Disassembler(Disassembler&& other) noexcept
    : handle_(std::exchange(other.handle_, 0)), syntax_(other.syntax_) {}

Disassembler& Disassembler::operator=(Disassembler&& other) noexcept {
  if (this != &other) {
    if (handle_ != 0) {
      csh h = as_csh(handle_);
      capstone().cs_close(&h);
    }
    handle_ = std::exchange(other.handle_, 0);
    syntax_ = other.syntax_;
  }
  return *this;
}

Disassembler::~Disassembler() {
  if (handle_ != 0) {
    csh h = as_csh(handle_);
    capstone().cs_close(&h);
  }
}

std::vector<Instruction> Disassembler::disassemble(std::span<const uint8_t> code, uint64_t address,
                                                   const AddressNamer& namer) const {
  std::vector<Instruction> out;
  csh handle = as_csh(handle_);
  cs_insn* insn = capstone().cs_malloc(handle);
  const uint8_t* bytes = code.data();
  size_t left = code.size();
  uint64_t at = address;
  while (left > 0) {
    if (!capstone().cs_disasm_iter(handle, &bytes, &left, &at, insn)) {
      out.push_back(Instruction{at, 1, "(bad)", "", std::nullopt});
      ++bytes;
      --left;
      ++at;
      continue;
    }
    Instruction i;
    i.address = insn->address;
    i.size = insn->size;
    const cs_detail* detail = insn->detail;
    const cs_x86& x86 = detail->x86;
    OperandFacts facts;
    facts.displacement_encoded = x86.encoding.disp_offset != 0;
    bool branch = capstone().cs_insn_group(handle, insn, CS_GRP_JUMP) || capstone().cs_insn_group(handle, insn, CS_GRP_CALL);
    bool sizing_register = false;
    std::string base = capstone().cs_insn_name(handle, insn->id);
    std::optional<uint64_t> rip_target;
    bool immediate_seen = false;
    int register_or_memory_operands = 0;
    for (uint8_t k = 0; k < x86.op_count; ++k)
      if (x86.operands[k].type == X86_OP_REG || x86.operands[k].type == X86_OP_MEM) ++register_or_memory_operands;
    for (uint8_t k = 0; k < x86.op_count; ++k) {
      const cs_x86_op& op = x86.operands[k];
      if (op.type == X86_OP_IMM) {
        if (!immediate_seen) facts.immediate_size = op.size;
        immediate_seen = true;
        if (branch && capstone().cs_insn_group(handle, insn, CS_GRP_BRANCH_RELATIVE)) facts.branch_target = static_cast<uint64_t>(op.imm);
      } else if (op.type == X86_OP_REG) {
        std::string_view name = capstone().cs_reg_name(handle, op.reg);
        // %cl as a shift's count says nothing about the size of what is shifted.
        bool shift_count = name == "cl" && counts_in_cl(base) && register_or_memory_operands > 1;
        if (is_general_register(name) && !shift_count) sizing_register = true;
      } else if (op.type == X86_OP_MEM && op.mem.base == X86_REG_RIP) {
        rip_target = insn->address + insn->size + static_cast<uint64_t>(op.mem.disp);
      }
    }
    i.branch_target = facts.branch_target;
    if (syntax_ == AsmSyntax::Intel) {
      i.mnemonic = insn->mnemonic;
      i.operands = insn->op_str;
    } else {
      i.mnemonic = objdump_att_mnemonic(insn->mnemonic, base, sizing_register);
      std::vector<std::string> operands = split_operands(insn->op_str);
      // Shift and rotate by one (D0/D1) have no immediate: objdump writes "sar %edx".
      if ((x86.opcode[0] == 0xd0 || x86.opcode[0] == 0xd1) && !operands.empty() && operands.front() == "$1")
        operands.erase(operands.begin());
      // xchg with the accumulator (90+r): objdump names %eax first.
      if (insn->id == X86_INS_XCHG && x86.opcode[0] >= 0x91 && x86.opcode[0] <= 0x97 && operands.size() == 2)
        std::swap(operands[0], operands[1]);
      bool string_op = is_string_opcode(x86.opcode[0]) && x86.opcode[1] == 0;
      std::string joined;
      for (const std::string& operand : operands) {
        if (!joined.empty()) joined += ',';
        // objdump writes a string instruction's implicit segments: %ds:(%rsi), %es:(%rdi).
        if (string_op && (operand == "(%rsi)" || operand == "(%esi)")) joined += "%ds:";
        if (string_op && (operand == "(%rdi)" || operand == "(%edi)")) joined += "%es:";
        joined += objdump_operand(operand, facts, namer);
      }
      // stos/lods/scas name their register: objdump drops the suffix it makes redundant.
      bool names_register = false;
      for (const std::string& operand : operands)
        if (operand.starts_with("%") && is_general_register(std::string_view(operand).substr(1))) names_register = true;
      if (string_op && names_register && !i.mnemonic.empty() && i.mnemonic.back() != 's') i.mnemonic.pop_back();
      objdump_idioms(*insn, i.mnemonic, joined);
      if (rip_target) {
        joined += "        # " + bare_hex(*rip_target);
        if (namer) {
          if (auto name = namer(*rip_target)) joined += " <" + *name + ">";
        }
      }
      i.operands = std::move(joined);
    }
    out.push_back(std::move(i));
  }
  capstone().cs_free(insn, 1);
  return out;
}

}  // namespace vperf::report
