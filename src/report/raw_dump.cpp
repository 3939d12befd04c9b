#include "report/raw_dump.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <bit>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <variant>

#include "core/byte_reader.h"
#include "core/cpu_set.h"  // format_cpu_list: perf's cpu_map__snprint
#include "data/perf_data_format.h"
#include "report/event_names.h"
#include "tracing/recorded_tracing_data.h"

namespace vperf::report {

namespace {

__attribute__((format(printf, 2, 3))) void append_format(std::string& out, const char* format, ...) {
  char small[512];
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(small, sizeof small, format, args);
  va_end(args);
  if (n > 0 && static_cast<size_t>(n) < sizeof small) {
    out.append(small, static_cast<size_t>(n));
  } else if (n > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, format, again);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

// perf_event__name: what follows "PERF_RECORD_" and names the rows of the stats.
const char* perf_record_name(uint32_t type) {
  static constexpr const char* kKernel[] = {
      "TOTAL", "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE", "FORK", "READ", "SAMPLE", "MMAP2", "AUX",
      "ITRACE_START", "LOST_SAMPLES", "SWITCH", "SWITCH_CPU_WIDE", "NAMESPACES", "KSYMBOL", "BPF_EVENT", "CGROUP",
      "TEXT_POKE", "AUX_OUTPUT_HW_ID"};
  static constexpr const char* kUser[] = {
      "ATTR", "EVENT_TYPE", "TRACING_DATA", "BUILD_ID", "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE",
      "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV",
      "FEATURE", "COMPRESSED", "FINISHED_INIT"};
  if (type < std::size(kKernel)) return kKernel[type];
  if (type >= data::kRecordHeaderAttr && type - data::kRecordHeaderAttr < std::size(kUser))
    return kUser[type - data::kRecordHeaderAttr];
  return "UNKNOWN";
}

// perf's trace_event(): the record's header.size bytes, 16 a line, hex then ASCII.
void append_hex_dump(std::span<const uint8_t> bytes, std::string& out) {
  append_format(out, ".\n. ... raw event: size %zu bytes\n", bytes.size());
  for (size_t line = 0; line < bytes.size(); line += 16) {
    append_format(out, ".  %04zx: ", line);
    for (size_t i = line; i < line + 16; ++i) {
      if (i < bytes.size()) append_format(out, " %02x", bytes[i]);
      else out += "   ";
    }
    out += "  ";
    for (size_t i = line; i < line + 16; ++i) {
      if (i < bytes.size()) out += std::isprint(bytes[i]) && bytes[i] < 0x80 ? static_cast<char>(bytes[i]) : '.';
      else out += ' ';
    }
    out += '\n';
  }
  out += '\n';
}

// x86's perf_reg_name (perf_regs.h: PERF_REG_X86_*); the dump names the registers a sample's
// mask holds. Each XMM register takes two bits, the second unnamed (perf prints "(null)").
const char* x86_register_name(unsigned bit) {
  static constexpr const char* kNames[] = {"AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "IP", "FLAGS", "CS", "SS",
                                           "DS", "ES", "FS", "GS", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"};
  static constexpr const char* kXmm[] = {"XMM0", "XMM1", "XMM2",  "XMM3",  "XMM4",  "XMM5",  "XMM6",  "XMM7",
                                         "XMM8", "XMM9", "XMM10", "XMM11", "XMM12", "XMM13", "XMM14", "XMM15"};
  if (bit < std::size(kNames)) return kNames[bit];
  if (bit >= 32 && (bit - 32) % 2 == 0 && (bit - 32) / 2 < std::size(kXmm)) return kXmm[(bit - 32) / 2];
  return "(null)";
}

void append_registers(const char* kind, uint64_t abi, uint64_t mask, const std::vector<uint64_t>& values,
                      std::string& out) {
  if (abi == PERF_SAMPLE_REGS_ABI_NONE) return;  // perf has no registers to show
  static constexpr const char* kAbi[] = {"none", "32-bit", "64-bit"};
  append_format(out, "... %s regs: mask 0x%llx ABI %s\n", kind, static_cast<unsigned long long>(mask),
                abi < std::size(kAbi) ? kAbi[abi] : "unknown");
  size_t i = 0;
  for (unsigned bit = 0; bit < 64 && i < values.size(); ++bit) {
    if (!(mask & (uint64_t{1} << bit))) continue;
    append_format(out, ".... %-5s 0x%016llx\n", x86_register_name(bit), static_cast<unsigned long long>(values[i++]));
  }
}

// perf's unit_number__scnprintf as get_page_size_name uses it ("N/A" for 0).
std::string page_size_name(uint64_t size) {
  if (size == 0) return "N/A";
  static constexpr char kUnits[] = "BKMG";
  int unit = 0;
  while (size / 1024 > 1 && unit < 3) {
    size /= 1024;
    ++unit;
  }
  return std::to_string(size) + kUnits[unit];
}

// Where PERF_SAMPLE_STACK_USER's size field sits in the record (perf's user_stack.offset): the
// header and every field sample_type puts before it.
uint64_t user_stack_offset(const data::Sample& s, uint64_t type) {
  uint64_t at = sizeof(perf_event_header);
  for (uint64_t bit : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
                       PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD})
    if (type & bit) at += 8;
  if (type & PERF_SAMPLE_READ) at += s.read.size();
  if (type & PERF_SAMPLE_CALLCHAIN) at += 8 + 8 * s.callchain.size();
  if (type & PERF_SAMPLE_RAW) at += (4 + s.raw.size() + 7) / 8 * 8;
  if (type & PERF_SAMPLE_BRANCH_STACK) at += s.branch_stack.size();
  if (type & PERF_SAMPLE_REGS_USER) at += 8 + 8 * s.regs_user.size();
  return at;
}

// perf's sample_read__printf over the read_format block as recorded.
void append_sample_read(std::span<const uint8_t> bytes, uint64_t read_format, std::string& out) {
  out += "... sample_read:\n";
  ByteReader r(bytes);
  auto next = [&r] { return r.u64().value_or(0); };
  const bool group = read_format & PERF_FORMAT_GROUP;
  const uint64_t nr = group ? next() : 1;
  const uint64_t first_value = group ? 0 : next();
  if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
    append_format(out, "...... time enabled %016llx\n", static_cast<unsigned long long>(next()));
  if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
    append_format(out, "...... time running %016llx\n", static_cast<unsigned long long>(next()));
  if (group) append_format(out, ".... group nr %llu\n", static_cast<unsigned long long>(nr));
  for (uint64_t i = 0; i < nr && (group ? r.remaining() >= 8 : i == 0); ++i) {
    const uint64_t value = group ? next() : first_value;
    const uint64_t id = read_format & PERF_FORMAT_ID ? next() : 0;
    append_format(out, "..... id %016llx, value %016llx", static_cast<unsigned long long>(id),
                  static_cast<unsigned long long>(value));
    if (read_format & PERF_FORMAT_LOST) append_format(out, ", lost %llu", static_cast<unsigned long long>(next()));
    out += '\n';
  }
}

// The CPUs of a perf_record_cpu_map_data (CPU_MAP's body, EVENT_UPDATE's CPUS): a list of u16,
// a bitmask of 32- or 64-bit words, or a range (perf 6.1's three encodings).
Result<std::vector<int>> cpu_map_cpus(ByteReader r) {
  VPERF_TRY(uint16_t type, r.u16("cpu map type"));
  std::vector<int> cpus;
  if (type == 0) {  // PERF_CPU_MAP__CPUS
    VPERF_TRY(uint16_t nr, r.u16("cpu count"));
    for (uint16_t i = 0; i < nr; ++i) {
      VPERF_TRY(uint16_t cpu, r.u16("cpu"));
      cpus.push_back(cpu == 0xffff ? -1 : cpu);
    }
  } else if (type == 1) {  // PERF_CPU_MAP__MASK
    VPERF_TRY(uint16_t nr, r.u16("mask words"));
    VPERF_TRY(uint16_t long_size, r.u16("mask word size"));
    if (long_size != 4 && long_size != 8) return Error{"cpu mask words of " + std::to_string(long_size) + " bytes"};
    if (long_size == 8) VPERF_TRY(r.skip(4, "padding"));
    for (uint16_t word = 0; word < nr; ++word) {
      uint64_t bits = 0;
      if (long_size == 4) {
        VPERF_TRY(uint32_t w, r.u32("mask word"));
        bits = w;
      } else {
        VPERF_TRY(uint64_t w, r.u64("mask word"));
        bits = w;
      }
      for (unsigned bit = 0; bit < 8u * long_size; ++bit)
        if (bits & (uint64_t{1} << bit)) cpus.push_back(static_cast<int>(word * 8u * long_size + bit));
    }
  } else if (type == 2) {  // PERF_CPU_MAP__RANGE_CPUS
    VPERF_TRY(uint8_t any_cpu, r.u8("any cpu"));
    VPERF_TRY(r.skip(1, "padding"));
    VPERF_TRY(uint16_t start, r.u16("start cpu"));
    VPERF_TRY(uint16_t end, r.u16("end cpu"));
    if (any_cpu) cpus.push_back(-1);
    for (int cpu = start; cpu <= end; ++cpu) cpus.push_back(cpu);
  } else {
    return Error{"cpu map of type " + std::to_string(type)};
  }
  return cpus;
}

std::string nul_terminated(std::span<const uint8_t> bytes) {
  std::string text(bytes.begin(), bytes.end());
  return text.substr(0, text.find('\0'));
}

void append_event_update(const data::EventUpdateRecord& u, std::string& out) {
  append_format(out, "\n... id:    %llu\n", static_cast<unsigned long long>(u.id));
  switch (u.type) {
    case 0:  // PERF_EVENT_UPDATE__UNIT
      append_format(out, "... unit:  %s\n", nul_terminated(u.data).c_str());
      return;
    case 1: {  // PERF_EVENT_UPDATE__SCALE
      double scale = 0;
      if (u.data.size() >= sizeof scale) std::memcpy(&scale, u.data.data(), sizeof scale);
      append_format(out, "... scale: %f\n", scale);
      return;
    }
    case 2:  // PERF_EVENT_UPDATE__NAME
      append_format(out, "... name:  %s\n", nul_terminated(u.data).c_str());
      return;
    case 3:  // PERF_EVENT_UPDATE__CPUS
      if (Result<std::vector<int>> cpus = cpu_map_cpus(ByteReader(u.data))) {
        out += "... ";
        out += format_cpu_list(*cpus);
        out += '\n';
        return;
      }
      out += "failed to get cpus\n";
      return;
    default:
      out += "... unknown type\n";
      return;
  }
}

void append_mmap2(const data::Mmap2Record& m, uint16_t misc, std::string& out) {
  append_format(out, " %d/%d: [%#llx(%#llx) @ %#llx ", static_cast<int>(m.pid), static_cast<int>(m.tid),
                static_cast<unsigned long long>(m.addr), static_cast<unsigned long long>(m.len),
                static_cast<unsigned long long>(m.pgoff));
  if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    out += '<';
    for (uint8_t byte : m.build_id) append_format(out, "%02x", byte);
    out += '>';
  } else {
    append_format(out, "%02x:%02x %llu %llu", m.maj, m.min, static_cast<unsigned long long>(m.ino),
                  static_cast<unsigned long long>(m.ino_generation));
  }
  append_format(out, "]: %c%c%c%c %s\n", m.prot & PROT_READ ? 'r' : '-', m.prot & PROT_WRITE ? 'w' : '-',
                m.prot & PROT_EXEC ? 'x' : '-', m.flags & MAP_SHARED ? 's' : 'p', m.filename.c_str());
}

}  // namespace

RawDump::RawDump(const data::PerfDataReader& reader, std::string path, RawDumpCommand command)
    : reader_(reader), path_(std::move(path)), command_(command) {
  if (!reader.is_pipe()) attrs_seen_ = reader.attrs().size();
}

void RawDump::append_record(const data::RecordView& view, std::string& out) {
  const uint32_t type = view.record.type;
  const uint16_t size = static_cast<uint16_t>(view.bytes.size() >= 8 ? view.bytes[6] | (view.bytes[7] << 8) : 0);
  // A pipe's offsets count from the first record, after the 16-byte pipe header.
  const uint64_t offset = reader_.is_pipe() ? view.offset - data::kPipeHeaderSize : view.offset;
  append_format(out, "\n%#llx@%s [%#x]: event: %u\n", static_cast<unsigned long long>(offset), path_.c_str(), size,
                type);
  append_hex_dump(view.bytes.first(std::min<size_t>(size, view.bytes.size())), out);
  append_timestamp(view, out);
  append_format(out, "%#llx [%#x]: PERF_RECORD_%s", static_cast<unsigned long long>(offset), size,
                perf_record_name(type));
  append_body(view, out);
  if (type == data::kRecordHeaderAttr) ++attrs_seen_;
  if (type == PERF_RECORD_SAMPLE) ++samples_per_event_[view.attr_index];
}

void RawDump::append_timestamp(const data::RecordView& view, std::string& out) const {
  // perf's evlist__print_tstamp over the events it knows by now: the first one's sample_id_all,
  // the union of their sample types.
  const std::vector<data::EventAttrEntry>& attrs = reader_.attrs();
  const size_t known = std::min(attrs_seen_, attrs.size());
  uint64_t combined = 0;
  for (size_t i = 0; i < known; ++i) combined |= attrs[i].attr.sample_type;
  const bool sample_id_all = known > 0 && attrs[0].attr.sample_id_all;
  const uint32_t type = view.record.type;
  if (type != PERF_RECORD_SAMPLE && !sample_id_all) {
    out += "-1 -1 ";
    return;
  }
  // User records carry no sample (perf's is zeroed); a kernel record's event that does not
  // sample a field leaves perf's -1 there.
  const bool user = type >= data::kRecordHeaderAttr;
  const uint64_t own = view.attr ? view.attr->attr.sample_type : 0;
  if (combined & PERF_SAMPLE_CPU) {
    const uint32_t cpu = user ? 0 : (own & PERF_SAMPLE_CPU) ? view.record.sample_id.cpu : UINT32_MAX;
    append_format(out, "%u ", cpu);
  }
  if (combined & PERF_SAMPLE_TIME) {
    const uint64_t time = user ? 0 : (own & PERF_SAMPLE_TIME) ? view.record.sample_id.time : UINT64_MAX;
    append_format(out, "%llu ", static_cast<unsigned long long>(time));
  }
}

void RawDump::append_sample(const data::RecordView& view, std::string& out) const {
  const auto& s = std::get<data::Sample>(view.record.body);
  const perf_event_attr* attr = view.attr ? &view.attr->attr : nullptr;
  const uint64_t type = attr ? attr->sample_type : 0;
  const bool has_tid = type & PERF_SAMPLE_TID;
  const uint64_t period = (type & PERF_SAMPLE_PERIOD) || !attr ? s.period : attr->sample_period;
  append_format(out, "(IP, 0x%x): %d/%d: %#llx period: %llu addr: %#llx\n", view.record.misc,
                has_tid ? static_cast<int>(view.record.sample_id.pid) : -1,
                has_tid ? static_cast<int>(view.record.sample_id.tid) : -1, static_cast<unsigned long long>(s.ip),
                static_cast<unsigned long long>(period), static_cast<unsigned long long>(s.addr));
  if (type & PERF_SAMPLE_CALLCHAIN) {
    append_format(out, "... FP chain: nr:%zu\n", s.callchain.size());
    for (size_t i = 0; i < s.callchain.size(); ++i)
      append_format(out, "..... %2zu: %016llx\n", i, static_cast<unsigned long long>(s.callchain[i]));
  }
  if (type & PERF_SAMPLE_REGS_USER) append_registers("user", s.regs_user_abi, attr->sample_regs_user, s.regs_user, out);
  if (type & PERF_SAMPLE_REGS_INTR) append_registers("intr", s.regs_intr_abi, attr->sample_regs_intr, s.regs_intr, out);
  if (type & PERF_SAMPLE_STACK_USER)  // perf's size is the kernel's dyn_size: the bytes it could copy
    append_format(out, "... ustack: size %llu, offset 0x%llx\n",
                  static_cast<unsigned long long>(s.stack_user.empty() ? 0 : s.stack_user_dyn_size),
                  static_cast<unsigned long long>(user_stack_offset(s, type)));
  if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
    if (type & PERF_SAMPLE_WEIGHT_STRUCT)  // {u32 var1_dw; u16 var2_w (ins_lat); u16 var3_w}
      append_format(out, "... weight: %llu,0x%x,0x%x\n", static_cast<unsigned long long>(s.weight & 0xffffffff),
                    static_cast<unsigned>((s.weight >> 32) & 0xffff), static_cast<unsigned>(s.weight >> 48));
    else
      append_format(out, "... weight: %llu\n", static_cast<unsigned long long>(s.weight));
  }
  if (type & PERF_SAMPLE_DATA_SRC) append_format(out, " . data_src: 0x%llx\n", static_cast<unsigned long long>(s.data_src));
  if (type & PERF_SAMPLE_PHYS_ADDR)
    append_format(out, " .. phys_addr: 0x%llx\n", static_cast<unsigned long long>(s.phys_addr));
  if (type & PERF_SAMPLE_DATA_PAGE_SIZE)
    append_format(out, " .. data page size: %s\n", page_size_name(s.data_page_size).c_str());
  if (type & PERF_SAMPLE_CODE_PAGE_SIZE)
    append_format(out, " .. code page size: %s\n", page_size_name(s.code_page_size).c_str());
  if (type & PERF_SAMPLE_TRANSACTION)
    append_format(out, "... transaction: %llx\n", static_cast<unsigned long long>(s.transaction));
  if (type & PERF_SAMPLE_READ) append_sample_read(s.read, attr->read_format, out);
}

