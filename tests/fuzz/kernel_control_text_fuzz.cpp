// libFuzzer target for the one check of what vperf writes into the kernel's control files
// (tracing/kernel_control_text.h). Input: one byte choosing a buffer file, then the value. Every
// check sees the value; whatever one accepts must keep its invariants, else the run aborts:
//  - no accepted name, path or command holds a newline, and a dynamic-event command is one line
//    of printable ASCII words with no '#' (one kernel command, no comment);
//  - an accepted instance name or buffer file never resolves outside the directory it names a
//    file of (instances/, the buffer's directory);
//  - an accepted buffer value holds a newline only where its file takes one (trace_marker's text,
//    the one newline that ends a function filter word);
//  - an accepted ftrace_dump_on_oops text names only instances check_instance_name accepts;
//  - printable_text is printable ASCII.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/strings.h"
#include "tracing/ftrace_persisted.h"
#include "tracing/kernel_control_text.h"

namespace {

using namespace vperf::tracing;

void require(bool holds) {
  if (!holds) std::abort();
}

bool has_newline(std::string_view text) { return text.find('\n') != std::string_view::npos || text.find('\r') != std::string_view::npos; }

// Whether `relative`, joined to `base`, stays below it once "." and ".." are taken literally.
bool stays_inside(const std::filesystem::path& base, std::string_view relative) {
  const std::filesystem::path joined = (base / std::string(relative)).lexically_normal();
  const std::filesystem::path back = joined.lexically_relative(base);
  return !relative.empty() && !back.empty() && *back.begin() != ".." && *back.begin() != "." && !std::string(relative).starts_with('/');
}

constexpr std::string_view kFiles[] = {"tracing_on",      "buffer_size_kb",    "trace_clock",      "current_tracer",
                                       "tracing_cpumask", "set_event_pid",     "set_ftrace_filter", "events/sched/sched_switch/filter",
                                       "events/sched/sched_switch/trigger", "trace_marker", "trace", "options/func_stack_trace"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view file = kFiles[data[0] % (sizeof kFiles / sizeof kFiles[0])];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::filesystem::path base = "/sys/kernel/tracing/instances";

  for (char c : printable_text(text)) require(c >= ' ' && c < 0x7f);

  if (check_instance_name(text)) {
    require(!has_newline(text) && text.find('/') == std::string_view::npos && text != "." && text != "..");
    require(stays_inside(base, text));
    require((base / std::string(text)).lexically_normal().parent_path() == base);
  }
  if (check_event_name(text, "event")) require(!has_newline(text) && text.find('/') == std::string_view::npos);
  if (check_buffer_file(text)) {
    require(!has_newline(text) && stays_inside(base / "mine", text));
    for (std::string_view component : vperf::split(text, '/')) require(component != ".." && component != "." && !component.empty());
  }
  if (check_buffer_value(file, text)) {
    if (file == "set_ftrace_filter") {
      std::string_view words = text;
      if (words.ends_with('\n')) words.remove_suffix(1);
      require(!has_newline(words));
    } else if (file != "trace_marker") {
      require(!has_newline(text));
    }
    if (file == "tracing_on" || file == "buffer_size_kb" || file == "options/func_stack_trace")
      require(!text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos);
    if (file == "trace") require(text.empty());
  }
  // A value aimed at a file named by the fuzzer's bytes: the file check comes first.
  if (check_buffer_value(text, "0")) require(static_cast<bool>(check_buffer_file(text)));
  if (check_filter_word("set_ftrace_filter", text))
    for (char c : text) require(c > ' ' && c < 0x7f);
  for (DynamicEventsFile kind : {DynamicEventsFile::uprobes, DynamicEventsFile::kprobes}) {
    if (!check_dynamic_event_command(kind, text)) continue;
    require(!text.empty() && text.size() < 4096);
    for (char c : text) require(c >= ' ' && c < 0x7f && c != '#');
    require(!text.starts_with(' ') && !text.ends_with(' ') && text.find("  ") == std::string_view::npos);
    // GROUP/EVENT of the one command: good names, so never a path.
    const std::string_view head = text.substr(0, text.find(' '));
    const std::string_view names = head.substr(head.find(':') + 1);
    const size_t slash = names.find('/');
    require(slash != std::string_view::npos);
    require(static_cast<bool>(check_event_name(names.substr(0, slash), "group")) && static_cast<bool>(check_event_name(names.substr(slash + 1), "event")));
  }
  if (check_dump_on_oops_text(text)) {
    require(!has_newline(text));
    const DumpOnOops setting = parse_dump_on_oops(text);
    for (const auto& [name, mode] : setting.instances) require(static_cast<bool>(check_instance_name(name)));
    require(static_cast<bool>(check_dump_on_oops_text(dump_on_oops_text(setting))));
  }
  return 0;
}
