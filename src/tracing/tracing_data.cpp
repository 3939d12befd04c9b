#include "tracing/tracing_data.h"

#include <charconv>

#include <linux/perf_event.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include "core/byte_writer.h"
#include "core/files.h"
#include "data/perf_data_format.h"
#include "data/perf_record.h"
#include "tracing/tracefs_events.h"

namespace vperf::tracing {

namespace {


// A text with its size in front, as a SizeType.
template <typename SizeType>
void put_sized(ByteWriter& out, const std::string& text) {
  out.put(static_cast<SizeType>(text.size()));
  out.text(text);
}

}  // namespace

Result<std::vector<uint8_t>> build_tracing_data(const Tracefs& tracefs, const std::vector<TracepointName>& recorded,
                                                const TracingDataLayout& layout) {
  auto read = [&](const std::filesystem::path& path) -> Result<std::string> {
    Result<std::string> text = read_file(path);
    if (!text) return Error{"cannot read " + path.string() + ": " + text.error().message, text.error().errno_value};
    return text;
  };
  ByteWriter b;
  const uint8_t magic[10] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
  b.bytes(magic);
  b.c_string(layout.version);
  b.put(uint8_t{0});
  b.put(static_cast<uint8_t>(sizeof(long)));
  b.put(static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)));
  for (const char* name : {"header_page", "header_event"}) {
    Result<std::string> text = read(tracefs.file(std::string("events/") + name));
    if (!text) return text.error();
    b.c_string(name);
    put_sized<uint64_t>(b, *text);
  }
  std::map<std::string, std::set<std::string>> systems;
  for (const TracepointName& tp : recorded) systems[tp.system].insert(tp.event);
  // ftrace's own formats are written only for recorded events of the ftrace system.
  std::set<std::string> ftrace = systems.count("ftrace") ? systems["ftrace"] : std::set<std::string>{};
  systems.erase("ftrace");
  if (layout.every_ftrace_format) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(tracefs.file("events/ftrace"), ec))
      if (std::filesystem::exists(entry.path() / "format", ec)) ftrace.insert(entry.path().filename().string());
  }
  b.put(static_cast<uint32_t>(ftrace.size()));
  for (const std::string& event : ftrace) {
    Result<std::string> text = read(tracefs.event_file("ftrace", event, "format"));
    if (!text) return text.error();
    put_sized<uint64_t>(b, *text);
  }
  b.put(static_cast<uint32_t>(systems.size()));
  for (const auto& [system, events] : systems) {
    b.c_string(system);
    b.put(static_cast<uint32_t>(events.size()));
    for (const std::string& event : events) {
      Result<std::string> text = read(tracefs.event_file(system, event, "format"));
      if (!text) return text.error();
      put_sized<uint64_t>(b, *text);
    }
  }
  std::string kallsyms;
  if (layout.kallsyms)
    if (Result<std::string> text = read_file("/proc/kallsyms", size_t{256} << 20)) kallsyms = std::move(*text);
  put_sized<uint32_t>(b, kallsyms);
  Result<std::string> printk = tracefs.read("printk_formats");
  put_sized<uint32_t>(b, printk ? *printk : std::string());
  Result<std::string> cmdlines = tracefs.read("saved_cmdlines");
  put_sized<uint64_t>(b, cmdlines ? *cmdlines : std::string());
  return b.take();
}

Result<std::vector<uint8_t>> build_local_tracing_data(const std::vector<TracepointName>& recorded) {
  Result<std::filesystem::path> root = find_tracefs_root();
  if (!root) return root.error();
  Result<Tracefs> tracefs = Tracefs::open(*root);
  if (!tracefs) return tracefs.error();
  return build_tracing_data(*tracefs, recorded);
}

std::vector<uint8_t> tracing_data_record(const std::vector<uint8_t>& tracing_data) {
  // As perf: the size counts the data padded to 8 bytes, which follows the record's header.
  data::TracingDataRecord body;
  body.data = tracing_data;
  body.data.resize((tracing_data.size() + 7) & ~size_t{7}, 0);
  body.size = static_cast<uint32_t>(body.data.size());
  data::Record record;
  record.type = data::kRecordHeaderTracingData;
  record.body = std::move(body);
  return data::build_record(record, nullptr);
}

std::string saved_cmdlines_with(std::string_view kernels, const std::map<int, std::string>& known) {
  std::string merged;
  while (!kernels.empty()) {
    const size_t end = kernels.find('\n');
    const std::string_view line = kernels.substr(0, end);
    kernels = end == std::string_view::npos ? std::string_view{} : kernels.substr(end + 1);
    int pid = 0;
    const auto [after, error] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (line.empty() || (error == std::errc{} && after < line.data() + line.size() && *after == ' ' && known.contains(pid))) continue;
    merged.append(line);
    merged += '\n';
  }
  for (const auto& [pid, comm] : known) merged += std::to_string(pid) + " " + comm + "\n";
  return merged;
}

}  // namespace vperf::tracing
