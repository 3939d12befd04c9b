#include "symbols/jitdump.h"

#include "core/byte_reader.h"

namespace vperf::symbols {

namespace {

constexpr uint32_t kSupportedVersion = 1;
constexpr uint64_t kHeaderSize = 40;
constexpr uint64_t kFlagArchTimestamp = 1;
constexpr uint64_t kPrefixSize = 16;  // id, total_size, timestamp
enum : uint32_t { kCodeLoad = 0, kCodeMove = 1, kDebugInfo = 2, kCodeClose = 3, kUnwindingInfo = 4 };

Result<JitCodeLoad> code_load(ByteReader& r, uint64_t timestamp) {
  JitCodeLoad load;
  load.timestamp = timestamp;
  uint64_t code_size = 0;
  if (!r.take(load.pid) || !r.take(load.tid) || !r.take(load.vma) || !r.take(load.code_addr) || !r.take(code_size) ||
      !r.take(load.code_index))
    return Error{"a JIT_CODE_LOAD record is shorter than its fields"};
  // The name runs to its NUL; the code is the record's last code_size bytes.
  if (code_size > r.remaining()) return Error{"a JIT_CODE_LOAD record's code (" + std::to_string(code_size) + " bytes) is larger than the record"};
  ByteReader name_bytes = r.sub(r.remaining() - code_size, "name").value();
  VPERF_TRY(load.name, name_bytes.c_string("JIT_CODE_LOAD name"));
  std::span<const uint8_t> code = r.rest();
  load.code.assign(code.begin(), code.end());
  return load;
}

Result<JitCodeMove> code_move(ByteReader& r, uint64_t timestamp) {
  JitCodeMove move;
  move.timestamp = timestamp;
  if (!r.take(move.pid) || !r.take(move.tid) || !r.take(move.vma) || !r.take(move.old_code_addr) || !r.take(move.new_code_addr) ||
      !r.take(move.code_size) || !r.take(move.code_index))
    return Error{"a JIT_CODE_MOVE record is shorter than its fields"};
  return move;
}

}  // namespace

Result<Jitdump> parse_jitdump(std::span<const uint8_t> bytes) {
  ByteReader r(bytes);
  Jitdump out;
  uint32_t magic = 0, version = 0, header_size = 0, pad = 0;
  uint64_t flags = 0;
  if (!r.take(magic) || !r.take(version) || !r.take(header_size) || !r.take(out.elf_machine) || !r.take(pad) || !r.take(out.pid) ||
      !r.take(out.timestamp) || !r.take(flags))
    return Error{"the jitdump header is cut short (" + std::to_string(bytes.size()) + " bytes)"};
  if (magic == __builtin_bswap32(kJitdumpMagic)) return Error{"the jitdump was written on a machine of the other byte order"};
  if (magic != kJitdumpMagic) return Error{"not a jitdump (no JiTD magic)"};
  if (version > kSupportedVersion) return Error{"jitdump version " + std::to_string(version) + " is newer than version 1, which vperf reads"};
  if (header_size < kHeaderSize || header_size > bytes.size())
    return Error{"the jitdump header's size " + std::to_string(header_size) + " is not between 40 and the file's size"};
  out.arch_timestamps = (flags & kFlagArchTimestamp) != 0;
  VPERF_TRY(r.seek(header_size));
  while (!r.at_end()) {
    uint32_t id = 0, total_size = 0;
    uint64_t timestamp = 0;
    const size_t start = r.position();
    if (!r.take(id) || !r.take(total_size) || !r.take(timestamp) || total_size < kPrefixSize || total_size - kPrefixSize > r.remaining()) {
      out.truncated = true;  // a record the JIT had not finished writing
      break;
    }
    ByteReader body = r.sub(total_size - kPrefixSize, "record").value();
    if (id == kCodeClose) break;
    if (id == kCodeLoad) {
      Result<JitCodeLoad> load = code_load(body, timestamp);
      if (!load) return Error{load.error().message + " (at byte " + std::to_string(start) + ")"};
      out.entries.push_back({false, std::move(*load), {}});
    } else if (id == kCodeMove) {
      Result<JitCodeMove> move = code_move(body, timestamp);
      if (!move) return Error{move.error().message + " (at byte " + std::to_string(start) + ")"};
      out.entries.push_back({true, {}, *move});
    } else {
      ++out.skipped_records;  // debug lines, unwinding tables, kinds newer than the specification
    }
  }
  return out;
}

bool is_jitdump_marker(std::string_view path, uint32_t mapping_pid) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view name = path.substr(slash + 1);
  if (!name.starts_with("jit-") || !name.ends_with(".dump")) return false;
  std::string_view digits = name.substr(4, name.size() - 4 - 5);
  if (digits.empty() || digits.size() > 10) return false;
  uint64_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    pid = pid * 10 + static_cast<uint64_t>(c - '0');
  }
  return mapping_pid == 0 || pid == mapping_pid;
}

}  // namespace vperf::symbols
