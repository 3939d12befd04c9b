// Disassembly of known bytes against objdump's spelling. The expected lines are what
// `objdump -D -b binary -m i386:x86-64 --no-show-raw-insn --adjust-vma=0x1000` (binutils 2.40)
// prints for the same bytes, with objdump's ELF-mode target notation ("1001 <f+0x1>",
// "# 4638 <data>") instead of its raw-binary one ("0x1001").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/annotate_disassembler.h"

namespace vperf::report {
namespace {

const std::vector<uint8_t> kCode = {
    0x55,                                            // push %rbp
    0x48, 0x89, 0xfe,                                // mov %rdi,%rsi
    0x41, 0xb8, 0xd0, 0x07, 0x00, 0x00,              // mov $0x7d0,%r8d
    0x48, 0xc7, 0x45, 0xf8, 0x00, 0x00, 0x00, 0x00,  // movq $0x0,-0x8(%rbp)
    0x0f, 0x1f, 0x40, 0x00,                          // nopl 0x0(%rax)
    0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00,              // nopw 0x0(%rax,%rax,1)
    0x0f, 0xb6, 0xd2,                                // movzbl %dl,%edx
    0xf2, 0x48, 0x0f, 0x2a, 0xc7,                    // cvtsi2sd %rdi,%xmm0
    0x48, 0x83, 0xc4, 0x80,                          // add $0xffffffffffffff80,%rsp
    0xf2, 0x0f, 0x10, 0x25, 0x08, 0x36, 0x00, 0x00,  // movsd 0x3608(%rip),%xmm4
    0x48, 0xd3, 0xea,                                // shr %cl,%rdx
    0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00,  // mov %fs:0x28,%rax
    0x48, 0x8b, 0x04, 0xc5, 0x00, 0x00, 0x00, 0x00,        // mov 0x0(,%rax,8),%rax
    0xff, 0xe0,                                            // jmp *%rax
    0x48, 0x98,                                            // cltq
    0x48, 0x63, 0xff,                                      // movslq %edi,%rdi
    0xf0, 0x48, 0x0f, 0xb1, 0x17,                          // lock cmpxchg %rdx,(%rdi)
    0x75, 0xaf,                                            // jne 0x1001
    0xe8, 0x00, 0x00, 0x00, 0x00,                          // call 0x1057
    0xc3,                                                  // ret
    0x06,                                                  // (bad): push %es is invalid in 64-bit mode
};

std::vector<std::string> listing(const std::vector<Instruction>& instructions) {
  std::vector<std::string> lines;
  for (const Instruction& i : instructions) {
    char address[16];
    std::snprintf(address, sizeof address, "%llx:", static_cast<unsigned long long>(i.address));
    lines.push_back(std::string(address) + " " + i.mnemonic + (i.operands.empty() ? "" : " " + i.operands));
  }
  return lines;
}

std::optional<std::string> name_in_f(uint64_t address) {
  if (address >= 0x1000 && address < 0x1100) {
    char offset[16];
    std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(address - 0x1000));
    return address == 0x1000 ? std::string("f") : "f" + std::string(offset);
  }
  if (address >= 0x4600 && address < 0x4700) return std::string("data+0x38");
  return std::nullopt;
}

TEST(AnnotateDisassembler, AttMatchesObjdumpSpelling) {
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d) << d.error().describe();
  std::vector<std::string> expected = {
      "1000: push %rbp",
      "1001: mov %rdi,%rsi",
      "1004: mov $0x7d0,%r8d",
      "100a: movq $0x0,-0x8(%rbp)",
      "1012: nopl 0x0(%rax)",
      "1016: nopw 0x0(%rax,%rax,1)",
      "101c: movzbl %dl,%edx",
      "101f: cvtsi2sd %rdi,%xmm0",
      "1024: add $0xffffffffffffff80,%rsp",
      "1028: movsd 0x3608(%rip),%xmm4        # 4638 <data+0x38>",
      "1030: shr %cl,%rdx",
      "1033: mov %fs:0x28,%rax",
      "103c: mov 0x0(,%rax,8),%rax",
      "1044: jmp *%rax",
      "1046: cltq",
      "1048: movslq %edi,%rdi",
      "104b: lock cmpxchg %rdx,(%rdi)",
      "1050: jne 1001 <f+0x1>",
      "1052: call 1057 <f+0x57>",
      "1057: ret",
      "1058: (bad)",
  };
  EXPECT_EQ(listing(d->disassemble(kCode, 0x1000, name_in_f)), expected);
}

