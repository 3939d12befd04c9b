#pragma once
// The one check of every name, path and value vperf writes into the kernel's control files
// (tracefs, and the ftrace_dump_on_oops sysctl), each for the file it goes to. The kernel parses
// these files' writes as commands: uprobe_events and kprobe_events take one command per line,
// split into words on white space, with '#' starting a comment; a buffer's files are reached by
// paths vperf builds from names; instances are directories named by the user. Text that carries
// a newline, a '#', a space inside a word, or a ".." would make the kernel do something other
// than what vperf asked (a crafted -x path added a probe on another file and removed someone
// else's; `--instance ..` reached the top-level buffer), so it is refused before any write, in
// one line that says what is wrong with it.
//
// Why here and not in core/files' write_kernel_file, the one writer of these files: the writer
// sees a path and bytes, while what a file takes depends on the file and on what each word of a
// command is (a path in uprobe_events may hold ':' but no space; a trigger may hold spaces but
// no newline; an instance name is never written at all, it is a mkdir). Each writer in
// src/tracing calls the check for its file just before writing: dynamic_events (every
// uprobe_events/kprobe_events command), FtraceBuffer::write and its restores (every buffer file,
// by name), FtraceBuffer's instances (create, open, remove), and ftrace_persisted (the sysctl).
// tests/fuzz/kernel_control_text_fuzz.cpp holds the invariants to any bytes.
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"
#include "tracing/tracefs.h"

namespace vperf::tracing {

// `text` as one line of an error message: bytes outside printable ASCII as \n, \t, \xNN.
std::string printable_text(std::string_view text);

// An ftrace instance's name (instances/NAME, and a field of ftrace_dump_on_oops): 1 to 255
// letters, digits, '_', '-' and '.', and not "." or "..". The kernel itself takes any name
// without '/', but a name with white space, ',' or '=' cannot be given back to the kernel in
// ftrace_dump_on_oops, and "." and ".." lead out of instances/.
Result<void> check_instance_name(std::string_view name);

// instances/NAME of `tracefs` for an existing instance: the name checked, and the directory
// (symbolic links resolved) inside instances/. An error when NAME is refused or resolves elsewhere.
Result<std::filesystem::path> instance_directory(const Tracefs& tracefs, std::string_view name);

// A dynamic event's group or event name, as the kernel's is_good_name takes it:
// [A-Za-z_][A-Za-z0-9_]*. `what` names it in the error ("group", "event").
Result<void> check_event_name(std::string_view name, std::string_view what);

// A file of a buffer, relative to its directory ("trace_clock", "options/NAME",
// "events/SYSTEM/EVENT/filter"): components of printable ASCII without white space, none empty,
// "." or "..", never absolute.
Result<void> check_buffer_file(std::string_view file);

// A value for a buffer's file (named as check_buffer_file takes it), as that file takes it:
//   tracing_on, buffer_size_kb, options/*, .../enable, max_graph_depth, ... : a decimal number
//   trace, error_log                                      : empty (a write that empties it)
//   trace_clock, current_tracer                           : one word of [A-Za-z0-9_-]
//   tracing_cpumask                                       : hex digits in comma-separated groups
//   set_ftrace_pid, set_event_pid                         : decimal pids separated by spaces
//   set_ftrace_filter, set_ftrace_notrace, set_graph_*, set_event: words of printable ASCII
//                                       separated by single spaces, ended by at most one newline
//   trace_marker                                          : any text (one event, newlines kept)
//   every other file (filter, trigger, ...)               : one line: no control byte at all
// The file name is checked first (check_buffer_file).
Result<void> check_buffer_value(std::string_view file, std::string_view value);

// One word of a list written to set_ftrace_filter & co ("vfs_*", "!do_exit", ":mod:ext4",
// "schedule:traceoff:3"): printable ASCII without white space. `file` names the list in the error.
Result<void> check_filter_word(std::string_view file, std::string_view word);

// One command for uprobe_events or kprobe_events, as dynamic_events writes them:
//   [pr][MAXACTIVE]:GROUP/EVENT PLACE [ARG ...]   or   -:GROUP/EVENT
// with PLACE PATH:OFFSET[(REF_CTR_OFFSET)] for uprobes, [MODULE:]SYMBOL[+OFFSET] or an address
// for kprobes, and each ARG [NAME=]FETCH[:TYPE]. Printable ASCII only, no '#', words separated
// by single spaces, shorter than the kernel's 4096-byte line: a path with a space, newline, '#'
// or a byte above 0x7e cannot be written there (the hint says to link the file under a plain
// name; the kernel follows links).
enum class DynamicEventsFile { uprobes, kprobes };
Result<void> check_dynamic_event_command(DynamicEventsFile file, std::string_view command);

// The whole text written to kernel.ftrace_dump_on_oops: "MODE[,NAME[=MODE]...]" with MODE 0, 1,
// 2 or orig_cpu and each NAME an instance name as check_instance_name takes it (the kernel keeps
// a sysctl string up to its first newline, so a newline would cut the setting short silently).
Result<void> check_dump_on_oops_text(std::string_view text);

}  // namespace vperf::tracing
