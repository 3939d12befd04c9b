#include "tracing/tracepoint_decoder.h"

#include <traceevent/event-parse.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <traceevent/trace-seq.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/byte_reader.h"
#include "core/strings.h"

namespace vperf::tracing {

struct TracepointDecoder::State {
  struct TepDeleter {
    void operator()(tep_handle* handle) const { tep_free(handle); }
  };
  std::unique_ptr<tep_handle, TepDeleter> tep;
  std::vector<std::string> warnings;
  KernelSymbolResolver resolver;
  // What the resolver callback last returned: libtraceevent reads the name and module right
  // after the call, so they only need to live until the next one.
  KernelSymbol last_symbol;
  trace_seq seq{};
  bool seq_ready = false;
  std::vector<uint8_t> scratch;     // format()'s padded copy of a sample
  size_t common_end = 0;            // common_fields_end of the loaded formats
  uint64_t printed_from_fields = 0;
  tep_plugin_list* plugins = nullptr;
  // The file's kallsyms until load_kernel_symbols() parses it (then emptied), and the events
  // found not to print a kernel symbol so far.
  std::string pending_kallsyms_copy;
  std::string_view pending_kallsyms;  // into the tracing data, or pending_kallsyms_copy
  std::vector<const tep_event*> print_no_symbol;
  PrintedTexts printed;  // format()'s texts of records seen before
  ~State() {
    if (seq_ready) trace_seq_destroy(&seq);
    if (plugins) tep_unload_plugins(plugins, tep.get());
  }
};

namespace {

constexpr uint8_t kMagic[] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};

// The "name: X" line of a format file, for messages.
std::string format_name(std::string_view text) {
  size_t at = text.find("name: ");
  if (at == std::string_view::npos) return "?";
  std::string_view rest = text.substr(at + 6);
  return std::string(rest.substr(0, rest.find('\n')));
}

Result<std::string> sized_text64(ByteReader& r, std::string_view what) {
  Result<uint64_t> size = r.u64(what);
  if (!size) return size.error();
  if (*size > r.remaining()) return r.truncated(what, static_cast<size_t>(std::min<uint64_t>(*size, SIZE_MAX)));
  Result<std::span<const uint8_t>> bytes = r.bytes(static_cast<size_t>(*size), what);
  if (!bytes) return bytes.error();
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

Result<std::string> sized_text32(ByteReader& r, std::string_view what) {
  Result<uint32_t> size = r.u32(what);
  if (!size) return size.error();
  Result<std::span<const uint8_t>> bytes = r.bytes(*size, what);
  if (!bytes) return bytes.error();
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

Result<void> expect_tag(ByteReader& r, std::string_view tag) {
  // The tag and its NUL.
  Result<std::span<const uint8_t>> bytes = r.bytes(tag.size() + 1, tag);
  if (!bytes) return bytes.error();
  if (std::memcmp(bytes->data(), tag.data(), tag.size()) != 0 || (*bytes)[tag.size()] != 0)
    return Error{"tracing data: expected the " + std::string(tag) + " section at offset " +
                 std::to_string(r.offset() - tag.size() - 1)};
  return {};
}

// The first field of the print fmt (REC->NAME) that the format does not declare, if any.
// libtraceevent looks up the field of __print_flags(REC->NAME, ...) and
// __print_symbolic(REC->NAME, ...) and writes through what it finds without checking, so a
// format naming a field it lacks crashes it (a fuzz find); the kernel only names its own.
std::optional<std::string> undeclared_field(std::string_view format) {
  std::vector<std::string_view> declared;
  for (std::string_view line : split(format, '\n')) {
    size_t at = line.find("field:");
    if (at == std::string_view::npos) continue;
    std::string_view decl = line.substr(at + 6);
    decl = trim(decl.substr(0, decl.find(';')));
    decl = decl.substr(0, decl.find('['));  // "char prev_comm[16]"
    size_t space = decl.find_last_of(" \t*");
    declared.push_back(space == std::string_view::npos ? decl : decl.substr(space + 1));
  }
  size_t print = format.find("print fmt:");
  if (print == std::string_view::npos) return std::nullopt;
  constexpr std::string_view kRec = "REC->";
  for (size_t at = format.find(kRec, print); at != std::string_view::npos; at = format.find(kRec, at + 1)) {
    std::string_view rest = format.substr(at + kRec.size());
    size_t end = 0;
    while (end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[end])) || rest[end] == '_')) ++end;
    std::string_view name = rest.substr(0, end);
    if (std::find(declared.begin(), declared.end(), name) == declared.end()) return std::string(name);
  }
  return std::nullopt;
}

struct PendingFormat {
  std::string text;
  std::string system;
};