namespace {

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

void append_mmap(const data::MmapRecord& m, uint16_t misc, std::string& out) {
  append_format(out, " %d/%d: [%#llx(%#llx) @ %#llx]: %c %s\n", static_cast<int>(m.pid), static_cast<int>(m.tid),
                ull(m.addr), ull(m.len), ull(m.pgoff), misc & PERF_RECORD_MISC_MMAP_DATA ? 'r' : 'x', m.filename.c_str());
}

void append_comm(const data::CommRecord& c, uint16_t misc, std::string& out) {
  append_format(out, "%s: %s:%d/%d\n", misc & PERF_RECORD_MISC_COMM_EXEC ? " exec" : "", c.comm.c_str(),
                static_cast<int>(c.pid), static_cast<int>(c.tid));
}

void append_task(const data::TaskRecord& t, std::string& out) {
  append_format(out, "(%d:%d):(%d:%d)\n", static_cast<int>(t.pid), static_cast<int>(t.tid), static_cast<int>(t.ppid),
                static_cast<int>(t.ptid));
}

// SWITCH says in or out; SWITCH_CPU_WIDE also the task switched to or from.
void append_switch(const data::Record& record, std::string& out) {
  const bool switch_out = record.misc & PERF_RECORD_MISC_SWITCH_OUT;
  const char* in_out = !switch_out ? "IN         "
                       : !(record.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? "OUT        "
                                                                               : "OUT preempt";
  if (record.type == PERF_RECORD_SWITCH) {
    append_format(out, " %s\n", in_out);
    return;
  }
  const auto& s = std::get<data::SwitchRecord>(record.body);
  append_format(out, " %s  %s pid/tid: %5d/%-5d\n", in_out, switch_out ? "next" : "prev", static_cast<int>(s.next_prev_pid),
                static_cast<int>(s.next_prev_tid));
}

void append_id_index(const data::IdIndexRecord& index, std::string& out) {
  append_format(out, " nr: %zu\n", index.entries.size());
  for (const data::IdIndexEntry& e : index.entries)
    append_format(out, " ... id: %llu  idx: %llu  cpu: %lld  tid: %lld\n", ull(e.id), ull(e.idx), static_cast<long long>(e.cpu),
                  static_cast<long long>(e.tid));
}

// perf report handles neither THREAD_MAP nor CPU_MAP; perf script both.
void append_thread_map(const data::ThreadMapRecord& map, bool script, std::string& out) {
  append_format(out, " nr: %zu thread%s: ", map.entries.size(), map.entries.size() > 1 ? "s" : "");
  for (size_t i = 0; i < map.entries.size(); ++i) append_format(out, "%s%d", i ? ", " : "", static_cast<int>(map.entries[i].pid));
  out += script ? "\n" : "\n: unhandled!\n";
}

void append_cpu_map(const data::UnparsedRecord& record, bool script, std::string& out) {
  Result<std::vector<int>> cpus = cpu_map_cpus(ByteReader(record.body));
  out += ": ";
  out += cpus ? format_cpu_list(*cpus) : std::string();
  out += script ? "\n" : "\n: unhandled!\n";
}

}  // namespace

// perf's dump_read: the count, then the fields read_format names, each read from its place in
// perf's fixed struct (value, enabled, running, id, lost) whatever the format holds.
void RawDump::append_read(const data::RecordView& view, std::string& out) const {
  const auto& read = std::get<data::ReadRecord>(view.record.body);
  const data::EventAttrEntry* attr = view.attr;
  append_format(out, ": %u %u %s %llu\n", read.pid, read.tid, attr ? attr->name.c_str() : "unknown", ull(read.value()));
  auto slot = [&](size_t i) {
    uint64_t value = 0;
    if (read.values.size() >= (i + 1) * sizeof value) std::memcpy(&value, read.values.data() + i * sizeof value, sizeof value);
    return ull(value);
  };
  const uint64_t format = attr ? attr->attr.read_format : 0;
  if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) append_format(out, "... time enabled : %llu\n", slot(1));
  if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) append_format(out, "... time running : %llu\n", slot(2));
  if (format & PERF_FORMAT_ID) append_format(out, "... id           : %llu\n", slot(3));
  if (format & PERF_FORMAT_LOST) append_format(out, "... lost         : %llu\n", slot(4));
  if (command_ == RawDumpCommand::Script) out += ": unhandled!\n";  // perf script has no READ handler: its stub says so
}

