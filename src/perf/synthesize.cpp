#include "perf/synthesize.h"

#include <linux/perf_event.h>
#include <sys/sysmacros.h>

#include <climits>
#include <cstring>
#include <map>
#include <optional>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::perf {

namespace {

// Appends fields in order and finishes with the header's size filled in.
class RecordBuilder {
 public:
  RecordBuilder(uint32_t type, uint16_t misc) {
    perf_event_header header{type, misc, 0};
    append(&header, sizeof header);
  }
  RecordBuilder& u32(uint32_t v) { return append(&v, sizeof v); }
  RecordBuilder& u64(uint64_t v) { return append(&v, sizeof v); }
  // A NUL-terminated string padded with NULs to a multiple of 8 bytes, as the kernel writes.
  // Cut to PATH_MAX - 1 bytes, as the kernel and perf cut file names: a longer one (a module
  // name in a guest's /proc/modules) would overflow the header's 16-bit size.
  RecordBuilder& padded_string(std::string_view s) {
    s = s.substr(0, kMaxStringBytes);
    size_t size = (s.size() + 1 + 7) & ~size_t{7};
    size_t at = bytes_.size();
    bytes_.resize(at + size, 0);
    std::memcpy(bytes_.data() + at, s.data(), s.size());
    return *this;
  }
  RecordBytes finish(size_t id_trailer_size) {
    bytes_.resize(bytes_.size() + id_trailer_size, 0);
    uint16_t size = static_cast<uint16_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(perf_event_header, size), &size, sizeof size);
    return std::move(bytes_);
  }

 private:
  RecordBuilder& append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  static constexpr size_t kMaxStringBytes = PATH_MAX - 1;
  RecordBytes bytes_;
};

std::optional<uint64_t> hex_field(std::string_view s) { return parse_u64_base(s, 16); }

}  // namespace

RecordBytes comm_record(pid_t pid, pid_t tid, std::string_view comm, bool exec, size_t id_trailer_size) {
  return RecordBuilder(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0)
      .u32(static_cast<uint32_t>(pid))
      .u32(static_cast<uint32_t>(tid))
      .padded_string(comm)
      .finish(id_trailer_size);
}

RecordBytes mmap_record(pid_t pid, pid_t tid, uint64_t start, uint64_t length, uint64_t pgoff, std::string_view filename,
                        uint16_t misc, size_t id_trailer_size) {
  return RecordBuilder(PERF_RECORD_MMAP, misc)
      .u32(static_cast<uint32_t>(pid))
      .u32(static_cast<uint32_t>(tid))
      .u64(start)
      .u64(length)
      .u64(pgoff)
      .padded_string(filename)
      .finish(id_trailer_size);
}

RecordBytes mmap2_record(pid_t pid, pid_t tid, const MappingLine& m, uint16_t misc, size_t id_trailer_size) {
  uint32_t prot = (m.perms.size() > 0 && m.perms[0] == 'r' ? 1u : 0u) | (m.perms.size() > 1 && m.perms[1] == 'w' ? 2u : 0u) |
                  (m.perms.size() > 2 && m.perms[2] == 'x' ? 4u : 0u);
  uint32_t flags = m.perms.size() > 3 && m.perms[3] == 's' ? 1u /* MAP_SHARED */ : 2u /* MAP_PRIVATE */;
  return RecordBuilder(PERF_RECORD_MMAP2, misc)
      .u32(static_cast<uint32_t>(pid))
      .u32(static_cast<uint32_t>(tid))
      .u64(m.start)
      .u64(m.end - m.start)
      .u64(m.pgoff)
      .u32(m.major)
      .u32(m.minor)
      .u64(m.inode)
      .u64(0)
      .u32(prot)
      .u32(flags)
      .padded_string(m.path.empty() ? "//anon" : m.path)
      .finish(id_trailer_size);
}

std::optional<MappingLine> parse_maps_line(std::string_view line) {
  // 55820cb7c000-55820cb80000 r-xp 00002000 fe:00 248139   /usr/bin/true
  std::vector<std::string_view> f;
  for (std::string_view part : split(line, ' '))
    if (!part.empty()) f.push_back(part);
  if (f.size() < 5) return std::nullopt;
  MappingLine m;
  size_t dash = f[0].find('-');
  size_t colon = f[3].find(':');
  if (dash == std::string_view::npos || colon == std::string_view::npos) return std::nullopt;
  auto start = hex_field(f[0].substr(0, dash));
  auto end = hex_field(f[0].substr(dash + 1));
  auto pgoff = hex_field(f[2]);
  auto major = hex_field(f[3].substr(0, colon));
  auto minor = hex_field(f[3].substr(colon + 1));
  auto inode = parse_u64(f[4]);
  if (!start || !end || !pgoff || !major || !minor || !inode || *end < *start) return std::nullopt;
  m.start = *start;
  m.end = *end;
  m.pgoff = *pgoff;
  m.major = static_cast<uint32_t>(*major);
  m.minor = static_cast<uint32_t>(*minor);
  m.inode = *inode;
  m.perms = std::string(f[1]);
  // The path is the rest of the line after the inode, and may contain spaces.
  if (f.size() > 5) {
    size_t at = line.find(f[5], static_cast<size_t>(f[4].data() + f[4].size() - line.data()));
    m.path = std::string(trim(line.substr(at)));
  }
  return m;
}

