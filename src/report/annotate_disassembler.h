#pragma once
// x86-64 disassembly for `vperf annotate`, with capstone (4.x), spelled the way objdump prints it
// (perf annotate runs objdump, so its users read objdump's spelling).
//
// AT&T syntax (the default, as objdump's): capstone's text is rewritten into objdump's
//  - mnemonics: capstone always appends the operand-size suffix (pushq, movl, retq); objdump
//    (binutils >= 2.37) writes it only when no general-purpose register operand gives the
//    size (movq $0x0,-0x8(%rbp), nopl 0x0(%rax)) and never on call/ret/push/pop/jmp/leave,
//    whose size is fixed in 64-bit mode. Mnemonics that are not base name + suffix (movzbl,
//    movslq, cltq, cvtsi2sd) stay as they are.
//  - operands: "," without a space; every immediate and displacement in hex ($0x8, -0x8(%rbp));
//    negative immediates as the operand's two's complement ($0xffffffffffffffff), as objdump;
//    an encoded zero displacement written out (0x0(%rax)); the scale always given with an index
//    register ((%rax,%rax,1)); branch and call targets as "2d98 <spin_leaf_hash+0x38>"; a
//    RIP-relative operand followed by objdump's comment "        # 63f8 <name+0x8>"; string
//    instructions' implicit segments (%ds:(%rsi),%es:(%rdi)).
//  - encodings objdump names differently: 66 90 "xchg %ax,%ax", "cs nopw"/"data16 cs nopw"
//    padding, movd with a 64-bit register "movq", shift by one without "$1", accumulator xchg.
// capstone 4 does not decode every AVX-512 (EVEX) instruction; those show as "(bad)" (see
// docs/annotate.md for what was measured against objdump).
// Intel syntax (-M intel) is capstone's own text ("mov qword ptr [rbp - 8], 0"), not rewritten:
// objdump's Intel spelling differs in more places than is worth imitating.
// Bytes that decode to no instruction are one "(bad)" byte each, as objdump shows them.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace vperf::report {

enum class AsmSyntax : uint8_t { Att, Intel };

struct Instruction {
  uint64_t address = 0;
  uint32_t size = 0;
  std::string mnemonic;  // with prefixes ("lock cmpxchg", "rep stos")
  std::string operands;  // may be empty
  // The address a direct jump or call goes to; nullopt otherwise.
  std::optional<uint64_t> branch_target;
  bool operator==(const Instruction&) const = default;
};

// Names an address as objdump's "<name+0xoff>" does, without the brackets ("name+0x38",
// "name"); nullopt when no symbol holds it.
using AddressNamer = std::function<std::optional<std::string>(uint64_t address)>;

class Disassembler {
 public:
  static Result<Disassembler> x86_64(AsmSyntax syntax);
  Disassembler(Disassembler&& other) noexcept;
  Disassembler& operator=(Disassembler&& other) noexcept;
  Disassembler(const Disassembler&) = delete;
  Disassembler& operator=(const Disassembler&) = delete;
  ~Disassembler();

  // `code` starts at `address`. `namer` may be empty (targets are then bare addresses).
  std::vector<Instruction> disassemble(std::span<const uint8_t> code, uint64_t address, const AddressNamer& namer) const;

 private:
  Disassembler() = default;
  size_t handle_ = 0;  // capstone's csh
  AsmSyntax syntax_ = AsmSyntax::Att;
};

// The mnemonic objdump writes for capstone's AT&T `mnemonic` of instruction `base_name`
// (capstone's instruction name, "mov" for movq), given whether a general-purpose register
// operand fixes the operand size. Exposed for tests.
std::string objdump_att_mnemonic(const std::string& mnemonic, const std::string& base_name, bool has_sizing_register);

}  // namespace vperf::report
