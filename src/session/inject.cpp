#include "session/inject.h"

#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <vector>

#include "core/error.h"
#include "data/perf_data_format.h"
#include "data/perf_data_reader.h"
#include "data/perf_data_writer.h"
#include "session/jit_inject.h"
#include "session/record_build_ids.h"

namespace vperf::session {

namespace {


// Standard input whole (perf's pipe format, or a file's bytes given as a pipe).
data::PerfDataReader read_standard_input() {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> block(1 << 20);
  for (;;) {
    const ssize_t n = ::read(0, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UserError("cannot read standard input: " + Error::from_errno("read").describe(), "give the recording with -i FILE");
    if (n == 0) break;
    bytes.insert(bytes.end(), block.begin(), block.begin() + n);
  }
  if (bytes.empty()) throw UserError("standard input is empty: no recording to inject into", "perf record -o - CMD | vperf inject -b, or -i FILE");
  Result<data::PerfDataReader> reader = data::PerfDataReader::from_bytes(std::move(bytes));
  if (!reader) throw UserError("cannot read the recording on standard input: " + reader.error().describe(), "");
  return std::move(reader).value();
}

data::PerfDataReader open_input(const std::string& input) {
  if (input == "-") return read_standard_input();
  Result<data::PerfDataReader> reader = data::PerfDataReader::open_file(input);
  if (!reader) throw UserError("cannot read " + input + ": " + reader.error().describe(), "give a perf.data file with -i");
  return std::move(reader).value();
}

// The output is the input file (perf inject -i X -o X): writing it would truncate what is read.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return a != "-" && b != "-" && ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

void inject(const InjectRequest& request, std::ostream& err) {
  if (same_file(request.input, request.output))
    throw UserError("-o names the input " + request.input + ": inject would overwrite what it reads", "write to another file");
  data::PerfDataReader reader = open_input(request.input);
  data::HeaderFeatures features = reader.features();
  if (request.build_ids || request.buildid_all) {
    Result<RecordedBuildIds> ids =
        recorded_build_ids(reader, {}, request.buildid_all ? BuildIdTable::RecordAll : BuildIdTable::Inject);
    if (!ids) throw UserError("cannot read " + request.input + ": " + ids.error().describe(), "");
    features.build_ids = std::move(ids->entries);
  }

  const bool to_pipe = request.output == "-";
  Result<data::PerfDataWriter> writer =
      to_pipe ? data::PerfDataWriter::create_pipe(1, reader.attrs()) : data::PerfDataWriter::create_file(request.output, reader.attrs());
  if (!writer) throw UserError("cannot write " + request.output + ": " + writer.error().describe(), "check the directory exists and is writable");

  // A failure from here on leaves no partial output file behind.
  struct RemoveOnFailure {
    std::string path;
    bool done = false;
    ~RemoveOnFailure() {
      if (!done && path != "-") ::unlink(path.c_str());
    }
  } output_guard{request.output};
  std::optional<Error> failed;
  std::optional<JitInjector> jit;
  if (request.jit) jit.emplace(reader.attrs());
  Result<data::ReadStats> stats = reader.read(
      [&](const data::RecordView& v) {
        Result<void> written;
        switch (v.record.type) {
          case data::kRecordHeaderAttr:         // the writer writes the attrs
          case data::kRecordHeaderEventType:    // obsolete
          case data::kRecordHeaderFeature:      // finish() writes the features
          case data::kRecordHeaderBuildId:      // and the build-ids
            return true;
          case data::kRecordHeaderTracingData:
            if (to_pipe) {
              written = writer->write(v.bytes);
            } else {  // a file keeps the formats as its TRACING_DATA section: the record's payload
              uint32_t size = 0;
              if (v.bytes.size() >= 16) std::memcpy(&size, v.bytes.data() + 8, sizeof size);
              if (v.bytes.size() >= 16 + uint64_t{size})
                features.other.push_back({data::kFeatTracingData, std::vector<uint8_t>(v.bytes.begin() + 16, v.bytes.begin() + 16 + size)});
            }
            break;
          case data::kRecordFinishedRound:
            written = writer->flush_round();
            break;
          case PERF_RECORD_MMAP:
          case PERF_RECORD_MMAP2:
            if (jit)
              if (std::optional<std::vector<std::vector<uint8_t>>> replaced = jit->replace(v.record)) {
                for (const std::vector<uint8_t>& record : *replaced)
                  if (written = writer->write(record); !written) break;
                break;
              }
            written = writer->write(v.bytes);
            break;
          default:
            written = writer->write(v.bytes);
        }
        if (!written) failed = written.error();
        return written.ok();
      },
      data::ReadOptions{.ordered = false});
  if (failed) throw UserError("cannot write " + request.output + ": " + failed->describe(), "check the disk space or the pipe");
  if (!stats) throw UserError("cannot read " + request.input + ": " + stats.error().describe(), "");
  for (const std::string& warning : reader.warnings()) err << "vperf: warning: " << warning << '\n';
  if (jit) features.build_ids.insert(features.build_ids.end(), jit->build_ids().begin(), jit->build_ids().end());
  if (Result<void> finished = writer->finish(features); !finished)
    throw UserError("cannot finish " + request.output + ": " + finished.error().describe(), "check the disk space or the pipe");
  output_guard.done = true;
  if (jit) jit->keep_files();
}

}  // namespace vperf::session
