#include "session/jit_inject.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include <map>
#include <system_error>

#include "core/error.h"
#include "core/files.h"
#include "symbols/jit_elf.h"
#include "symbols/jitdump.h"

namespace vperf::session {

namespace {

constexpr const char* kClockHint = "record with -k mono (perf's -k 1): a JIT's dump is timed by CLOCK_MONOTONIC";

bool monotonic_clock(const perf_event_attr& attr) { return attr.use_clockid && attr.clockid == CLOCK_MONOTONIC; }

}  // namespace

JitInjector::JitInjector(const std::vector<data::EventAttrEntry>& attrs) : attrs_(attrs) {
  // perf gives every injected record the first event's trailer layout, as all its events share it.
  if (!attrs_.empty()) {
    format_ = data::SampleFormat::from_attr(attrs_.front().attr);
    if (!attrs_.front().ids.empty()) first_id_ = attrs_.front().ids.front();
  }
}

JitInjector::~JitInjector() {
  if (keep_) return;
  std::error_code ignored;
  for (const std::filesystem::path& file : written_) std::filesystem::remove(file, ignored);
}

std::optional<std::vector<std::vector<uint8_t>>> JitInjector::replace(const data::Record& record) {
  std::string_view filename;
  uint32_t pid = 0;
  if (const auto* m = std::get_if<data::MmapRecord>(&record.body)) {
    filename = m->filename;
    pid = m->pid;
  } else if (const auto* m2 = std::get_if<data::Mmap2Record>(&record.body)) {
    filename = m2->filename;
    pid = m2->pid;
  } else {
    return std::nullopt;
  }
  if (symbols::is_jitdump_marker(filename, pid)) {
    std::vector<std::vector<uint8_t>> out = inject_dump(std::string(filename));
    jit_pids_.insert(pid);
    return out;
  }
  // The JIT's own view of its code, now named by the ELF files.
  if (jit_pids_.contains(pid) && (filename.starts_with("//anon") || filename.starts_with("/memfd:")))
    return std::vector<std::vector<uint8_t>>{};
  return std::nullopt;
}

std::vector<std::vector<uint8_t>> JitInjector::inject_dump(const std::string& path) {
  // A dump holds every function's code: a large JIT's reaches hundreds of MB.
  Result<std::string> text = read_file(path, size_t{1} << 32);
  if (!text)
    throw UserError("cannot read the JIT dump " + path + ": " + text.error().describe(),
                    "inject --jit reads each dump where the recorded JIT wrote it: run it on the machine that recorded");
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(text->data()), text->size());
  Result<symbols::Jitdump> dump = symbols::parse_jitdump(bytes);
  if (!dump) throw UserError("cannot read the JIT dump " + path + ": " + dump.error().describe(), "");
  if (dump->arch_timestamps)
    throw UserError("the JIT dump " + path + " is timed by the CPU's counter (JITDUMP_FLAGS_ARCH_TIMESTAMP), which vperf inject does not convert",
                    "run the JIT with CLOCK_MONOTONIC times (its default) and record with -k mono");
  for (const data::EventAttrEntry& attr : attrs_)
    if (!monotonic_clock(attr.attr))
      throw UserError("the recording's event " + attr.name + " is not timed by CLOCK_MONOTONIC, so " + path +
                          "'s times cannot place its code",
                      kClockHint);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<std::vector<uint8_t>> out;
  std::map<uint64_t, std::filesystem::path> by_index;
  for (const symbols::Jitdump::Entry& entry : dump->entries) {
    if (!entry.is_move) {
      const symbols::JitCodeLoad& load = entry.load;
      const std::filesystem::path elf = dir / ("jitted-" + std::to_string(load.pid) + "-" + std::to_string(load.code_index) + ".so");
      Result<std::vector<uint8_t>> id = symbols::write_jit_elf(elf, dump->elf_machine, load.name, load.code_addr, load.code);
      if (!id) throw UserError("cannot write " + elf.string() + ": " + id.error().describe(), "inject --jit writes the functions' ELF files beside the dump: make its directory writable");
      written_.push_back(elf);
      build_ids_.push_back(data::BuildIdEntry{-1, PERF_RECORD_MISC_USER, *id, elf.string()});
      by_index[load.code_index] = elf;
      out.push_back(mmap2_record(elf, load.pid, load.tid, load.code_addr, load.code.size(), load.timestamp));
    } else {
      const symbols::JitCodeMove& move = entry.move;
      auto it = by_index.find(move.code_index);
      if (it == by_index.end()) continue;  // a move of code this dump never loaded: nothing names it
      out.push_back(mmap2_record(it->second, move.pid, move.tid, move.new_code_addr, move.code_size, move.timestamp));
    }
  }
  return out;
}

// As perf's jit_repipe_code_load: a shared executable mapping of the ELF file at its text
// offset, the file's device, inode and mode (perf puts st_mode in prot), generation 1.
std::vector<uint8_t> JitInjector::mmap2_record(const std::filesystem::path& elf, uint32_t pid, uint32_t tid, uint64_t address,
                                               uint64_t size, uint64_t time) const {
  struct stat st {};
  if (::stat(elf.c_str(), &st) != 0) st = {};
  data::Mmap2Record m;
  m.pid = pid;
  m.tid = tid;
  m.addr = address;
  m.len = size;
  m.pgoff = symbols::kJitElfTextOffset;
  m.maj = major(st.st_dev);
  m.min = minor(st.st_dev);
  m.ino = st.st_ino;
  m.ino_generation = 1;
  m.prot = st.st_mode;
  m.flags = MAP_SHARED;
  m.filename = elf.string();
  data::Record r;
  r.type = PERF_RECORD_MMAP2;
  r.misc = PERF_RECORD_MISC_USER;
  r.body = std::move(m);
  r.sample_id.pid = pid;
  r.sample_id.tid = tid;
  r.sample_id.time = time;
  r.sample_id.id = first_id_;
  r.has_sample_id = format_.sample_id_all;
  return data::build_record(r, attrs_.empty() ? nullptr : &format_);
}

}  // namespace vperf::session
