#include "guest/vcpu_registers.h"

#include <charconv>
#include <string>

namespace vperf::guest {
namespace {

// The value after "NAME=" (hex, or decimal for CPL/HLT) in one block, if present. Register
// names are matched at a word start so "RIP=" is not found inside "EIP=" and "R8 =" keeps its
// padding.
std::optional<uint64_t> field(std::string_view block, std::string_view name, int base = 16) {
  size_t at = 0;
  while ((at = block.find(name, at)) != std::string_view::npos) {
    const bool word_start = at == 0 || block[at - 1] == ' ' || block[at - 1] == '\n';
    const size_t value_at = at + name.size();
    if (word_start && value_at < block.size()) {
      uint64_t value = 0;
      const char* begin = block.data() + value_at;
      auto [end, err] = std::from_chars(begin, block.data() + block.size(), value, base);
      if (err == std::errc() && end != begin) return value;
    }
    at = value_at;
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<VcpuRegisters>> parse_info_registers(std::string_view text) {
  std::vector<VcpuRegisters> out;
  size_t at = text.find("CPU#");
  if (at == std::string_view::npos) {
    std::string_view first = text.substr(0, text.find('\n'));
    return Error{"no vCPU registers in the monitor's answer" + (first.empty() ? std::string() : ": " + std::string(first))};
  }
  while (at != std::string_view::npos) {
    size_t next = text.find("CPU#", at + 4);
    std::string_view block = text.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at);
    VcpuRegisters r;
    std::optional<uint64_t> index = field(block, "CPU#", 10);
    std::optional<uint64_t> rip = field(block, "RIP=");
    if (!rip) rip = field(block, "EIP=");
    std::optional<uint64_t> cpl = field(block, "CPL=", 10);
    if (!index || !rip || !cpl)
      return Error{"vCPU block " + std::to_string(out.size()) + " of the monitor's answer has no " +
                   (!index ? "CPU#N" : !rip ? "RIP" : "CPL")};
    r.index = static_cast<int>(*index);
    r.rip = *rip;
    r.cpl = static_cast<int>(*cpl);
    r.rsp = field(block, "RSP=").value_or(field(block, "ESP=").value_or(0));
    r.rbp = field(block, "RBP=").value_or(field(block, "EBP=").value_or(0));
    r.rdi = field(block, "RDI=").value_or(0);
    r.rdx = field(block, "RDX=").value_or(0);
    r.r10 = field(block, "R10=").value_or(0);
    r.r13 = field(block, "R13=").value_or(0);
    r.cr3 = field(block, "CR3=").value_or(0);
    r.halted = field(block, "HLT=", 10).value_or(0) != 0;
    out.push_back(r);
    at = next;
  }
  return out;
}

}  // namespace vperf::guest
