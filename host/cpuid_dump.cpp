#include "host/cpuid_dump.h"

#include <algorithm>
#include <charconv>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::host {

namespace {

constexpr int kMaxHexDigits = 8;  // every CPUID register and leaf number is 32 bits

std::optional<uint32_t> parse_hex32(std::string_view s) {
  if (s.empty() || s.size() > kMaxHexDigits) return std::nullopt;
  auto v = parse_u64_base(s, 16);
  if (!v) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

// "0x0000000a" -> 0xa
std::optional<uint32_t> parse_0x_hex32(std::string_view s) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  return parse_hex32(s.substr(2));
}

std::optional<int> parse_cpu_number(std::string_view s) {
  int n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 0) return std::nullopt;
  return n;
}

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

class DumpParser {
 public:
  explicit DumpParser(const std::string& source) { dump_.source = source; }

  Result<CpuidDump> parse(std::string_view text) {
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) eol = text.size();
      ++line_;
      std::string_view line = trim(text.substr(pos, eol - pos));
      if (auto err = parse_line(line)) return *err;
      if (eol == text.size()) break;
      pos = eol + 1;
    }
    if (records_ == 0)
      return Error{dump_.source + ": no CPUID records found (expected `cpuid -r` lines such as "
                                  "'0x00000000 0x00: eax=...' or AIDA64 lines such as 'CPUID 00000000: ...')"};
    // Sections without any record (e.g. an AIDA64 header whose lines were cut) are noise.
    std::erase_if(dump_.cpus, [](const CpuidDumpCpu& cpu) { return cpu.leaves.empty(); });
    return std::move(dump_);
  }

 private:
  std::optional<Error> fail(const std::string& what, std::string_view token) const {
    std::string msg = dump_.source + ":" + std::to_string(line_) + ": " + what;
    if (!token.empty()) msg += " '" + std::string(token) + "'";
    return Error{msg};
  }

  void start_cpu(int number, std::string header) {
    CpuidDumpCpu cpu;
    cpu.number = number;
    cpu.header = std::move(header);
    cpu.line = line_;
    dump_.cpus.push_back(std::move(cpu));
    implicit_subleaf_.clear();
    in_cpu_section_ = true;
  }

  CpuidDumpCpu& current_cpu() {
    if (!in_cpu_section_) start_cpu(static_cast<int>(dump_.cpus.size()), "(no header)");
    return dump_.cpus.back();
  }

  std::optional<Error> add_record(uint32_t leaf, std::optional<uint32_t> subleaf, const CpuidRegs& regs,
                                  std::string_view line) {
    CpuidDumpCpu& cpu = current_cpu();
    // An untagged repeat of a leaf is its next subleaf (older AIDA64 dumps).
    uint32_t& next = implicit_subleaf_[leaf];
    const uint32_t sub = subleaf.value_or(next);
    next = sub + 1;
    if (!cpu.leaves.emplace(std::make_pair(leaf, sub), regs).second)
      return fail("leaf " + hex(leaf) + " subleaf " + hex(sub) + " appears twice in " + cpu.header, line);
    ++records_;
    return std::nullopt;
  }

  std::optional<Error> parse_line(std::string_view line) {
    if (line.empty() || line.front() == '#') return std::nullopt;

    // AIDA64 section header: "------[ CPUID Registers / Logical CPU #0 ]------".
    if (line.starts_with("------[")) {
      size_t close = line.find(']');
      std::string_view inner = close == std::string_view::npos ? line.substr(7) : line.substr(7, close - 7);
      inner = trim(inner);
      size_t hash = inner.find("Logical CPU #");
      if (hash == std::string_view::npos) {
        in_cpu_section_ = false;  // some other AIDA64 section (MSRs, versions ...): skip its text
        skipping_section_ = true;
        return std::nullopt;
      }
      auto number = parse_cpu_number(trim(inner.substr(hash + 13)));
      if (!number) return fail("bad CPU number in section header", line);
      dump_.format = CpuidDumpFormat::Aida64;
      skipping_section_ = false;
      start_cpu(*number, std::string(inner));
      return std::nullopt;
    }

    // cpuid-r header: "CPU:" or "CPU 3:".
    if (line.starts_with("CPU") && line.back() == ':' && !line.starts_with("CPUID")) {
      std::string_view middle = trim(line.substr(3, line.size() - 4));
      std::optional<int> number = middle.empty() ? std::optional<int>(0) : parse_cpu_number(middle);
      if (!number) return fail("bad CPU header", line);
      dump_.format = CpuidDumpFormat::CpuidR;
      skipping_section_ = false;
      start_cpu(*number, std::string(line.substr(0, line.size() - 1)));
      return std::nullopt;
    }

    if (line.starts_with("CPUID ")) return parse_aida_record(line);
    if (line.starts_with("0x")) return parse_cpuid_r_record(line);
    if (line.starts_with("MSR ")) return std::nullopt;  // AIDA64 MSR dumps share the CPU section
    if (skipping_section_ || !in_cpu_section_) return std::nullopt;  // preamble, disclaimers
    return fail("unrecognized line in a CPU section (expected a CPUID record)", line.substr(0, 60));
  }

  // "CPUID 0000000A: 07300403-00000000-00000000-00000603 [SL 01] [label]"
  std::optional<Error> parse_aida_record(std::string_view line) {
    if (skipping_section_) return std::nullopt;
    std::string_view rest = line.substr(6);
    size_t colon = rest.find(':');
    if (colon == std::string_view::npos) return fail("missing ':' after the leaf", line);
    auto leaf = parse_hex32(trim(rest.substr(0, colon)));
    if (!leaf) return fail("bad leaf number", trim(rest.substr(0, colon)));
    rest = trim(rest.substr(colon + 1));
    size_t space = rest.find(' ');
    std::string_view regs_text = rest.substr(0, space);
    std::string_view tail = space == std::string_view::npos ? std::string_view{} : trim(rest.substr(space));
    auto parts = split(regs_text, '-');
    if (parts.size() != 4) return fail("expected four registers EAX-EBX-ECX-EDX", regs_text);
    uint32_t values[4];
    for (size_t i = 0; i < 4; ++i) {
      auto v = parse_hex32(parts[i]);
      if (!v || parts[i].size() != kMaxHexDigits) return fail("bad register value", parts[i]);
      values[i] = *v;
    }
    // After the registers: an optional "[SL nn]" subleaf tag, then free label text. AIDA64's
    // labels are not well-formed ("[L2: 512 KB] / L3: 98304 KB]"), so only the tag is parsed.
    std::optional<uint32_t> subleaf;
    if (!tail.empty() && tail.front() != '[') return fail("unexpected text after the registers", tail);
    if (tail.starts_with("[SL ")) {
      size_t close = tail.find(']');
      if (close == std::string_view::npos) return fail("unclosed subleaf tag", tail);
      subleaf = parse_hex32(trim(tail.substr(4, close - 4)));
      if (!subleaf) return fail("bad subleaf tag", tail.substr(0, close + 1));
    }
    if (records_ == 0) dump_.format = CpuidDumpFormat::Aida64;
    return add_record(*leaf, subleaf, CpuidRegs{values[0], values[1], values[2], values[3]}, line);
  }

  // "0x0000000a 0x00: eax=0x07300402 ebx=0x00000000 ecx=0x00000000 edx=0x00008603"
  std::optional<Error> parse_cpuid_r_record(std::string_view line) {
    if (skipping_section_) return std::nullopt;
    auto tokens = split_spaces(line);
    if (tokens.size() != 6) return fail("expected 'LEAF SUBLEAF: eax=.. ebx=.. ecx=.. edx=..'", line);
    auto leaf = parse_0x_hex32(tokens[0]);
    if (!leaf) return fail("bad leaf number", tokens[0]);
    if (tokens[1].empty() || tokens[1].back() != ':') return fail("missing ':' after the subleaf", tokens[1]);
    auto subleaf = parse_0x_hex32(tokens[1].substr(0, tokens[1].size() - 1));
    if (!subleaf) return fail("bad subleaf number", tokens[1]);
    static constexpr std::string_view kNames[4] = {"eax=", "ebx=", "ecx=", "edx="};
    uint32_t values[4];
    for (size_t i = 0; i < 4; ++i) {
      std::string_view t = tokens[2 + i];
      if (!t.starts_with(kNames[i])) return fail("expected " + std::string(kNames[i]) + "0x...", t);
      auto v = parse_0x_hex32(t.substr(4));
      if (!v) return fail("bad register value", t);
      values[i] = *v;
    }
    if (records_ == 0) dump_.format = CpuidDumpFormat::CpuidR;
    return add_record(*leaf, *subleaf, CpuidRegs{values[0], values[1], values[2], values[3]}, line);
  }

  CpuidDump dump_;
  int line_ = 0;
  size_t records_ = 0;
  bool in_cpu_section_ = false;
  bool skipping_section_ = false;
  std::map<uint32_t, uint32_t> implicit_subleaf_;  // leaf -> next subleaf for untagged repeats
};

}  // namespace

