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
#include <cstring>
#include <optional>
#include <string_view>
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
  tep_plugin_list* plugins = nullptr;

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
  Result<std::string> kallsyms = sized_text32(r, "kallsyms");
  if (!kallsyms) return kallsyms.error();
  if (options.kallsyms && !kallsyms->empty()) tep_parse_kallsyms(tep, kallsyms->c_str());
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
  if (consumed) *consumed = r.offset();
  return TracepointDecoder(std::move(state));
}

void TracepointDecoder::set_kernel_symbol_resolver(KernelSymbolResolver resolver) {
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
  tep_record record{};
  record.cpu = static_cast<int>(cpu);
  record.size = static_cast<int>(raw.size());
  record.data = const_cast<uint8_t*>(raw.data());  // libtraceevent only reads it
  trace_seq_reset(&state_->seq);
  tep_print_event(state_->tep.get(), &state_->seq, &record, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&state_->seq);
  out.append(state_->seq.buffer, state_->seq.len);
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

}  // namespace vperf::tracing