// libtraceevent's parser dereferences NULL on some malformed print fmts (a dangling "->" in
// "1 ? e : E->", found by fuzzing), and a format comes from the perf.data file. So the formats
// are parsed first in a child process, on the child's copy of `tep` (the state the real parses
// will see): all of them in one child, and only when that one dies, each in a child of its own,
// so that a format that kills its child is left out. One fork per file in the common case (a
// trace.dat has some twenty formats: a fork each cost a report of a small file a fifth of its
// time).
// Parses `formats` into the child's copy of `tep`; true when the child lived through it.
bool parse_all_without_crashing(tep_handle* tep, std::span<const PendingFormat> formats) {
  pid_t child = ::fork();
  if (child < 0) return true;  // no trial possible: parse as perf does
  if (child == 0) {
    // A crash here is expected: it must leave no core file, and no handler inherited from the
    // parent (a sanitizer's, a fuzzer's) may report it as the parent's own.
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(sig, SIG_DFL);
    for (const PendingFormat& f : formats) tep_parse_event(tep, f.text.data(), f.text.size(), f.system.c_str());
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// perf's parse_ftrace_printk: lines "0xADDR : \"format\"".
void register_printk_formats(tep_handle* tep, const std::string& text) {
  for (std::string_view line : split(text, '\n')) {
    size_t colon = line.find(':');
    if (line.empty() || colon == std::string_view::npos) continue;
    unsigned long long addr = std::strtoull(std::string(line.substr(0, colon)).c_str(), nullptr, 16);
    // The format follows ": " (perf skips the one character after the colon).
    std::string format = colon + 2 <= line.size() ? std::string(line.substr(colon + 2)) : std::string();
    // libtraceevent drops the quotes and a trailing "\n" itself, looking up to 3 bytes back from
    // the end without checking the length: a format shorter than that after its opening quote
    // (up to a NUL, as it reads it) would be read from before its start. One says nothing worth
    // printing anyway, so it is left out.
    std::string_view seen(format.c_str());
    if (seen.starts_with('"')) seen.remove_prefix(1);
    if (seen.size() < 3) continue;
    tep_register_print_string(tep, format.c_str(), addr);
  }
}

// perf's parse_saved_cmdline: lines "PID COMM".
void register_comms(tep_handle* tep, const std::string& text) {
  for (std::string_view line : split(text, '\n')) {
    int pid = 0;
    char comm[64] = {};
    if (std::sscanf(std::string(line).c_str(), "%d %63s", &pid, comm) == 2) tep_register_comm(tep, comm, pid);
  }
}

}  // namespace

TracepointDecoder::TracepointDecoder(std::unique_ptr<State> state) : state_(std::move(state)) {}
TracepointDecoder::TracepointDecoder(TracepointDecoder&&) noexcept = default;
TracepointDecoder& TracepointDecoder::operator=(TracepointDecoder&&) noexcept = default;
TracepointDecoder::~TracepointDecoder() = default;

Result<TracepointDecoder> TracepointDecoder::parse(std::span<const uint8_t> tracing_data, const TracingDataOptions& options,
                                                   size_t* consumed) {
  ByteReader r(tracing_data);
  Result<std::span<const uint8_t>> magic = r.bytes(sizeof kMagic, "tracing data magic");
  if (!magic) return magic.error();
  if (std::memcmp(magic->data(), kMagic, sizeof kMagic) != 0) return Error{"not tracing data (no \\027\\010Dtracing magic)"};
  Result<std::string> version = r.c_string("tracing data version");
  if (!version) return version.error();
  Result<uint8_t> big_endian = r.u8("tracing data endianness");
  if (!big_endian) return big_endian.error();
  if (*big_endian != 0) return Error{"big-endian tracing data is not supported"};
  Result<uint8_t> long_size = r.u8("tracing data long size");
  if (!long_size) return long_size.error();
  Result<uint32_t> page_size = r.u32("tracing data page size");
  if (!page_size) return page_size.error();
  if (*page_size == 0) return Error{"tracing data: page size 0"};

  auto state = std::make_unique<State>();
  tep_set_loglevel(TEP_LOG_NONE);  // failures become warnings() instead of stderr noise
  state->tep.reset(tep_alloc());
  if (!state->tep) return Error{"libtraceevent: tep_alloc failed"};
  tep_handle* tep = state->tep.get();
  tep_set_flag(tep, TEP_NSEC_OUTPUT);
  tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_long_size(tep, *long_size);
  tep_set_page_size(tep, static_cast<int>(*page_size));
  // Plugins before the formats: a plugin registers its print handlers on events by name.
  if (options.plugins) state->plugins = tep_load_plugins(tep);

  VPERF_TRY(expect_tag(r, "header_page"));
  Result<std::string> header_page = sized_text64(r, "header_page");
  if (!header_page) return header_page.error();
  // The commit field's size is the kernel's long size (a 32-bit perf may read a 64-bit kernel).
  if (tep_parse_header_page(tep, header_page->data(), header_page->size(), tep_get_long_size(tep)) == 0)
    tep_set_long_size(tep, tep_get_header_page_size(tep));
  VPERF_TRY(expect_tag(r, "header_event"));
  if (Result<std::string> skipped = sized_text64(r, "header_event"); !skipped) return skipped.error();

  // Formats are gathered, screened, then parsed in file order (see parse_all_without_crashing).
  std::vector<PendingFormat> pending;
  auto add_format = [&](const std::string& text, const char* system) {
    if (std::optional<std::string> field = undeclared_field(text)) {
      state->warnings.push_back("cannot parse the format of " + std::string(system) + ":" + format_name(text) +
                                ": its print fmt names field '" + *field + "', which it does not declare");
      return;
    }
    pending.push_back({text, system});
  };
  auto parse_format = [&](const PendingFormat& format, bool screened) {
    const std::string& text = format.text;
    const char* system = format.system.c_str();
    if (!screened && !parse_all_without_crashing(tep, std::span<const PendingFormat>(&format, 1))) {
      state->warnings.push_back("cannot parse the format of " + std::string(system) + ":" + format_name(text) +
                                ": libtraceevent fails on it");
      return;
    }
    enum tep_errno err = tep_parse_event(tep, text.data(), text.size(), system);
    if (err != 0) {
      char message[256] = {};
      tep_strerror(tep, err, message, sizeof message);
      state->warnings.push_back("cannot parse the format of " + std::string(system) + ":" + format_name(text) + ": " + message);
    }
  };
  Result<uint32_t> ftrace_count = r.u32("ftrace format count");
  if (!ftrace_count) return ftrace_count.error();
  for (uint32_t i = 0; i < *ftrace_count; ++i) {
    Result<std::string> text = sized_text64(r, "ftrace format");
    if (!text) return text.error();
    add_format(*text, "ftrace");
  }
  Result<uint32_t> system_count = r.u32("event system count");
  if (!system_count) return system_count.error();
  for (uint32_t s = 0; s < *system_count; ++s) {
    Result<std::string> system = r.c_string("event system name");
    if (!system) return system.error();
    Result<uint32_t> count = r.u32("event format count");
    if (!count) return count.error();
    for (uint32_t i = 0; i < *count; ++i) {
      Result<std::string> text = sized_text64(r, "event format");
      if (!text) return text.error();
      add_format(*text, system->c_str());
    }
  }
  const bool all_safe = pending.empty() || parse_all_without_crashing(tep, pending);
  for (const PendingFormat& f : pending) parse_format(f, all_safe);
  // kallsyms: perf 6.1 skips it (its symbols come from the kernel map instead).
  Result<uint32_t> kallsyms_size = r.u32("kallsyms");
  if (!kallsyms_size) return kallsyms_size.error();
  Result<std::span<const uint8_t>> kallsyms = r.bytes(*kallsyms_size, "kallsyms");
  if (!kallsyms) return kallsyms.error();
  if (options.kallsyms && !kallsyms->empty()) {
    const std::string_view text(reinterpret_cast<const char*>(kallsyms->data()), kallsyms->size());
    if (!options.bytes_outlive_decoder) state->pending_kallsyms_copy = text;
    state->pending_kallsyms = options.bytes_outlive_decoder ? text : std::string_view(state->pending_kallsyms_copy);
  }
  Result<std::string> printk = sized_text32(r, "printk formats");
  if (!printk) return printk.error();
  register_printk_formats(tep, *printk);
  if (std::atof(version->c_str()) >= 0.6) {
    Result<std::string> cmdlines = sized_text64(r, "saved_cmdlines");
    if (!cmdlines) return cmdlines.error();
    if (options.whole_comms)
      tep_parse_saved_cmdlines(tep, cmdlines->c_str());
    else
      register_comms(tep, *cmdlines);
  }
  trace_seq_init(&state->seq);
  state->seq_ready = true;
  state->common_end = common_fields_end(tep);
  if (consumed) *consumed = r.offset();
  return TracepointDecoder(std::move(state));
}

void TracepointDecoder::set_kernel_symbol_resolver(KernelSymbolResolver resolver) {
  state_->printed.clear();  // they may name addresses the new resolver names otherwise
  state_->resolver = std::move(resolver);
  if (!state_->resolver) {
    tep_reset_function_resolver(state_->tep.get());
    return;
  }
  auto callback = [](void* priv, unsigned long long* addrp, char** modp) -> char* {
    auto* state = static_cast<State*>(priv);
    std::optional<KernelSymbol> symbol = state->resolver(*addrp);
    if (!symbol) return nullptr;
    state->last_symbol = std::move(*symbol);
    *addrp = state->last_symbol.start;
    *modp = state->last_symbol.module.empty() ? nullptr : state->last_symbol.module.data();
    return state->last_symbol.name.data();
  };
  tep_set_function_resolver(state_->tep.get(), callback, state_.get());
}

void TracepointDecoder::load_kernel_symbols() const {
  if (state_->pending_kallsyms.empty()) return;
  tep_parse_kallsyms(state_->tep.get(), std::string(state_->pending_kallsyms).c_str());  // it wants a C string
  state_->pending_kallsyms = {};
  std::string().swap(state_->pending_kallsyms_copy);
  state_->printed.clear();
}

void TracepointDecoder::load_kernel_symbols_for(const tep_event* event) const {
  if (state_->pending_kallsyms.empty() || !event) return;
  std::vector<const tep_event*>& known = state_->print_no_symbol;
  if (std::find(known.rbegin(), known.rend(), event) != known.rend()) return;
  // libtraceevent looks a function up for ftrace's own events (function, funcgraph_*,
  // kernel_stack, bprint's ip...), in a plugin's handler, and for a %p followed by s, S, f, F
  // (B too, to be safe) in a print fmt.
  bool prints_symbol = (event->system && std::string_view(event->system) == "ftrace") || event->handler != nullptr;
  for (const char* at = event->print_fmt.format; !prints_symbol && at && (at = std::strstr(at, "%p")) != nullptr; at += 2)
    prints_symbol = at[2] != '\0' && std::strchr("sSfFB", at[2]) != nullptr;
  if (prints_symbol)
    load_kernel_symbols();
  else
    known.push_back(event);
}

tep_event* TracepointDecoder::find(uint64_t id) const {
  if (id > static_cast<uint64_t>(INT32_MAX)) return nullptr;
  return tep_find_event(state_->tep.get(), static_cast<int>(id));
}

bool TracepointDecoder::has_event(uint64_t id) const { return find(id) != nullptr; }

std::optional<std::string> TracepointDecoder::event_name(uint64_t id) const {
  tep_event* event = find(id);
  if (!event || !event->name) return std::nullopt;
  return std::string(event->system ? event->system : "") + ":" + event->name;
}

std::vector<std::string> TracepointDecoder::field_names(uint64_t id) const {
  std::vector<std::string> names;
  tep_event* event = find(id);
  if (!event) return names;
  for (tep_format_field* f = event->format.common_fields; f; f = f->next) names.emplace_back(f->name);
  for (tep_format_field* f = event->format.fields; f; f = f->next) names.emplace_back(f->name);
  return names;
}

void TracepointDecoder::format(uint64_t id, std::span<const uint8_t> raw, uint32_t cpu, std::string& out) const {
  if (!find(id) || raw.empty()) return;
  // The sample's bytes as the trace.dat printer takes a record's (see print_hazard).
  const std::span<const uint8_t> copy = padded_copy(raw, state_->scratch);
  if (copy.size() < state_->common_end) {
    ++state_->printed_from_fields;
    out += "[SHORT RECORD]";
    return;
  }
  tep_record record{};
  record.cpu = static_cast<int>(cpu);
  record.size = static_cast<int>(copy.size());
  record.data = const_cast<uint8_t*>(copy.data());  // libtraceevent only reads it
  tep_event* event = tep_find_event_by_record(state_->tep.get(), &record);
  const bool repeatable = prints_from_record_alone(event);
  if (repeatable)
    if (const std::string* known = state_->printed.find(copy)) {
      out += *known;
      return;
    }
  if (event && (print_hazard(event, copy) || (event->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_PRINTRAW)))) {
    if (!(event->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_PRINTRAW))) {
      ++state_->printed_from_fields;
      out += "[UNSAFE FORMAT]";
    }
    append_raw_fields(event, copy, out);
    return;
  }
  load_kernel_symbols_for(event);
  trace_seq_reset(&state_->seq);
  tep_print_event(state_->tep.get(), &state_->seq, &record, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&state_->seq);
  const std::string_view text(state_->seq.buffer, state_->seq.len);
  out += text;
  if (repeatable) state_->printed.keep(text);
}