std::string_view format_name(CpuidDumpFormat format) {
  return format == CpuidDumpFormat::Aida64 ? "aida64" : "cpuid-r";
}

Result<CpuidDump> parse_cpuid_dump(std::string_view text, const std::string& source_name) {
  return DumpParser(source_name).parse(text);
}

Result<CpuidDump> load_cpuid_dump(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_cpuid_dump(*text, path.string());
}

Result<size_t> select_dump_cpu(const CpuidDump& dump, std::optional<int> cpu_number) {
  if (dump.cpus.empty()) return Error{dump.source + ": the dump holds no CPU"};
  if (!cpu_number) return size_t{0};
  for (size_t i = 0; i < dump.cpus.size(); ++i)
    if (dump.cpus[i].number == *cpu_number) return i;
  std::vector<std::string> numbers;
  for (const auto& cpu : dump.cpus) numbers.push_back(std::to_string(cpu.number));
  return Error{dump.source + " has no CPU " + std::to_string(*cpu_number) + "; it has CPU " +
               join_alternatives(numbers)};
}

std::optional<CpuidRegs> DumpCpuidSource::query(uint32_t leaf, uint32_t subleaf) const {
  auto it = cpu_.leaves.find({leaf, subleaf});
  if (it == cpu_.leaves.end()) return std::nullopt;
  return it->second;
}

std::string DumpCpuidSource::describe() const { return "dump " + dump_.source + ", " + cpu_.header; }

Result<void> require_decodable_leaves(const CpuidDump& dump, size_t cpu_index) {
  const CpuidDumpCpu& cpu = dump.cpus.at(cpu_index);
  auto leaf0 = cpu.leaves.find({0, 0});
  std::vector<uint32_t> needed{0, 1};
  if (leaf0 != cpu.leaves.end() && leaf0->second.eax >= 0xa && leaf0->second.eax < 0x40000000) needed.push_back(0xa);
  for (uint32_t leaf : needed)
    if (!cpu.leaves.count({leaf, 0}))
      return Error{dump.source + ": " + cpu.header + " has no leaf " + hex(leaf) +
                   " (decoding needs leaves 0, 1 and, where the maximum leaf reaches it, 0xa)"};
  return {};
}

}  // namespace vperf::host