bool append_task_or_map_event(const data::Record& record, std::string& out) {
  if (!data::is_task_or_map_record(record.type) || std::holds_alternative<data::UnparsedRecord>(record.body)) return false;
  out += "PERF_RECORD_";
  out += perf_record_name(record.type);
  if (const auto* m = std::get_if<data::MmapRecord>(&record.body)) append_mmap(*m, record.misc, out);
  else if (const auto* m2 = std::get_if<data::Mmap2Record>(&record.body)) append_mmap2(*m2, record.misc, out);
  else if (const auto* c = std::get_if<data::CommRecord>(&record.body)) append_comm(*c, record.misc, out);
  else append_task(std::get<data::TaskRecord>(record.body), out);
  return true;
}

void RawDump::append_body(const data::RecordView& view, std::string& out) {
  const data::Record& record = view.record;
  const bool script = command_ == RawDumpCommand::Script;
  // A record whose bytes are not its type's fields (more than the type has: damaged or newer
  // input) is kept as bytes by the reader; only its hex dump says what it holds.
  if (std::holds_alternative<data::UnparsedRecord>(record.body) && record.type != data::kRecordCpuMap) {
    out += ": unhandled!\n";
    return;
  }
  switch (record.type) {
    case PERF_RECORD_SAMPLE: return append_sample(view, out);
    case PERF_RECORD_MMAP: return append_mmap(std::get<data::MmapRecord>(record.body), record.misc, out);
    case PERF_RECORD_MMAP2: return append_mmap2(std::get<data::Mmap2Record>(record.body), record.misc, out);
    case PERF_RECORD_COMM: return append_comm(std::get<data::CommRecord>(record.body), record.misc, out);
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: return append_task(std::get<data::TaskRecord>(record.body), out);
    case PERF_RECORD_READ: return append_read(view, out);
    case PERF_RECORD_LOST: {
      const auto& l = std::get<data::LostRecord>(record.body);
      return append_format(out, ": id:%llu: lost:%llu\n", ull(l.id), ull(l.lost));
    }
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE: return append_switch(record, out);
    case PERF_RECORD_KSYMBOL: {
      const auto& k = std::get<data::KsymbolRecord>(record.body);
      return append_format(out, " addr %llx len %u type %u flags 0x%x name %s\n", ull(k.addr), k.len, k.ksym_type, k.flags,
                           k.name.c_str());
    }
    case PERF_RECORD_BPF_EVENT: {
      const auto& b = std::get<data::BpfEventRecord>(record.body);
      return append_format(out, " type %u, flags %u, id %u\n", b.type, b.flags, b.id);
    }
    case PERF_RECORD_CGROUP: {
      const auto& c = std::get<data::CgroupRecord>(record.body);
      return append_format(out, " cgroup: %llu %s\n", ull(c.id), c.path.c_str());
    }
    case data::kRecordFinishedRound: out += '\n'; return;
    case data::kRecordIdIndex: return append_id_index(std::get<data::IdIndexRecord>(record.body), out);
    case data::kRecordThreadMap: return append_thread_map(std::get<data::ThreadMapRecord>(record.body), script, out);
    case data::kRecordCpuMap: return append_cpu_map(std::get<data::UnparsedRecord>(record.body), script, out);
    case data::kRecordEventUpdate: return append_event_update(std::get<data::EventUpdateRecord>(record.body), out);
    case data::kRecordHeaderAttr:
    case data::kRecordHeaderEventType:
    case data::kRecordHeaderTracingData:
    case data::kRecordHeaderBuildId:
    case data::kRecordHeaderFeature:
      return;  // perf's handlers print nothing
    default:
      out += ": unhandled!\n";
      return;
  }
}

