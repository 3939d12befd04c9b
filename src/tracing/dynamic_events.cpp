#include "tracing/dynamic_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/files.h"
#include "core/scoped_fd.h"
#include "core/strings.h"
#include "tracing/kernel_control_text.h"
#include "tracing/trace_text.h"

namespace vperf::tracing {

namespace {

constexpr std::string_view kUprobeEvents = "uprobe_events";
constexpr std::string_view kKprobeEvents = "kprobe_events";

// The non-empty lines of a dynamic-event control file (uprobe_events, kprobe_events).
Result<std::vector<std::string>> definition_lines(const Tracefs& tracefs, std::string_view file) {
  VPERF_TRY(std::string text, tracefs.read(file));
  std::vector<std::string> out;
  for (std::string_view line : split(text, '\n'))
    if (!trim(line).empty()) out.emplace_back(trim(line));
  return out;
}

// The command that removes GROUP/EVENT (every probe appended to it).
std::string removal(std::string_view group, std::string_view event) { return "-:" + std::string(group) + "/" + std::string(event); }

Result<void> require_kprobes(const Tracefs& tracefs) {
  if (tracefs_file_exists(tracefs, kKprobeEvents)) return {};
  return Error{"this kernel has no kprobes: " + tracefs.file(kKprobeEvents).string() + " does not exist", ENOENT,
               "kernel probes need a kernel built with CONFIG_KPROBES=y and CONFIG_KPROBE_EVENTS=y (many cloud and microVM kernels "
               "leave them out); probe user space with -x FILE, or use a tracepoint (vperf list tracepoint)"};
}

// One write of `line` to uprobe_events or kprobe_events (opened for appending: the kernel takes
// or refuses each write whole), once kernel_control_text has checked it is the one command it
// looks like. A refusal's reason is the error_log entry this write added (5.4 and later), never
// an older one: the top-level error_log holds every tool's refusals.
Result<void> write_control(const Tracefs& tracefs, std::string_view file, const std::string& line) {
  VPERF_TRY(check_dynamic_event_command(file == kUprobeEvents ? DynamicEventsFile::uprobes : DynamicEventsFile::kprobes, line));
  return tracefs.write(tracefs.file(file), line, Tracefs::WriteMode::Append, tracefs.file("error_log"));
}

}  // namespace

std::string uprobe_definition(const UprobeEvent& event) {
  std::string line = std::string(event.is_return ? "r:" : "p:") + event.group + "/" + event.event + " " + event.file.string() +
                     ":" + hex(event.file_offset);
  if (event.ref_ctr_offset) line += "(" + hex(*event.ref_ctr_offset) + ")";
  for (const std::string& arg : event.arguments) line += " " + arg;
  return line;
}

std::string kprobe_definition(const KprobeEvent& event) {
  std::string line = std::string(event.is_return ? "r:" : "p:") + event.group + "/" + event.event + " " + event.symbol + "+" +
                     std::to_string(event.offset);
  for (const std::string& arg : event.arguments) line += " " + arg;
  return line;
}

bool has_kprobes(const Tracefs& tracefs) { return tracefs_file_exists(tracefs, kKprobeEvents); }

Result<std::vector<std::string>> kprobe_definitions(const Tracefs& tracefs) {
  VPERF_TRY(require_kprobes(tracefs));
  return definition_lines(tracefs, kKprobeEvents);
}

Result<void> add_kprobe(const Tracefs& tracefs, std::string_view definition) {
  VPERF_TRY(require_kprobes(tracefs));
  return write_control(tracefs, kKprobeEvents, std::string(definition));
}

Result<void> remove_kprobe(const Tracefs& tracefs, std::string_view group, std::string_view event) {
  VPERF_TRY(require_kprobes(tracefs));
  return write_control(tracefs, kKprobeEvents, removal(group, event));
}

std::string default_uprobe_group(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  size_t end = 0;
  while (end < name.size() && (std::isalnum(static_cast<unsigned char>(name[end])) || name[end] == '_')) ++end;
  return "probe_" + name.substr(0, end);
}

Result<std::vector<std::string>> uprobe_definitions(const Tracefs& tracefs) { return definition_lines(tracefs, kUprobeEvents); }

Result<void> add_uprobe(const Tracefs& tracefs, std::string_view definition) {
  return write_control(tracefs, kUprobeEvents, std::string(definition));
}

Result<void> remove_uprobe(const Tracefs& tracefs, std::string_view group, std::string_view event) {
  return write_control(tracefs, kUprobeEvents, removal(group, event));
}

Result<UprobeEvent> parse_uprobe_definition(std::string_view line) {
  auto bad = [&](const std::string& what) { return Error{"uprobe_events line '" + std::string(line) + "': " + what}; };
  std::vector<std::string_view> words;
  for (std::string_view w : split(trim(line), ' '))
    if (!w.empty()) words.push_back(w);
  if (words.size() < 2) return bad("no probe point");
  UprobeEvent event;
  std::string_view head = words[0];
  if (head.size() < 2 || (head[0] != 'p' && head[0] != 'r')) return bad("not p: or r:");
  event.is_return = head[0] == 'r';
  const size_t colon = head.find(':'), slash = head.find('/');
  if (colon == std::string_view::npos || slash == std::string_view::npos || slash < colon) return bad("no GROUP/EVENT");
  event.group = std::string(head.substr(colon + 1, slash - colon - 1));
  event.event = std::string(head.substr(slash + 1));
  if (event.group.empty() || event.event.empty()) return bad("an empty group or event");
  std::string_view place = words[1];
  if (place.ends_with(')')) {  // (0xREF_CTR_OFFSET)
    const size_t open = place.rfind('(');
    if (open == std::string_view::npos) return bad("an unbalanced reference counter");
    std::string_view ref = place.substr(open + 1, place.size() - open - 2);
    if (!ref.starts_with("0x")) return bad("a reference counter that is not hexadecimal");
    std::optional<uint64_t> value = parse_u64_base(ref.substr(2), 16);
    if (!value) return bad("a reference counter that is not a number");
    event.ref_ctr_offset = *value;
    place = place.substr(0, open);
  }
  const size_t at = place.rfind(":0x");
  if (at == std::string_view::npos || at == 0) return bad("no PATH:0xOFFSET");
  std::optional<uint64_t> offset = parse_u64_base(place.substr(at + 3), 16);
  if (!offset) return bad("an offset that is not hexadecimal");
  event.file = std::string(place.substr(0, at));
  event.file_offset = *offset;
  for (size_t i = 2; i < words.size(); ++i) event.arguments.emplace_back(words[i]);
  return event;
}

Result<std::vector<std::pair<std::string, uint64_t>>> uprobe_hits(const Tracefs& tracefs) {
  VPERF_TRY(std::string text, tracefs.read("uprobe_profile"));
  std::vector<std::pair<std::string, uint64_t>> out;
  for (std::string_view line : split(text, '\n')) {
    std::vector<std::string_view> words;
    for (std::string_view w : split(trim(line), ' '))
      if (!w.empty()) words.push_back(w);
    if (words.size() != 3) continue;
    if (std::optional<uint64_t> hits = parse_u64(words[2])) out.emplace_back(std::string(words[0]) + " " + std::string(words[1]), *hits);
  }
  return out;
}

bool kernel_appends_probes(const Tracefs& tracefs) {
  Result<std::string> readme = tracefs.read("README");
  return readme && readme->find("uprobe_events\t\t- Create/append/") != std::string::npos;
}

std::string uprobe_name(std::string_view definition) {
  // "p:GROUP/EVENT ..." (and "r:", "p1:" with a max-active count for kretprobes)
  const size_t colon = definition.find(':');
  const size_t space = definition.find(' ');
  if (colon == std::string_view::npos || colon > space) return {};
  return std::string(definition.substr(colon + 1, space == std::string_view::npos ? std::string_view::npos : space - colon - 1));
}

}  // namespace vperf::tracing