bool prints_from_record_alone(const tep_event* event) {
  if (!event || !event->handler || (event->flags & TEP_EVENT_FL_NOHANDLE)) return true;
  if (!event->system || !event->name || std::strcmp(event->system, "sched") != 0) return false;
  const std::string_view name = event->name;
  return name == "sched_switch" || name == "sched_wakeup" || name == "sched_wakeup_new";
}

const std::string* PrintedTexts::find(std::span<const uint8_t> record) {
  key_.assign(reinterpret_cast<const char*>(record.data()), record.size());
  auto known = texts_.find(key_);
  return known == texts_.end() ? nullptr : &known->second;
}

void PrintedTexts::keep(std::string_view text) {
  const size_t bytes = key_.size() + text.size() + 64;  // and the node's own
  if (bytes_ + bytes > kMaxBytes) clear();
  bytes_ += bytes;
  texts_.emplace(key_, text);
}

void PrintedTexts::clear() {
  texts_.clear();
  bytes_ = 0;
}

uint64_t TracepointDecoder::printed_from_fields() const { return state_->printed_from_fields; }

std::optional<std::string> TracepointDecoder::printed_from_fields_warning() const {
  if (state_->printed_from_fields == 0) return std::nullopt;
  return std::to_string(state_->printed_from_fields) +
         " tracepoint samples printed from their fields ([UNSAFE FORMAT]): their print fmt would divide by zero or "
         "read past the sample";
}

