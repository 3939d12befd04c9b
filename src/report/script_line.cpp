#include "report/script_line.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <span>

#include "report/srcline.h"

namespace vperf::report {

namespace {

// Text padding as printf's "%*s" (right-aligned) and "%-*s" (left-aligned).
void append_right_aligned(std::string& out, std::string_view text, size_t width) {
  if (text.size() < width) out.append(width - text.size(), ' ');
  out.append(text);
}

void append_left_aligned(std::string& out, std::string_view text, size_t width) {
  out.append(text);
  if (text.size() < width) out.append(width - text.size(), ' ');
}

std::string_view decimal(char (&buffer)[24], int64_t value) {
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return {buffer, static_cast<size_t>(end - buffer)};
}

std::string_view unsigned_decimal(char (&buffer)[24], uint64_t value) {
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return {buffer, static_cast<size_t>(end - buffer)};
}

std::string_view hex(char (&buffer)[24], uint64_t value) {
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, 16);
  return {buffer, static_cast<size_t>(end - buffer)};
}

// perf's __symbol__fprintf_symname_offs: "name+0xoff", or "[unknown]".
void append_symbol(std::string& out, const symbols::ResolvedAddress& at, std::string_view inlined_name, bool with_offset) {
  char buffer[24];
  if (!inlined_name.empty()) {
    out.append(inlined_name);
  } else if (at.symbol) {
    out.append(at.symbol_name());
  } else {
    out.append("[unknown]");
    return;
  }
  if (with_offset && at.symbol) {
    out.append("+0x");
    out.append(hex(buffer, at.symbol_offset));
  }
}

void append_dso(std::string& out, const symbols::ResolvedAddress& at) {
  out.append(" (");
  out.append(at.dso_name());
  out.push_back(')');
}

// -F srcline: on a line of its own under the address's line, as perf prints it.
void append_srcline(std::string& out, const symbols::ResolvedAddress& at) {
  if (std::optional<std::string> line = script_srcline(at)) {
    out.append("\n  ");
    out.append(*line);
  }
}

// The address perf prints for a callchain entry: a user-space dso's frames as offsets in the
// dso (map_ip), kernel and unmapped ones as they are.
uint64_t shown_frame_address(const ProfileFrame& frame) {
  const symbols::Dso* dso = frame.at.dso();
  return dso && !dso->is_kernel() ? frame.at.map_relative : frame.ip;
}

void append_frame(std::string& out, const Profile& profile, uint32_t id, ScriptFieldSet fields) {
  char buffer[24];
  const ProfileFrame& frame = profile.frame(id);
  std::string_view inlined_name = profile.inlined_name(frame);
  out.push_back('\t');
  if (fields & kFieldIp) append_right_aligned(out, hex(buffer, shown_frame_address(frame)), 16);
  if (fields & kFieldSym) {
    out.push_back(' ');
    append_symbol(out, frame.at, inlined_name, (fields & kFieldSymOff) != 0);
  }
  bool inlined = !inlined_name.empty();
  if ((fields & kFieldDso) && !inlined) append_dso(out, frame.at);
  if (fields & kFieldSrcline) append_srcline(out, frame.at);
  if (inlined) out.append(" (inlined)");
  out.push_back('\n');
}

void append_callchain(std::string& out, const ResolvedSample& sample, ScriptFieldSet fields, const ScriptLineOptions& options,
                      ScriptFrameLines* frame_lines) {
  ResolvedSample::CursorFrames cursor = sample.cursor(options.max_stack, options.user_stacks_unwound);
  for (std::span<const uint32_t> part : {cursor.recorded, cursor.unwound}) {
    for (uint32_t id : part) {
      if (frame_lines) frame_lines->append(out, *sample.profile, id, fields);
      else append_frame(out, *sample.profile, id, fields);
    }
  }
}

// "SECONDS.MICROSECONDS" (or nanoseconds) in `buffer`, without a string per sample.
std::string_view timestamp_text(char (&buffer)[48], uint64_t nanoseconds, bool with_nanoseconds = false) {
  auto [seconds_end, ec] = std::to_chars(buffer, buffer + 24, nanoseconds / 1000000000);
  *seconds_end = '.';
  char* fraction = seconds_end + 1;
  const size_t width = with_nanoseconds ? 9 : 6;
  const uint64_t value = with_nanoseconds ? nanoseconds % 1000000000 : (nanoseconds % 1000000000) / 1000;
  auto [fraction_end, ec2] = std::to_chars(fraction, fraction + 10, value);
  const size_t digits = static_cast<size_t>(fraction_end - fraction);
  std::memmove(fraction + (width - digits), fraction, digits);  // zero-padded
  std::memset(fraction, '0', width - digits);
  return {buffer, static_cast<size_t>(fraction + width - buffer)};
}

uint64_t shown_period(const ResolvedSample& sample) {
  // perf starts from the attr's sample_period (a union with sample_freq) and overwrites it
  // only when the sample carries PERF_SAMPLE_PERIOD.
  const perf_event_attr* attr = sample.view.attr ? &sample.view.attr->attr : nullptr;
  if (attr && !(attr->sample_type & PERF_SAMPLE_PERIOD)) return attr->sample_period;
  return sample.sample.period;
}


}  // namespace

