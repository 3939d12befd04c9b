#include "guest/guest_memory.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "core/strings.h"

namespace vperf::guest {
namespace {

bool parse_hex(std::string_view text, uint64_t& out) {
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return err == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

Result<MemoryDump> parse_memory_dump(std::string_view text) {
  MemoryDump dump;
  bool first = true;
  size_t at = 0;
  while (at < text.size()) {
    size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = trim(text.substr(at, eol - at));
    at = eol + 1;
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    uint64_t address = 0;
    if (colon == std::string_view::npos || !parse_hex(line.substr(0, colon), address)) break;
    // "ffffd1ee8009bff8: Cannot access memory": the dump ran into an unmapped page.
    if (trim(line.substr(colon + 1)).starts_with("Cannot")) {
      if (first) dump.address = address;
      first = false;
      break;
    }
    if (first) dump.address = address;
    else if (address != dump.address + dump.bytes.size()) return Error{"a memory dump with a gap at " + hex(address)};
    first = false;
    for (std::string_view word : split(trim(line.substr(colon + 1)), ' ')) {
      if (word.empty()) continue;
      uint64_t value = 0;
      if (!word.starts_with("0x") || !parse_hex(word.substr(2), value)) return Error{"a memory dump word that is not hex: " + std::string(word)};
      const size_t old = dump.bytes.size();
      dump.bytes.resize(old + sizeof value);
      std::memcpy(dump.bytes.data() + old, &value, sizeof value);  // x86 guests are little-endian, as this host
    }
  }
  if (first) {
    if (text.find("Cannot access memory") != std::string_view::npos) return dump;  // nothing mapped there
    std::string_view said = trim(text.substr(0, text.find('\n')));
    return Error{"the monitor dumped no memory" + (said.empty() ? std::string() : ": " + std::string(said))};
  }
  return dump;
}

Result<MemoryDump> read_guest_memory(VmMonitor& monitor, int cpu, std::string_view address, size_t bytes) {
  const size_t words = std::max<size_t>(1, (bytes + 7) / 8);
  Result<std::string> text = monitor.hmp("x /" + std::to_string(words) + "gx " + std::string(address), cpu);
  if (!text) return text.error();
  return parse_memory_dump(*text);
}

bool DumpMemory::copy(uint64_t address, std::span<uint8_t> out) const {
  // Piece by piece: pt_regs may straddle two pages read by separate commands.
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = address + done;
    const MemoryDump* from = nullptr;
    for (const MemoryDump& d : dumps_)
      if (at >= d.address && at - d.address < d.bytes.size()) from = &d;
    if (from == nullptr) return false;
    const size_t n = std::min(out.size() - done, from->bytes.size() - (at - from->address));
    std::memcpy(out.data() + done, from->bytes.data() + (at - from->address), n);
    done += n;
  }
  return true;
}

const std::vector<uint8_t>* KernelMemory::page(uint64_t page_address) {
  if (auto it = pages_.find(page_address); it != pages_.end()) return &it->second;
  std::vector<int> order = {preferred_};
  for (int v : vcpus_)
    if (v != preferred_) order.push_back(v);
  for (int vcpu : order) {
    Result<MemoryDump> dump = read_guest_memory(monitor_, vcpu, hex(page_address), kGuestPageSize);
    if (dump && dump->address == page_address && dump->bytes.size() == kGuestPageSize)
      return &pages_.emplace(page_address, std::move(dump->bytes)).first->second;
  }
  return nullptr;
}

bool KernelMemory::read(uint64_t address, std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = address + done;
    const uint64_t page_address = at & ~(kGuestPageSize - 1);
    const std::vector<uint8_t>* bytes = page(page_address);
    if (bytes == nullptr) return false;
    const size_t offset = at - page_address;
    const size_t n = std::min(out.size() - done, kGuestPageSize - offset);
    std::memcpy(out.data() + done, bytes->data() + offset, n);
    done += n;
  }
  return true;
}

bool VcpuStackMemory::read(uint64_t address, std::span<uint8_t> out) {
  if (read_.read(address, out)) {
    reads_.emplace_back(address, out.size());
    return true;
  }
  // A read that straddles two pages takes both; each page is one monitor command.
  for (uint64_t page = address & ~(kGuestPageSize - 1); page < address + out.size(); page += kGuestPageSize) {
    uint8_t probe;
    if (read_.read(page, {&probe, 1})) continue;
    if (monitor_ == nullptr || page_reads_left_ <= 0) return false;
    --page_reads_left_;
    Result<MemoryDump> dump = read_guest_memory(*monitor_, cpu_, hex(page), kGuestPageSize);
    if (!dump || dump->address != page || dump->bytes.empty()) return false;
    ++pages_read_;
    read_.add(std::move(dump).value());
  }
  if (!read_.read(address, out)) return false;
  reads_.emplace_back(address, out.size());
  return true;
}

bool VcpuStackMemory::reads_the_same_in(const MemoryDump& again) const {
  std::vector<uint8_t> before;
  for (const auto& [address, size] : reads_) {
    // Only the words that steer an unwind, each read alone: return addresses, saved frame
    // pointers, a pt_regs' ip, sp, cs and bp. A whole pt_regs (read to show it is there) holds the
    // user's registers, saved anew at each syscall: they differ from one read() to the next
    // while the stack above them stays the same.
    if (size > sizeof(uint64_t)) continue;
    if (address < again.address || address - again.address > again.bytes.size() ||
        again.bytes.size() - (address - again.address) < size)
      continue;  // outside the second dump: another stack's page, read once
    before.resize(size);
    if (!read_.copy(address, before)) return false;
    if (!std::equal(before.begin(), before.end(), again.bytes.begin() + static_cast<ptrdiff_t>(address - again.address)))
      return false;
  }
  return true;
}

}  // namespace vperf::guest