std::optional<TracepointField> TracepointDecoder::numeric_field(uint64_t id, std::string_view name) const {
  tep_event* event = find(id);
  if (!event) return std::nullopt;
  tep_format_field* f = tep_find_any_field(event, std::string(name).c_str());
  if (!f || (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC))) return std::nullopt;
  if (f->size <= 0 || f->size > 8 || f->offset < 0) return std::nullopt;
  return TracepointField(f);
}

std::optional<uint64_t> TracepointField::read(std::span<const uint8_t> raw) const {
  const tep_format_field* f = field_;
  if (static_cast<size_t>(f->offset) + static_cast<size_t>(f->size) > raw.size()) return std::nullopt;
  unsigned long long value = 0;
  if (tep_read_number_field(field_, raw.data(), &value) != 0) return std::nullopt;
  if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
    const unsigned bits = static_cast<unsigned>(f->size) * 8;
    const unsigned long long sign = 1ULL << (bits - 1);
    value = (value ^ sign) - sign;  // sign-extend from `bits`
  }
  return static_cast<uint64_t>(value);
}

tep_handle* TracepointDecoder::handle() const { return state_->tep.get(); }

const std::vector<std::string>& TracepointDecoder::warnings() const { return state_->warnings; }

// --- Printing a file's records through a file's formats (see the header) ---

std::span<const uint8_t> padded_copy(std::span<const uint8_t> record, std::vector<uint8_t>& scratch) {
  scratch.assign(record.size() + kRecordPadding, 0);
  if (!record.empty()) std::memcpy(scratch.data(), record.data(), record.size());
  return std::span<const uint8_t>(scratch.data(), record.size());
}

size_t common_fields_end(tep_handle* tep) {
  tep_event* first = tep_get_events_count(tep) > 0 ? tep_get_first_event(tep) : nullptr;
  if (!first) return 0;  // libtraceevent then finds no type: every record is an unknown event
  size_t end = 0;
  for (const char* name : {"common_type", "common_pid"}) {
    tep_format_field* field = tep_find_common_field(first, name);
    if (!field) continue;  // libtraceevent reads nothing for a missing one
    if (field->offset < 0 || field->size < 0) return SIZE_MAX;
    end = std::max(end, static_cast<size_t>(field->offset) + static_cast<size_t>(field->size));
  }
  return end;
}