void ScriptFrameLines::forget() {
  lines_.clear();
  text_.clear();
}

void ScriptFrameLines::append(std::string& out, const Profile& profile, uint32_t id, ScriptFieldSet fields) {
  if (profile.generation() != generation_ || fields != fields_ || text_.size() > kBytes) {
    forget();
    generation_ = profile.generation();
    fields_ = fields;
  }
  if (id >= lines_.size()) lines_.resize(profile.frame_count(), {0, 0});
  std::pair<uint32_t, uint32_t>& line = lines_[id];
  if (line.second == 0) {
    const size_t at = text_.size();
    append_frame(text_, profile, id, fields);
    line = {static_cast<uint32_t>(at), static_cast<uint32_t>(text_.size() - at)};
  }
  out.append(text_, line.first, line.second);
}

std::string script_timestamp(uint64_t nanoseconds) {
  char buffer[48];
  return std::string(timestamp_text(buffer, nanoseconds));
}

void append_line_start(std::string& out, const LineStart& start, ScriptFieldSet fields, bool with_callchain,
                       bool nanoseconds) {
  char buffer[24];
  if (fields & kFieldComm) {
    if (with_callchain)
      out.append(start.comm);
    else
      append_right_aligned(out, start.comm, 16);
    out.push_back(' ');
  }
  if ((fields & kFieldPid) && (fields & kFieldTid)) {
    append_right_aligned(out, decimal(buffer, start.pid), 5);
    out.push_back('/');
    append_left_aligned(out, decimal(buffer, start.tid), 5);
    out.push_back(' ');
  } else if (fields & (kFieldPid | kFieldTid)) {
    append_right_aligned(out, decimal(buffer, (fields & kFieldPid) ? start.pid : start.tid), 5);
    out.push_back(' ');
  }
  if (fields & kFieldCpu) {
    out.push_back('[');
    std::string_view cpu = unsigned_decimal(buffer, start.cpu);
    if (cpu.size() < 3) out.append(3 - cpu.size(), '0');
    out.append(cpu);
    out.append("] ");
  }
  if (fields & kFieldTime) {
    char time[48];
    // perf: "%12s" of the microsecond text, "%5lu.%09llu" with --ns.
    append_right_aligned(out, timestamp_text(time, start.timed ? start.time : UINT64_MAX, nanoseconds), nanoseconds ? 15 : 12);
    out.append(": ");
  }
}

void append_script_sample(std::string& out, const ResolvedSample& sample, ScriptFieldSet fields,
                          std::string_view event_name, const ScriptLineOptions& options,
                          const tracing::TracepointDecoder* decoder, ScriptFrameLines* frame_lines) {
  char buffer[24];
  const perf_event_attr* attr = sample.view.attr ? &sample.view.attr->attr : nullptr;
  bool event_has_callchain = attr && (attr->sample_type & PERF_SAMPLE_CALLCHAIN);
  bool with_callchain = (fields & kFieldIp) && event_has_callchain && options.use_callchain;

  // An event recorded without times (a time=0 term) beside timed ones: perf shows its samples
  // at the time it starts from, -1.
  const bool timed = !attr || (attr->sample_type & PERF_SAMPLE_TIME);
  append_line_start(out, LineStart{sample.comm, sample.pid, sample.tid, sample.cpu, sample.time, timed}, fields,
                    with_callchain, options.nanoseconds);
  if (fields & kFieldPeriod) {
    append_right_aligned(out, unsigned_decimal(buffer, shown_period(sample)), 10);
    out.push_back(' ');
  }
  if (fields & kFieldEvent) {
    append_right_aligned(out, event_name.empty() ? std::string_view("[unknown]") : event_name,
                         static_cast<size_t>(std::max(options.event_name_width, 0)));
    out.append(": ");
  }
  if ((fields & kFieldTrace) && decoder && attr && attr->type == PERF_TYPE_TRACEPOINT && !sample.sample.raw.empty()) {
    // perf passes -1 when the sample has no cpu.
    uint32_t cpu = (attr->sample_type & PERF_SAMPLE_CPU) ? sample.cpu : UINT32_MAX;
    decoder->format(attr->config, sample.sample.raw, cpu, out);
  }
  if (fields & kFieldIp) {
    if (with_callchain) {
      out.push_back('\n');
      append_callchain(out, sample, fields, options, frame_lines);
    } else {
      out.push_back(' ');
      append_right_aligned(out, hex(buffer, sample.sample.ip), 16);
      if (fields & kFieldSym) {
        out.push_back(' ');
        append_symbol(out, sample.at, {}, (fields & kFieldSymOff) != 0);
      }
      if (fields & kFieldDso) append_dso(out, sample.at);
      if (fields & kFieldSrcline) append_srcline(out, sample.at);
    }
  }
  out.push_back('\n');
}

}  // namespace vperf::report