TEST(AnnotateDisassembler, ObjdumpIdiomsForPaddingShiftsAndMovq) {
  // objdump -D -b binary -m i386:x86-64 --no-show-raw-insn --adjust-vma=0x2000 of these bytes.
  const std::vector<uint8_t> code = {
      0x66, 0x90,                                                        // xchg %ax,%ax
      0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,        // cs nopw 0x0(%rax,%rax,1)
      0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,  // data16 cs nopw ...
      0x66, 0x48, 0x0f, 0x6e, 0xc8,                                      // movq %rax,%xmm1
      0xd1, 0xfa,                                                        // sar %edx
      0x48, 0xd1, 0xef,                                                  // shr %rdi
      0x66, 0x0f, 0x6e, 0xc0,                                            // movd %eax,%xmm0
  };
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  std::vector<std::string> expected = {
      "2000: xchg %ax,%ax",       "2002: cs nopw 0x0(%rax,%rax,1)", "200c: data16 cs nopw 0x0(%rax,%rax,1)",
      "2017: movq %rax,%xmm1",    "201c: sar %edx",                 "201e: shr %rdi",
      "2021: movd %eax,%xmm0",
  };
  EXPECT_EQ(listing(d->disassemble(code, 0x2000, {})), expected);
}

TEST(AnnotateDisassembler, ObjdumpSpellingOfStringOpsXchgAndShiftsOfCl) {
  // objdump -D -b binary -m i386:x86-64 --no-show-raw-insn --adjust-vma=0x3000 of these bytes.
  const std::vector<uint8_t> code = {
      0xf3, 0xa4,        // rep movsb %ds:(%rsi),%es:(%rdi)
      0xf3, 0x48, 0xab,  // rep stos %rax,%es:(%rdi)
      0x48, 0xa5,        // movsq %ds:(%rsi),%es:(%rdi)
      0x91,              // xchg %eax,%ecx
      0xc0, 0xe9, 0x02,  // shr $0x2,%cl
      0xd0, 0xe9,        // shr %cl
      0xaa,              // stos %al,%es:(%rdi)
      0xac,              // lods %ds:(%rsi),%al
  };
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  std::vector<std::string> expected = {
      "3000: rep movsb %ds:(%rsi),%es:(%rdi)", "3002: rep stos %rax,%es:(%rdi)", "3005: movsq %ds:(%rsi),%es:(%rdi)",
      "3007: xchg %eax,%ecx",                  "3008: shr $0x2,%cl",             "300b: shr %cl",
      "300d: stos %al,%es:(%rdi)",             "300e: lods %ds:(%rsi),%al",
  };
  EXPECT_EQ(listing(d->disassemble(code, 0x3000, {})), expected);
}

TEST(AnnotateDisassembler, BranchTargetsAreRecorded) {
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  std::vector<Instruction> code = d->disassemble(kCode, 0x1000, {});
  ASSERT_GE(code.size(), 20u);
  EXPECT_EQ(code[17].branch_target, 0x1001u);
  EXPECT_EQ(code[17].operands, "1001");  // without a namer: the bare address
  EXPECT_EQ(code[18].branch_target, 0x1057u);
  EXPECT_FALSE(code[0].branch_target.has_value());
  EXPECT_FALSE(code[13].branch_target.has_value());  // jmp *%rax: indirect
}

TEST(AnnotateDisassembler, IntelIsCapstonesOwnText) {
  auto d = Disassembler::x86_64(AsmSyntax::Intel);
  ASSERT_TRUE(d);
  std::vector<std::string> lines = listing(d->disassemble(std::vector<uint8_t>(kCode.begin(), kCode.begin() + 18), 0x1000, {}));
  std::vector<std::string> expected = {"1000: push rbp", "1001: mov rsi, rdi", "1004: mov r8d, 0x7d0",
                                       "100a: mov qword ptr [rbp - 8], 0"};
  EXPECT_EQ(lines, expected);
}

TEST(AnnotateDisassembler, EmptyCodeHasNoInstructions) {
  auto d = Disassembler::x86_64(AsmSyntax::Att);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->disassemble({}, 0x1000, {}).empty());
}

TEST(AnnotateDisassembler, ObjdumpMnemonicRules) {
  // Suffix dropped when a general-purpose register gives the size ...
  EXPECT_EQ(objdump_att_mnemonic("movq", "mov", true), "mov");
  EXPECT_EQ(objdump_att_mnemonic("lock cmpxchgq", "cmpxchg", true), "lock cmpxchg");
  // ... kept when none does ...
  EXPECT_EQ(objdump_att_mnemonic("movq", "mov", false), "movq");
  EXPECT_EQ(objdump_att_mnemonic("nopl", "nop", false), "nopl");
  // ... never written on 64-bit call/ret/push/pop/jmp/leave ...
  EXPECT_EQ(objdump_att_mnemonic("retq", "ret", false), "ret");
  EXPECT_EQ(objdump_att_mnemonic("callq", "call", false), "call");
  EXPECT_EQ(objdump_att_mnemonic("pushq", "push", false), "push");
  EXPECT_EQ(objdump_att_mnemonic("pushw", "push", false), "pushw");
  // ... and mnemonics that are not the base name plus a suffix stay.
  EXPECT_EQ(objdump_att_mnemonic("movzbl", "movzx", true), "movzbl");
  EXPECT_EQ(objdump_att_mnemonic("movslq", "movsxd", true), "movslq");
  EXPECT_EQ(objdump_att_mnemonic("cvtsi2sdq", "cvtsi2sd", true), "cvtsi2sd");
  EXPECT_EQ(objdump_att_mnemonic("cvtsi2sdq", "cvtsi2sd", false), "cvtsi2sdq");
}

}  // namespace
}  // namespace vperf::report