namespace {

// Walks a print fmt's arguments as libtraceevent's eval_num_arg and print_str_arg (1.7) walk
// them for one record, noting the first thing that would read outside the record, divide by
// zero or take a length nobody can know before printing. Values are computed as libtraceevent
// computes them (its casts, its 32-bit offsets), in arithmetic that cannot wrap where the
// question is whether bytes lie inside the record.
class HazardFinder {
 public:
  HazardFinder(tep_event* event, std::span<const uint8_t> record)
      : event_(event), tep_(event->tep), data_(record.data()), size_(static_cast<int64_t>(record.size())) {}

  std::optional<std::string> print_fmt() {
    for (tep_print_arg* arg = event_->print_fmt.args; arg && !hazard_; arg = arg->next) {
      // Whether an argument is printed as a number, a string or a pointer is decided by its
      // conversion, which libtraceevent keeps to itself: both walks, then.
      (void)number(arg, 0);
      if (!hazard_) text(arg, 0);
    }
    return hazard_;
  }

  // A plugin's handler reads fields by name, trusting their offsets: each must lie inside the
  // record, but for a fixed array, which may run into the padding's zeros: the kernel writes
  // only the frames a stack has of kernel_stack's caller[8] (and the function plugin's handler
  // stops at the record's end), and a string stops at the first zero.
  std::optional<std::string> every_field() {
    for (tep_format_field* list : {event_->format.common_fields, event_->format.fields})
      for (tep_format_field* field = list; field && !hazard_; field = field->next) {
        if (field->flags & TEP_FIELD_IS_DYNAMIC) {
          if (std::optional<Dynamic> d = dynamic(field)) inside(d->offset, d->length, field->name);
        } else if (field->flags & TEP_FIELD_IS_ARRAY) {
          if (inside(field->offset, 0, field->name) && field->size > size_ + static_cast<int64_t>(kRecordPadding) - field->offset)
            fail("its array " + name_of(field->name) + " runs past the record");
        } else {
          (void)fits(field);
        }
      }
    return hazard_;
  }

  // A binary printk (ftrace:bprint) reads its ip and fmt fields and its arguments from buf on.
  std::optional<std::string> binary_printk() {
    for (const char* name : {"ip", "fmt"})
      if (tep_format_field* field = tep_find_field(event_, name)) (void)fits(field);
    if (tep_format_field* buf = tep_find_field(event_, "buf"); buf && !hazard_ && (buf->offset < 0 || buf->offset > size_))
      fail("its buf field lies outside the record");
    return hazard_;
  }

 private:
  using Value = std::optional<uint64_t>;  // nullopt: not known before printing (a symbol, a function's result, an address)
  struct Dynamic {
    int64_t offset, length;
  };
  static constexpr int kMaxDepth = 200;

  void fail(std::string why) {
    if (!hazard_) hazard_ = std::move(why);
  }
  std::string name_of(const char* name) const { return name ? std::string("'") + name + "'" : std::string("a field"); }

  // [offset, offset + length) inside the record, or a hazard.
  bool inside(int64_t offset, int64_t length, const char* what) {
    if (offset >= 0 && length >= 0 && offset <= size_ && length <= size_ - offset) return true;
    fail("it reads " + std::to_string(length) + " bytes of " + name_of(what) + " at offset " + std::to_string(offset) + " of a " +
         std::to_string(size_) + "-byte record");
    return false;
  }
  bool fits(tep_format_field* field) { return inside(field->offset, field->size, field->name); }

  tep_format_field* field_of(tep_print_arg* arg) {
    if (arg->field.field) return arg->field.field;
    return arg->field.name ? tep_find_any_field(event_, arg->field.name) : nullptr;
  }

  // dynamic_offset_field: the descriptor's offset and length as libtraceevent derives them
  // (16-bit halves, clamped to the record, a relative one moved past its descriptor).
  std::optional<Dynamic> dynamic(tep_format_field* field) {
    if (!field) {
      fail("a dynamic array has no field");
      return std::nullopt;
    }
    if (!fits(field)) return std::nullopt;
    const uint64_t value = tep_read_number(tep_, data_ + field->offset, field->size);
    const auto size = static_cast<uint32_t>(size_);
    const auto o = static_cast<uint32_t>(value & 0xffff);
    const uint32_t l = field->size == 2 ? size - o : static_cast<uint32_t>((value >> 16) & 0xffff);
    uint32_t offset = o > size ? 0 : o;
    const uint32_t length = o + l > size ? 0 : l;
    if (field->flags & TEP_FIELD_IS_RELATIVE) offset += static_cast<uint32_t>(field->offset + field->size);
    return Dynamic{offset, length};
  }

  // eval_type_str: a cast keeps the bits its type holds ("signed" types too: libtraceevent masks them).
  static uint64_t cast(uint64_t value, std::string type, bool pointer) {
    if (type.size() < 2) return value;
    if (pointer) return type.back() == '*' ? cast(value, type.substr(0, type.size() - 2), false) : value;
    if (type.back() == '*' || type.starts_with("struct")) return value;
    if (type == "u8" || type == "s8") return value & 0xff;
    if (type == "u16" || type == "s16") return value & 0xffff;
    if (type == "u32" || type == "s32") return value & 0xffffffff;
    if (type.starts_with("unsigned ")) type = type.substr(9);
    if (type == "char") return value & 0xff;
    if (type == "short") return value & 0xffff;
    if (type == "int") return value & 0xffffffff;
    return value;
  }

