#include "data/synthesize.h"

#include <linux/perf_event.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <climits>
#include <map>
#include <optional>

#include "core/files.h"
#include "core/strings.h"

namespace vperf::data {

namespace {

// File names are cut to PATH_MAX - 1 bytes, as the kernel and perf cut them: a longer one (a
// module name in a guest's /proc/modules) would overflow the header's 16-bit size.
constexpr size_t kMaxStringBytes = PATH_MAX - 1;

std::string cut(std::string_view s) { return std::string(s.substr(0, kMaxStringBytes)); }

// A task's name is at most TASK_COMM_LEN - 1 bytes in the kernel's own COMM records, but
// /proc/PID/comm of a kworker adds its workqueue ("kworker/0:0H-kblockd"); perf cuts what it
// reads to the kernel's size ("kworker/0:0H-kb"), so synthesized names match recorded ones.
constexpr size_t kMaxCommBytes = 15;

// Synthesized records carry the trailer of `format` with every field zero, as perf writes
// them (no time, no id: a reader attributes them to the first event).
RecordBytes encode(uint32_t type, uint16_t misc, RecordBody body, const SampleFormat& format) {
  Record record;
  record.type = type;
  record.misc = misc;
  record.body = std::move(body);
  return build_record(record, &format);
}

std::optional<uint64_t> hex_field(std::string_view s) { return parse_u64_base(s, 16); }

}  // namespace

RecordBytes comm_record(pid_t pid, pid_t tid, std::string_view comm, bool exec, const SampleFormat& format) {
  return encode(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
                CommRecord{static_cast<uint32_t>(pid), static_cast<uint32_t>(tid), std::string(comm.substr(0, kMaxCommBytes))}, format);
}

RecordBytes mmap_record(pid_t pid, pid_t tid, uint64_t start, uint64_t length, uint64_t pgoff, std::string_view filename,
                        uint16_t misc, const SampleFormat& format) {
  return encode(PERF_RECORD_MMAP, misc,
                MmapRecord{static_cast<uint32_t>(pid), static_cast<uint32_t>(tid), start, length, pgoff, cut(filename)}, format);
}

RecordBytes mmap2_record(pid_t pid, pid_t tid, const MappingLine& m, uint16_t misc, const SampleFormat& format) {
  Mmap2Record r;
  r.pid = static_cast<uint32_t>(pid);
  r.tid = static_cast<uint32_t>(tid);
  r.addr = m.start;
  r.len = m.end - m.start;
  r.pgoff = m.pgoff;
  r.maj = m.major;
  r.min = m.minor;
  r.ino = m.inode;
  r.prot = (m.perms.size() > 0 && m.perms[0] == 'r' ? 1u : 0u) | (m.perms.size() > 1 && m.perms[1] == 'w' ? 2u : 0u) |
           (m.perms.size() > 2 && m.perms[2] == 'x' ? 4u : 0u);
  r.flags = m.perms.size() > 3 && m.perms[3] == 's' ? 1u /* MAP_SHARED */ : 2u /* MAP_PRIVATE */;
  r.filename = cut(m.path.empty() ? "//anon" : m.path);
  return encode(PERF_RECORD_MMAP2, misc, std::move(r), format);
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

SynthesizedMaps synthesized_maps_for(const perf_event_attr& attr) {
  return attr.mmap_data ? SynthesizedMaps::All : SynthesizedMaps::CodeOnly;
}

Result<std::vector<RecordBytes>> synthesize_process(pid_t pid, SynthesizedMaps which, const SampleFormat& format,
                                                    const ProcRoot& root) {
  std::filesystem::path dir = root.proc / std::to_string(pid);
  Result<std::vector<std::string>> tasks = list_directory(dir / "task");
  if (!tasks) return Error{"process " + std::to_string(pid) + " is gone", ESRCH};
  std::vector<RecordBytes> records;
  for (const std::string& task : *tasks) {
    auto tid = parse_u64(task);
    if (!tid) continue;
    Result<std::string> comm = read_first_line(dir / "task" / task / "comm");
    if (!comm) continue;  // the thread ended meanwhile
    records.push_back(comm_record(pid, static_cast<pid_t>(*tid), trim(*comm), false, format));
  }
  Result<std::string> maps = read_file(dir / "maps");
  if (!maps) return Error{"cannot read the maps of process " + std::to_string(pid) + ": " + maps.error().message,
                          maps.error().errno_value};
  for (std::string_view line : split(*maps, '\n')) {
    std::optional<MappingLine> m = parse_maps_line(line);
    if (!m) continue;
    const bool code = m->perms.size() > 2 && m->perms[2] == 'x';
    if (!code && which == SynthesizedMaps::CodeOnly) continue;
    // A data map is marked as the kernel marks its own when attr.mmap_data asks for them.
    const uint16_t misc = code ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA;
    records.push_back(mmap2_record(pid, pid, *m, misc, format));
  }
  return records;
}

namespace {

Result<std::vector<RecordBytes>> kernel_maps(const std::filesystem::path& kallsyms_path,
                                             const std::filesystem::path& modules_path,
                                             std::optional<pid_t> guest_machine_pid, const SampleFormat& format) {
  Result<std::string> kallsyms = read_file(kallsyms_path);
  if (!kallsyms) return Error{"cannot read kallsyms: " + kallsyms.error().message, kallsyms.error().errno_value};
  Result<std::string> modules = read_file(modules_path);  // none without module support
  return kernel_map_records(*kallsyms, modules ? std::string_view(*modules) : std::string_view(), guest_machine_pid,
                            format);
}

}  // namespace

std::vector<RecordBytes> kernel_map_records(std::string_view kallsyms, std::string_view modules,
                                            std::optional<pid_t> guest_machine_pid, const SampleFormat& format) {
  const pid_t pid = guest_machine_pid.value_or(-1);
  const uint16_t misc = guest_machine_pid ? PERF_RECORD_MISC_GUEST_KERNEL : PERF_RECORD_MISC_KERNEL;
  const std::string image = guest_machine_pid ? "[guest.kernel.kallsyms]" : "[kernel.kallsyms]";
  // perf's machine__get_running_kernel_start: the reference symbol is "_text", else "_stext"
  // (arm64 has no _text), and the map ends at "_etext"; each only as a function (T, W) or
  // absolute (A) symbol. arm64's _etext is a data symbol (D), so there perf's map, and the
  // record, reach the top of the address space.
  std::optional<uint64_t> text, stext, etext;
  for (std::string_view line : split(kallsyms, '\n')) {
    std::vector<std::string_view> f = split(line, ' ');
    if (f.size() < 3 || f[1].size() != 1) continue;
    const char type = static_cast<char>(std::toupper(static_cast<unsigned char>(f[1][0])));
    if (type != 'T' && type != 'W' && type != 'A') continue;
    if (f[2] == "_text") text = hex_field(f[0]);
    if (f[2] == "_stext" && !stext) stext = hex_field(f[0]);
    if (f[2] == "_etext") etext = hex_field(f[0]);
    if (text && etext) break;
  }
  const std::optional<uint64_t> start = text ? text : stext;
  const std::string reference = text ? "_text" : "_stext";
  const uint64_t end = etext.value_or(~uint64_t{0});
  std::vector<RecordBytes> records;
  // Zero addresses (kptr_restrict) give no usable kernel map; the report says why later.
  if (start && *start != 0 && end > *start)
    records.push_back(mmap_record(pid, 0, *start, end - *start, *start, image + reference, misc, format));
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
    by_address.emplace(*base, mmap_record(pid, 0, *base, *size, 0, "[" + std::string(f[0]) + "]", misc, format));
  }
  auto at = guest_machine_pid ? records.begin() : records.end();
  for (auto& [base, record] : by_address) at = std::next(records.insert(at, std::move(record)));
  return records;
}

Result<std::vector<RecordBytes>> synthesize_kernel_maps(const SampleFormat& format, const ProcRoot& root) {
  return kernel_maps(root.proc / "kallsyms", root.proc / "modules", std::nullopt, format);
}

Result<std::vector<RecordBytes>> synthesize_guest_kernel_maps(const std::filesystem::path& kallsyms,
                                                              const std::filesystem::path& modules, pid_t machine_pid,
                                                              const SampleFormat& format) {
  return kernel_maps(kallsyms, modules, machine_pid, format);
}

}  // namespace vperf::data
