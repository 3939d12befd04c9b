#include "tracing/kernel_control_text.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <system_error>
#include <vector>

#include "core/strings.h"

namespace vperf::tracing {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
// Printable ASCII without the space: what one word of a command may hold.
bool is_word_byte(char c) { return c > ' ' && c < 0x7f; }

bool all_of(std::string_view text, bool (*ok)(char)) { return std::all_of(text.begin(), text.end(), ok); }

bool is_decimal(std::string_view text) { return !text.empty() && text.size() <= 20 && all_of(text, is_digit); }

// "0x1f" or "31": how the kernel's kstrtoul(.., 0, ..) reads an offset.
bool is_offset(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) return text.size() > 2 && text.size() <= 18 && all_of(text.substr(2), is_hex_digit);
  return is_decimal(text);
}

bool is_good_name(std::string_view name) {
  if (name.empty() || (!is_letter(name[0]) && name[0] != '_')) return false;
  return all_of(name, [](char c) { return is_letter(c) || is_digit(c) || c == '_'; });
}

// What is wrong with the first byte of `text` that `allowed` refuses, for the error: "a
// newline", "a tab", "the byte \x1b".
std::string first_bad_byte(std::string_view text, bool (*allowed)(char)) {
  for (char c : text) {
    if (allowed(c)) continue;
    if (c == '\n') return "a newline";
    if (c == '\r') return "a carriage return";
    if (c == '\t') return "a tab";
    if (c == ' ') return "a space";
    if (c == '#') return "a '#'";
    if (c == '/') return "a '/'";
    if (static_cast<unsigned char>(c) >= 0x80) return "the non-ASCII byte " + printable_text(std::string_view(&c, 1));
    return "the control byte " + printable_text(std::string_view(&c, 1));
  }
  return {};
}

// No errno: the kernel was not asked, and "Invalid argument" after the reason would say nothing more.
Error refused(std::string what, std::string hint) { return Error{std::move(what), 0, std::move(hint)}; }

// The files whose value is a decimal number.
bool takes_number(std::string_view file) {
  const std::string_view base = file.substr(file.rfind('/') == std::string_view::npos ? 0 : file.rfind('/') + 1);
  if (file.starts_with("options/") || base == "enable") return true;
  for (std::string_view name : {"tracing_on", "buffer_size_kb", "buffer_percent", "max_graph_depth", "tracing_thresh", "tracing_max_latency",
                                "snapshot", "saved_cmdlines_size", "buffer_subbuf_size_kb"})
    if (file == name) return true;
  return false;
}

bool is_filter_list(std::string_view file) {
  for (std::string_view name : {"set_ftrace_filter", "set_ftrace_notrace", "set_graph_function", "set_graph_notrace", "set_event"})
    if (file == name) return true;
  return false;
}

// A fetch argument's type: u8..u64, s8..s64, x8..x64, string, ustring, symbol, symstr, char,
// %pd, %pD, or a bitfield b<width>@<offset>/<container>; any of them as an array "[N]".
bool is_fetch_type(std::string_view type) {
  if (const size_t open = type.find('['); open != std::string_view::npos) {
    if (!type.ends_with(']') || !is_decimal(type.substr(open + 1, type.size() - open - 2))) return false;
    type = type.substr(0, open);
  }
  for (std::string_view named : {"string", "ustring", "symbol", "symstr", "char", "%pd", "%pD"})
    if (type == named) return true;
  if (type.size() >= 2 && (type[0] == 'u' || type[0] == 's' || type[0] == 'x'))
    for (std::string_view bits : {"8", "16", "32", "64"})
      if (type.substr(1) == bits) return true;
  if (type.starts_with('b')) {  // b<width>@<offset>/<container size>
    const size_t at = type.find('@'), slash = type.find('/');
    return at != std::string_view::npos && slash != std::string_view::npos && at < slash && is_decimal(type.substr(1, at - 1)) &&
           is_decimal(type.substr(at + 1, slash - at - 1)) && is_decimal(type.substr(slash + 1));
  }
  return false;
}