  // eval_num_arg.
  Value number(tep_print_arg* arg, int depth) {
    if (hazard_) return 0;
    if (!arg) {
      fail("an argument of its print fmt is missing");
      return 0;
    }
    if (depth > kMaxDepth) {
      fail("its print fmt nests deeper than " + std::to_string(kMaxDepth));
      return 0;
    }
    switch (arg->type) {
      case TEP_PRINT_ATOM: {
        if (!arg->atom.atom) return 0;
        const uint64_t value = std::strtoull(arg->atom.atom, nullptr, 0);
        if (value != 0 || std::isdigit(static_cast<unsigned char>(arg->atom.atom[0]))) return value;
        return std::nullopt;  // looked up as a kernel symbol's address
      }
      case TEP_PRINT_FIELD: {
        tep_format_field* field = field_of(arg);
        if (!field || !fits(field)) return 0;
        return tep_read_number(tep_, data_ + field->offset, field->size);
      }
      case TEP_PRINT_TYPE: {
        const Value value = number(arg->typecast.item, depth + 1);
        if (!value || !arg->typecast.type) return value;
        return cast(*value, arg->typecast.type, false);
      }
      case TEP_PRINT_FUNC:
        function_call(arg, depth);
        return std::nullopt;
      case TEP_PRINT_OP:
        return operation(arg, depth);
      case TEP_PRINT_DYNAMIC_ARRAY_LEN: {
        std::optional<Dynamic> d = dynamic(arg->dynarray.field);
        return d ? static_cast<uint64_t>(d->length) : 0;
      }
      case TEP_PRINT_DYNAMIC_ARRAY: {
        // Its address, for a function to read from: its bytes must be the record's.
        if (std::optional<Dynamic> d = dynamic(arg->dynarray.field)) inside(d->offset, d->length, arg->dynarray.field->name);
        return std::nullopt;
      }
      default:  // NULL, and what eval_num_arg takes as 0 without reading (flags, symbols, strings, masks, hex, arrays)
        return 0;
    }
  }

  Value operation(tep_print_arg* arg, int depth) {
    const char* op = arg->op.op;
    if (!op) {
      fail("an operator of its print fmt has no name");
      return 0;
    }
    if (std::strcmp(op, "[") == 0) {
      const Value index = number(arg->op.right, depth + 1);
      tep_print_arg* array = arg->op.left;
      tep_print_arg* typecast = nullptr;
      while (array && array->type == TEP_PRINT_TYPE) {
        if (!typecast) typecast = array;
        array = array->typecast.item;
      }
      if (!array) {
        fail("an index of its print fmt has no array");
        return 0;
      }
      uint32_t element = static_cast<uint32_t>(tep_get_long_size(tep_));
      uint32_t offset = 0;
      if (array->type == TEP_PRINT_DYNAMIC_ARRAY) {
        std::optional<Dynamic> d = dynamic(array->dynarray.field);
        if (!d) return 0;
        if (!index) return unknowable("an array index");
        offset = static_cast<uint32_t>(d->offset) + static_cast<uint32_t>(*index);
        if (array->dynarray.field->elementsize) element = static_cast<uint32_t>(array->dynarray.field->elementsize);
      } else if (array->type == TEP_PRINT_FIELD) {
        tep_format_field* field = field_of(array);
        if (!field) return 0;
        if (!index) return unknowable("an array index");
        element = static_cast<uint32_t>(field->elementsize);
        offset = static_cast<uint32_t>(static_cast<uint64_t>(field->offset) + *index * static_cast<uint64_t>(field->elementsize));
      } else {
        return arithmetic(arg, op, depth);
      }
      // libtraceevent checks the element in int arithmetic, then reads at the unsigned offset.
      const int32_t end = static_cast<int32_t>(offset + element);
      if (end > size_) return 0;  // it refuses this one itself
      const int width = element == 1 || element == 2 || element == 4 || element == 8 ? static_cast<int>(element) : 0;
      if (!inside(offset, width, "an array element")) return 0;
      const uint64_t value = tep_read_number(tep_, data_ + offset, width);
      return typecast && typecast->typecast.type ? cast(value, typecast->typecast.type, true) : value;
    }
    if (std::strcmp(op, "?") == 0) {
      const Value condition = number(arg->op.left, depth + 1);
      tep_print_arg* branches = arg->op.right;
      if (!branches || branches->type != TEP_PRINT_OP) {
        fail("a ?: of its print fmt has no branches");
        return 0;
      }
      if (condition) return number(*condition ? branches->op.left : branches->op.right, depth + 1);
      (void)number(branches->op.left, depth + 1);
      (void)number(branches->op.right, depth + 1);
      return std::nullopt;
    }
    return arithmetic(arg, op, depth);
  }

  Value unknowable(const std::string& what) {
    fail("its print fmt takes " + what + " that is only known when printing");
    return 0;
  }