void RawDump::append_sample_location(const ResolvedSample& sample, std::string& out) {
  append_format(out, " ... thread: %.*s:%d\n", static_cast<int>(sample.comm.size()), sample.comm.data(),
                static_cast<int>(sample.tid));
  out += " ...... dso: ";
  if (sample.at.map) out += sample.at.dso_name();
  else out += sample.cpumode == PERF_RECORD_MISC_HYPERVISOR ? "[hypervisor]" : "<not found>";
  out += '\n';
}

std::string_view report_header_hint() {
  return "# To display the perf.data header info, please use --header/--header-only options.\n#\n";
}

std::string aggregated_stats(const data::ReadStats& stats, const std::map<size_t, uint64_t>& samples_per_event,
                             const std::vector<std::string>& event_names) {
  std::string out = "\nAggregated stats:\n";
  uint64_t total = 0;
  for (const auto& [type, count] : stats.by_type) total += count;
  append_format(out, "%16s events: %10llu\n", "TOTAL", static_cast<unsigned long long>(total));
  for (const auto& [type, count] : stats.by_type) {
    if (count == 0 || type == 0) continue;
    append_format(out, "%16s events: %10llu  (%4.1f%%)\n", perf_record_name(type),
                  static_cast<unsigned long long>(count), 100.0 * static_cast<double>(count) / static_cast<double>(total));
  }
  for (const auto& [event, count] : samples_per_event) {
    if (count == 0 || event >= event_names.size()) continue;
    append_format(out, "%s stats:\n", event_names[event].c_str());
    append_format(out, "%16s events: %10llu\n", "SAMPLE", static_cast<unsigned long long>(count));
  }
  return out;
}