Result<std::vector<RecordBytes>> synthesize_process(pid_t pid, size_t id_trailer_size, const ProcRoot& root) {
  std::filesystem::path dir = root.proc / std::to_string(pid);
  Result<std::vector<std::string>> tasks = list_directory(dir / "task");
  if (!tasks) return Error{"process " + std::to_string(pid) + " is gone", ESRCH};
  std::vector<RecordBytes> records;
  for (const std::string& task : *tasks) {
    auto tid = parse_u64(task);
    if (!tid) continue;
    Result<std::string> comm = read_first_line(dir / "task" / task / "comm");
    if (!comm) continue;  // the thread ended meanwhile
    records.push_back(comm_record(pid, static_cast<pid_t>(*tid), trim(*comm), false, id_trailer_size));
  }
  Result<std::string> maps = read_file(dir / "maps");
  if (!maps) return Error{"cannot read the maps of process " + std::to_string(pid) + ": " + maps.error().message,
                          maps.error().errno_value};
  for (std::string_view line : split(*maps, '\n')) {
    std::optional<MappingLine> m = parse_maps_line(line);
    if (!m || m->perms.size() < 3 || m->perms[2] != 'x') continue;  // perf synthesizes code maps only
    records.push_back(mmap2_record(pid, pid, *m, PERF_RECORD_MISC_USER, id_trailer_size));
  }
  return records;
}

namespace {

Result<std::vector<RecordBytes>> kernel_maps(const std::filesystem::path& kallsyms_path,
                                             const std::filesystem::path& modules_path,
                                             std::optional<pid_t> guest_machine_pid, size_t id_trailer_size) {
  Result<std::string> kallsyms = read_file(kallsyms_path);
  if (!kallsyms) return Error{"cannot read kallsyms: " + kallsyms.error().message, kallsyms.error().errno_value};
  Result<std::string> modules = read_file(modules_path);  // none without module support
  return kernel_map_records(*kallsyms, modules ? std::string_view(*modules) : std::string_view(), guest_machine_pid,
                            id_trailer_size);
}

}  // namespace

std::vector<RecordBytes> kernel_map_records(std::string_view kallsyms, std::string_view modules,
                                            std::optional<pid_t> guest_machine_pid, size_t id_trailer_size) {
  const pid_t pid = guest_machine_pid.value_or(-1);
  const uint16_t misc = guest_machine_pid ? PERF_RECORD_MISC_GUEST_KERNEL : PERF_RECORD_MISC_KERNEL;
  const std::string image = guest_machine_pid ? "[guest.kernel.kallsyms]" : "[kernel.kallsyms]";
  std::optional<uint64_t> text, etext;
  for (std::string_view line : split(kallsyms, '\n')) {
    std::vector<std::string_view> f = split(line, ' ');
    if (f.size() < 3) continue;
    if (f[2] == "_text") text = hex_field(f[0]);
    if (f[2] == "_etext") etext = hex_field(f[0]);
    if (text && etext) break;
  }
  std::vector<RecordBytes> records;
  // Zero addresses (kptr_restrict) give no usable kernel map; the report says why later.
  if (text && etext && *text != 0 && *etext > *text)
    records.push_back(mmap_record(pid, 0, *text, *etext - *text, *text, image + "_text", misc, id_trailer_size));
  // Modules in address order (perf walks its sorted map tree), after the kernel for the host
  // and before it for a guest, as perf record and perf kvm record write them.
  std::map<uint64_t, RecordBytes> by_address;
  for (std::string_view line : split(modules, '\n')) {
    // name size refcount deps state address
    std::vector<std::string_view> f = split(line, ' ');
    if (f.size() < 6) continue;
    auto size = parse_u64(f[1]);
    auto base = hex_field(f[5].substr(f[5].starts_with("0x") ? 2 : 0));
    if (!size || !base || *base == 0) continue;
    by_address.emplace(*base, mmap_record(pid, 0, *base, *size, 0, "[" + std::string(f[0]) + "]", misc, id_trailer_size));
  }
  auto at = guest_machine_pid ? records.begin() : records.end();
  for (auto& [base, record] : by_address) at = std::next(records.insert(at, std::move(record)));
  return records;
}

Result<std::vector<RecordBytes>> synthesize_kernel_maps(size_t id_trailer_size, const ProcRoot& root) {
  return kernel_maps(root.proc / "kallsyms", root.proc / "modules", std::nullopt, id_trailer_size);
}

Result<std::vector<RecordBytes>> synthesize_guest_kernel_maps(const std::filesystem::path& kallsyms,
                                                              const std::filesystem::path& modules, pid_t machine_pid,
                                                              size_t id_trailer_size) {
  return kernel_maps(kallsyms, modules, machine_pid, id_trailer_size);
}

}  // namespace vperf::perf