  Value arithmetic(tep_print_arg* arg, const char* op, int depth) {
    const Value left = number(arg->op.left, depth + 1), right = number(arg->op.right, depth + 1);
    if (hazard_) return 0;
    if (op[0] == '/' || op[0] == '%') {
      if (!right) return unknowable("a divisor");
      if (*right == 0) {
        fail(std::string("its print fmt divides by zero ('") + op + "' by a value that is 0 in this record)");
        return 0;
      }
    }
    if (!left || !right) return std::nullopt;
    const uint64_t l = *left, r = *right;
    switch (op[0]) {
      case '!': return op[1] == 0 ? uint64_t{!r} : op[1] == '=' ? uint64_t{l != r} : 0;
      case '~': return ~r;
      case '|': return op[1] ? uint64_t{l || r} : l | r;
      case '&': return op[1] ? uint64_t{l && r} : l & r;
      case '<': return op[1] == 0 ? uint64_t{l < r} : op[1] == '<' ? l << (r & 63) : op[1] == '=' ? uint64_t{l <= r} : 0;
      case '>': return op[1] == 0 ? uint64_t{l > r} : op[1] == '>' ? l >> (r & 63) : op[1] == '=' ? uint64_t{l >= r} : 0;
      case '=': return op[1] == '=' ? uint64_t{l == r} : 0;
      case '-': return l - r;
      case '+': return l + r;
      case '*': return l * r;
      case '/': return l / r;
      case '%': return l % r;
      default: return 0;
    }
  }

  // A plugin's function (process_defined_func) takes numbers, strings and pointers into the
  // record, and may read a length's worth from a pointer (scsi_trace_parse_cdb(buf, len)): each
  // number beside a pointer must fit in what the pointer has after it.
  void function_call(tep_print_arg* arg, int depth) {
    std::vector<Dynamic> pointers;
    std::vector<Value> numbers;
    for (tep_print_arg* a = arg->func.args; a && !hazard_; a = a->next) {
      if (a->type == TEP_PRINT_DYNAMIC_ARRAY) {
        std::optional<Dynamic> d = dynamic(a->dynarray.field);
        if (d && inside(d->offset, d->length, a->dynarray.field->name)) pointers.push_back(*d);
        continue;
      }
      numbers.push_back(number(a, depth + 1));
      text(a, depth + 1);
    }
    for (const Dynamic& p : pointers)
      for (const Value& n : numbers) {
        if (!n) {
          (void)unknowable("a function argument beside a pointer");
          return;
        }
        if (!inside(p.offset, static_cast<int64_t>(std::min<uint64_t>(*n, INT64_MAX / 2)), "a function's pointer argument")) return;
      }
  }

  // print_str_arg.
  void text(tep_print_arg* arg, int depth) {
    if (hazard_) return;
    if (!arg) {
      fail("an argument of its print fmt is missing");
      return;
    }
    if (depth > kMaxDepth) {
      fail("its print fmt nests deeper than " + std::to_string(kMaxDepth));
      return;
    }
    switch (arg->type) {
      case TEP_PRINT_FIELD: {
        tep_format_field* field = field_of(arg);
        if (!field) return;
        // A field of size 0 is the rest of the record.
        if (field->size == 0) {
          (void)inside(field->offset, 0, field->name);
        } else {
          (void)fits(field);
        }
        return;
      }
      case TEP_PRINT_FLAGS:
        (void)number(arg->flags.field, depth + 1);
        return;
      case TEP_PRINT_SYMBOL:
        (void)number(arg->symbol.field, depth + 1);
        return;
      case TEP_PRINT_HEX:
      case TEP_PRINT_HEX_STR:
        array_print(arg->hex.field, arg->hex.size, nullptr, "__print_hex", depth);
        return;
      case TEP_PRINT_INT_ARRAY:
        array_print(arg->int_array.field, arg->int_array.count, arg->int_array.el_size, "__print_array", depth);
        return;
      case TEP_PRINT_STRING:
      case TEP_PRINT_BITMASK:
      case TEP_PRINT_CPUMASK: {
        const char* name = arg->type == TEP_PRINT_STRING ? arg->string.string : arg->bitmask.bitmask;
        tep_format_field* field = arg->type == TEP_PRINT_STRING ? arg->string.field : arg->bitmask.field;
        if (!field && name) field = tep_find_any_field(event_, name);
        if (!field) {
          // libtraceevent dereferences a cpumask's missing field.
          if (arg->type == TEP_PRINT_CPUMASK) fail("its __get_cpumask names no field of the format");
          return;
        }
        std::optional<Dynamic> d = dynamic(field);
        if (!d) return;
        if (arg->type == TEP_PRINT_CPUMASK && d->length == 0) {
          fail("its cpumask " + name_of(field->name) + " is empty in this record");
          return;
        }
        // A string is printed up to its NUL: inside the record, then the padding's zeros.
        if (d->length > 0 || arg->type != TEP_PRINT_STRING) (void)inside(d->offset, d->length, field->name);
        return;
      }
      case TEP_PRINT_OP: {
        if (!arg->op.op || arg->op.op[0] != '?') return;
        const Value condition = number(arg->op.left, depth + 1);
        tep_print_arg* branches = arg->op.right;
        if (!branches || branches->type != TEP_PRINT_OP) {
          fail("a ?: of its print fmt has no branches");
          return;
        }
        if (condition) {
          text(*condition ? branches->op.left : branches->op.right, depth + 1);
        } else {
          text(branches->op.left, depth + 1);
          text(branches->op.right, depth + 1);
        }
        return;
      }
      case TEP_PRINT_FUNC:
        function_call(arg, depth);
        return;
      case TEP_PRINT_DYNAMIC_ARRAY:  // a "%*ph" buffer
        if (std::optional<Dynamic> d = dynamic(arg->dynarray.field)) (void)inside(d->offset, d->length, arg->dynarray.field->name);
        return;
      default:  // NULL, atoms, casts and bare strings read nothing of the record here
        return;
    }
  }