Result<std::string> record_stats(data::PerfDataReader& reader) {
  tracing::RecordedTracingData tracing([](const std::string&) {});
  tracing.load_file(reader);
  std::map<size_t, uint64_t> samples_per_event;
  Result<data::ReadStats> stats = reader.read([&](const data::RecordView& view) {
    tracing.load_record(view.record);
    if (view.record.type == PERF_RECORD_SAMPLE && view.attr_index != data::kNoAttrIndex) ++samples_per_event[view.attr_index];
    return true;
  });
  if (!stats) return stats.error();
  std::vector<std::string> names;
  for (const data::EventAttrEntry& entry : reader.attrs()) names.push_back(event_name(entry, tracing.decoder()));
  return aggregated_stats(*stats, samples_per_event, names);
}

Result<data::ReadStats> write_report_raw_dump(data::PerfDataReader& reader, symbols::Machines& machines,
                                              const std::string& path, std::ostream& out) {
  // Written in blocks: a dump is ~20 lines per record.
  constexpr size_t kBlock = 1 << 18;
  std::string buffer(report_header_hint());
  const auto flush = [&] {
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    buffer.clear();
  };
  // Tracepoints are named by the tracing data (a pipe's arrives as a record).
  tracing::RecordedTracingData tracing([](const std::string&) {});
  tracing.load_file(reader);
  RawDump dump(reader, path, RawDumpCommand::Report);
  SampleReplay replay(machines, ReplayOptions{.ordered = true, .resolve_chain = false});
  replay.set_record_observer([&](const data::RecordView& view) {
    tracing.load_record(view.record);
    dump.append_record(view, buffer);
  });
  Result<data::ReadStats> stats = replay.run(reader, [&](const ResolvedSample& sample) {
    dump.append_sample_location(sample, buffer);
    if (buffer.size() >= kBlock) flush();
    return true;
  });
  if (stats) {
    std::vector<std::string> names;
    for (const data::EventAttrEntry& entry : reader.attrs())
      names.push_back(event_name(entry, tracing.decoder()));
    buffer += aggregated_stats(*stats, dump.samples_per_event(), names);
  }
  flush();
  return stats;
}

}  // namespace vperf::report