// One argument word: [NAME=]FETCH[:TYPE].
std::string bad_argument(DynamicEventsFile file, std::string_view argument) {
  std::string_view fetch = argument;
  if (const size_t equals = argument.find('='); equals != std::string_view::npos) {
    if (!is_good_name(argument.substr(0, equals))) return "its name is not [A-Za-z_][A-Za-z0-9_]*";
    fetch = argument.substr(equals + 1);
  }
  // The type follows the last ':' outside parentheses ("+0(%si):string").
  int depth = 0;
  size_t colon = std::string_view::npos;
  for (size_t i = 0; i < fetch.size(); ++i) {
    if (fetch[i] == '(') ++depth;
    if (fetch[i] == ')') --depth;
    if (depth < 0) return "its parentheses do not match";
    if (fetch[i] == ':' && depth == 0) colon = i;
  }
  if (depth != 0) return "its parentheses do not match";
  if (colon != std::string_view::npos) {
    if (!is_fetch_type(fetch.substr(colon + 1))) return "'" + std::string(fetch.substr(colon + 1)) + "' is not a fetch type";
    fetch = fetch.substr(0, colon);
  }
  if (fetch.empty()) return "it fetches nothing";
  const char first = fetch[0];
  // %REG, @ADDR, $VAR, +|-OFFSET(...), \IMMEDIATE, a number; kprobes also take BTF names.
  if (first == '%' || first == '@' || first == '$' || first == '+' || first == '-' || first == '\\' || is_digit(first)) return {};
  if (file == DynamicEventsFile::kprobes && (is_letter(first) || first == '_')) return {};
  return "'" + std::string(fetch) + "' is not a fetch argument";
}

// PATH:OFFSET[(REF_CTR_OFFSET)], the path up to the last ':' as the kernel cuts it.
std::string bad_uprobe_place(std::string_view place) {
  if (place.ends_with(')')) {
    const size_t open = place.rfind('(');
    if (open == std::string_view::npos || !is_offset(place.substr(open + 1, place.size() - open - 2))) return "its reference counter is not (OFFSET)";
    place = place.substr(0, open);
  }
  const size_t colon = place.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return "it is not PATH:OFFSET";
  if (!is_offset(place.substr(colon + 1))) return "'" + std::string(place.substr(colon + 1)) + "' is not an offset";
  return {};
}

// [MODULE:]SYMBOL[+OFFSET], or an address.
std::string bad_kprobe_place(std::string_view place) {
  if (is_offset(place)) return {};
  if (const size_t colon = place.find(':'); colon != std::string_view::npos) {
    if (!is_good_name(place.substr(0, colon))) return "its module is not a module name";
    place = place.substr(colon + 1);
  }
  if (const size_t plus = place.find('+'); plus != std::string_view::npos) {
    if (!is_offset(place.substr(plus + 1))) return "'" + std::string(place.substr(plus + 1)) + "' is not an offset";
    place = place.substr(0, plus);
  }
  // Symbols may carry the compiler's suffixes: "foo.isra.0", "bar.cold".
  const bool symbol = !place.empty() && (is_letter(place[0]) || place[0] == '_') &&
                      all_of(place, [](char c) { return is_letter(c) || is_digit(c) || c == '_' || c == '.'; });
  return symbol ? std::string() : "'" + std::string(place) + "' is not a kernel symbol";
}

// GROUP/EVENT after the command's ':'.
std::string bad_event_names(std::string_view names) {
  const size_t slash = names.find('/');
  if (slash == std::string_view::npos) return "it names no GROUP/EVENT";
  if (!is_good_name(names.substr(0, slash))) return "its group is not [A-Za-z_][A-Za-z0-9_]*";
  if (!is_good_name(names.substr(slash + 1))) return "its event is not [A-Za-z_][A-Za-z0-9_]*";
  return {};
}

}  // namespace

std::string printable_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (c >= ' ' && c < 0x7f) out += c;
    else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    }
  }
  return out;
}

Result<void> check_instance_name(std::string_view name) {
  const std::string hint = "name an instance with letters, digits, '_', '-' and '.' (the top-level buffer is --instance '')";
  const std::string shown = "'" + printable_text(name) + "'";
  if (name.empty()) return refused("an empty ftrace instance name", hint);
  if (name == "." || name == "..") return refused(shown + " is not an ftrace instance name: it leads out of instances/", hint);
  if (name.size() > 255) return refused("an ftrace instance name longer than 255 bytes", hint);
  const std::string bad = first_bad_byte(name, [](char c) { return is_letter(c) || is_digit(c) || c == '_' || c == '-' || c == '.'; });
  if (!bad.empty()) return refused(shown + " is not an ftrace instance name: it holds " + bad, hint);
  return {};
}