  // __print_hex(FIELD, LEN) and __print_array(FIELD, COUNT, SIZE): LEN bytes, COUNT elements of
  // SIZE bytes (1 where SIZE is not 1, 2, 4 or 8: libtraceevent then prints "BAD SIZE" per byte).
  void array_print(tep_print_arg* where, tep_print_arg* count, tep_print_arg* element_size, const char* what, int depth) {
    if (!where) {
      fail(std::string("its ") + what + " has no field");
      return;
    }
    int64_t start = 0;
    const char* name = nullptr;
    if (where->type == TEP_PRINT_DYNAMIC_ARRAY) {
      std::optional<Dynamic> d = dynamic(where->dynarray.field);
      if (!d) return;
      start = d->offset;
      name = where->dynarray.field->name;
    } else if (where->type == TEP_PRINT_FIELD) {
      tep_format_field* field = field_of(where);
      if (!field) return;
      start = field->offset;
      name = field->name;
    } else {
      fail(std::string("its ") + what + " prints something that is not a field");
      return;
    }
    const Value n = number(count, depth + 1);
    if (hazard_) return;
    if (!n) {
      (void)unknowable(std::string("a length for ") + what);
      return;
    }
    int64_t width = 1;
    if (element_size) {
      const Value size = number(element_size, depth + 1);
      if (hazard_) return;
      if (!size) {
        (void)unknowable(std::string("an element size for ") + what);
        return;
      }
      const int s = static_cast<int>(*size);
      if (s == 2 || s == 4 || s == 8) width = s;
    }
    const auto elements = static_cast<uint32_t>(*n);  // libtraceevent's unsigned int
    if (start < 0 || start > size_ || static_cast<int64_t>(elements) * width > size_ - start)
      fail(std::string("its ") + what + " claims " + std::to_string(elements) + (element_size ? " elements of " + std::to_string(width) + " bytes" : " bytes") +
           " of " + name_of(name) + " in a " + std::to_string(size_) + "-byte record");
  }

  tep_event* event_;
  tep_handle* tep_;
  const uint8_t* data_;
  int64_t size_;
  std::optional<std::string> hazard_;
};

}  // namespace

std::optional<std::string> print_hazard(tep_event* event, std::span<const uint8_t> record) {
  if (!event) return std::nullopt;
  HazardFinder finder(event, record);
  // Formats printed from their fields alone (append_raw_fields) need no look.
  if (event->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_PRINTRAW)) return std::nullopt;
  if (event->handler && !(event->flags & TEP_EVENT_FL_NOHANDLE))
    if (std::optional<std::string> hazard = finder.every_field()) return hazard;
  if (event->flags & TEP_EVENT_FL_ISBPRINT) return finder.binary_printk();
  return finder.print_fmt();
}

void append_raw_fields(tep_event* event, std::span<const uint8_t> record, std::string& out) {
  const auto size = static_cast<int64_t>(record.size());
  tep_handle* tep = event->tep;
  for (tep_format_field* field = event->format.fields; field; field = field->next) {
    out += " ";
    out += field->name ? field->name : "?";
    out += "=";
    int64_t offset = field->offset, length = field->size;
    if (field->flags & TEP_FIELD_IS_DYNAMIC) {
      if (offset < 0 || length < 0 || offset + length > size || (length != 2 && length != 4)) {
        out += "?";
        continue;
      }
      const uint64_t value = tep_read_number(tep, record.data() + offset, static_cast<int>(length));
      const int64_t at = static_cast<int64_t>(value & 0xffff) + ((field->flags & TEP_FIELD_IS_RELATIVE) ? offset + length : 0);
      length = length == 2 ? size - at : static_cast<int64_t>((value >> 16) & 0xffff);
      offset = at;
    }
    if (offset < 0 || length < 0 || offset > size || length > size - offset) {
      out += "?";
      continue;
    }
    const auto* bytes = record.data() + offset;
    if (field->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
      const std::string_view text(reinterpret_cast<const char*>(bytes), static_cast<size_t>(length));
      const std::string_view shown = text.substr(0, text.find('\0'));
      const bool printable = std::all_of(shown.begin(), shown.end(), [](char c) {
        return std::isprint(static_cast<unsigned char>(c)) || std::isspace(static_cast<unsigned char>(c));
      });
      if ((field->flags & TEP_FIELD_IS_STRING) && printable) {
        out += shown;
        continue;
      }
      out += "ARRAY[";
      char hex[4];
      for (int64_t i = 0; i < length; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
        out += i ? ", " : "";
        out += hex;
      }
      out += "]";
      continue;
    }
    const uint64_t value = tep_read_number(tep, bytes, static_cast<int>(length));
    // As libtraceevent's print_field_raw: pointers and unsigned longs in hex, a signed 32-bit
    // long too, other signed fields sign-extended from their size.
    char number[32];
    if ((field->flags & TEP_FIELD_IS_POINTER) ||
        ((field->flags & TEP_FIELD_IS_LONG) && (!(field->flags & TEP_FIELD_IS_SIGNED) || length == 4)))
      std::snprintf(number, sizeof number, "0x%llx", static_cast<unsigned long long>(length == 4 ? value & 0xffffffff : value));
    else if (field->flags & TEP_FIELD_IS_SIGNED)
      std::snprintf(number, sizeof number, "%lld",
                    length == 1 ? static_cast<long long>(static_cast<int8_t>(value))
                    : length == 2 ? static_cast<long long>(static_cast<int16_t>(value))
                    : length == 4 ? static_cast<long long>(static_cast<int32_t>(value))
                                  : static_cast<long long>(value));
    else
      std::snprintf(number, sizeof number, "%llu", static_cast<unsigned long long>(value));
    out += number;
  }
}

}  // namespace vperf::tracing