Result<std::filesystem::path> instance_directory(const Tracefs& tracefs, std::string_view name) {
  VPERF_TRY(check_instance_name(name));
  const std::filesystem::path instances = tracefs.file("instances");
  const std::filesystem::path dir = instances / std::string(name);
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(dir, ec);
  if (ec) return Error{"there is no ftrace instance '" + std::string(name) + "'", 0, "start one first: vperf ftrace start --instance " + std::string(name) + " ..."};
  const std::filesystem::path resolved_instances = std::filesystem::canonical(instances, ec);
  if (ec || resolved.parent_path() != resolved_instances)
    return refused("the ftrace instance '" + std::string(name) + "' resolves to " + printable_text(resolved.string()) + ", outside " +
                       instances.string(),
                   "remove the link; vperf works only in tracefs's own instances");
  struct stat st{};
  if (::stat(resolved.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error{"there is no ftrace instance '" + std::string(name) + "'", 0, "start one first: vperf ftrace start --instance " + std::string(name) + " ..."};
  return dir;
}

Result<void> check_event_name(std::string_view name, std::string_view what) {
  if (is_good_name(name)) return {};
  return refused("'" + printable_text(name) + "' is not a probe " + std::string(what) + " name the kernel takes", 
                 "a " + std::string(what) + " name is a letter or '_' followed by letters, digits and '_'");
}

Result<void> check_buffer_file(std::string_view file) {
  auto bad = [&](const std::string& why) {
    return refused("'" + printable_text(file) + "' is not a file of an ftrace buffer: " + why, "this is a bug in vperf's ftrace setup");
  };
  if (file.empty()) return bad("it is empty");
  if (file.starts_with('/')) return bad("it is absolute");
  for (std::string_view component : split(file, '/')) {
    if (component.empty()) return bad("it has an empty component");
    if (component == "." || component == "..") return bad("it has a '" + std::string(component) + "' component");
    if (std::string why = first_bad_byte(component, is_word_byte); !why.empty()) return bad("it holds " + why);
  }
  return {};
}

Result<void> check_buffer_value(std::string_view file, std::string_view value) {
  VPERF_TRY(check_buffer_file(file));
  auto bad = [&](const std::string& why, const std::string& hint) {
    return refused("'" + printable_text(value) + "' cannot be written to " + std::string(file) + ": " + why, hint);
  };
  if (file == "trace_marker") return {};
  if (file == "trace" || file == "error_log") {
    if (!value.empty()) return bad("vperf only empties it", "this is a bug in vperf");
    return {};
  }
  if (takes_number(file)) {
    if (!is_decimal(value)) return bad("it takes a decimal number", "give a number");
    return {};
  }
  if (file == "trace_clock" || file == "current_tracer") {
    const std::string why = first_bad_byte(value, [](char c) { return is_letter(c) || is_digit(c) || c == '_' || c == '-'; });
    if (value.empty() || !why.empty())
      return bad(value.empty() ? "it is empty" : "it holds " + why,
                 file == "trace_clock" ? "list the clocks with: cat /sys/kernel/tracing/trace_clock" : "list them with: vperf ftrace list -t");
    return {};
  }
  if (file == "tracing_cpumask") {
    if (value.empty() || !all_of(value, [](char c) { return is_hex_digit(c) || c == ','; }))
      return bad("a CPU mask is hexadecimal, in comma-separated groups", "give CPUs as a list: -C 0,2-3");
    return {};
  }
  if (file == "set_ftrace_pid" || file == "set_event_pid") {
    for (std::string_view pid : split(value, ' '))
      if (!pid.empty() && !is_decimal(pid)) return bad("it takes process ids separated by spaces", "give -p PID[,PID...]");
    return {};
  }
  if (is_filter_list(file)) {
    std::string_view words = value;
    if (words.ends_with('\n')) words.remove_suffix(1);
    if (std::string why = first_bad_byte(words, [](char c) { return c >= ' ' && c < 0x7f; }); !why.empty())
      return bad("it holds " + why + " (one glob or command per word)", "give each function pattern as its own argument");
    return {};
  }
  // Filters, triggers and the rest: the kernel parses each write as one line.
  if (std::string why = first_bad_byte(value, [](char c) { return static_cast<unsigned char>(c) >= ' ' && c != 0x7f; }); !why.empty())
    return bad("it holds " + why + ", and the kernel reads the file as one line", "write it on one line");
  return {};
}

Result<void> check_filter_word(std::string_view file, std::string_view word) {
  if (!word.empty() && all_of(word, is_word_byte)) return {};
  const std::string why = word.empty() ? "it is empty" : "it holds " + first_bad_byte(word, is_word_byte);
  return refused("'" + printable_text(word) + "' cannot be one entry of " + std::string(file) + ": " + why + " (the kernel splits it into words)",
                 "give each function pattern as its own argument, without white space");
}

Result<void> check_dynamic_event_command(DynamicEventsFile file, std::string_view command) {
  const std::string file_name = file == DynamicEventsFile::uprobes ? "uprobe_events" : "kprobe_events";
  const std::string hint = file == DynamicEventsFile::uprobes
                               ? "the kernel reads a probe's path up to white space, '#' or the end of its line: give the file a plain path "
                                 "(ln -s FILE /tmp/NAME, then probe /tmp/NAME; the kernel follows the link)"
                               : "name a kernel function as /proc/kallsyms does";
  auto bad = [&](const std::string& why) {
    return refused("refusing to write '" + printable_text(command) + "' to " + file_name + ": " + why, hint);
  };
  if (command.size() >= 4096) return bad("it is longer than the kernel's 4095-byte command");
  // One line of printable words: a newline would start a second command, '#' a comment, and
  // other white space (or the kernel's isspace 0xa0) would split a word in two.
  if (std::string why = first_bad_byte(command, [](char c) { return c >= ' ' && c < 0x7f && c != '#'; }); !why.empty())
    return bad("it holds " + why);
  std::vector<std::string_view> words = split(command, ' ');
  if (std::any_of(words.begin(), words.end(), [](std::string_view w) { return w.empty(); })) return bad("it has an empty word");
  const std::string_view head = words[0];
  if (head.starts_with("-:")) {
    if (words.size() != 1) return bad("a removal takes nothing after GROUP/EVENT");
    if (std::string why = bad_event_names(head.substr(2)); !why.empty()) return bad(why);
    return {};
  }
  // p:, r:, and r<MAXACTIVE>: for kretprobes.
  const size_t colon = head.find(':');
  if (colon == std::string_view::npos || (head[0] != 'p' && head[0] != 'r') ||
      !all_of(head.substr(1, colon - 1), is_digit) || (colon > 1 && file == DynamicEventsFile::uprobes))
    return bad("it does not start with p:, r: or -:");
  if (std::string why = bad_event_names(head.substr(colon + 1)); !why.empty()) return bad(why);
  if (words.size() < 2) return bad("it names no probe point");
  const std::string place = file == DynamicEventsFile::uprobes ? bad_uprobe_place(words[1]) : bad_kprobe_place(words[1]);
  if (!place.empty()) {
    // Most likely a path with a space in it, cut there into words.
    const bool split_path = file == DynamicEventsFile::uprobes && words.size() > 2;
    return bad("'" + std::string(words[1]) + "': " + place + (split_path ? " (a path that holds a space is cut there)" : ""));
  }
  for (size_t i = 2; i < words.size(); ++i)
    if (std::string why = bad_argument(file, words[i]); !why.empty()) return bad("argument '" + std::string(words[i]) + "': " + why);
  return {};
}

Result<void> check_dump_on_oops_text(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return refused("refusing to write '" + printable_text(text) + "' to kernel.ftrace_dump_on_oops: " + why,
                   "name instances with letters, digits, '_', '-' and '.'");
  };
  if (text.empty()) return bad("it is empty");
  bool first = true;
  for (std::string_view field : split(text, ',')) {
    const bool mode = field == "0" || field == "1" || field == "2" || field == "orig_cpu";
    if (first && mode) {
      first = false;
      continue;
    }
    first = false;
    const size_t equals = field.find('=');
    const std::string_view name = field.substr(0, equals);
    if (Result<void> ok = check_instance_name(name); !ok) return bad(ok.error().message);
    if (equals != std::string_view::npos) {
      const std::string_view how = field.substr(equals + 1);
      if (how != "1" && how != "2" && how != "orig_cpu") return bad("'" + printable_text(how) + "' is not a dump mode");
    }
  }
  return {};
}

}  // namespace vperf::tracing
