// libFuzzer target for PerfDataReader's streaming path: the input is put behind a file
// descriptor (a memfd) and read with open_pipe(), as `vperf report -i -` reads standard input.
// That path reads sizes from the stream before the bytes exist, so besides never reading out of
// bounds it must never allocate more than the stream holds plus one step (a record claiming more
// than kMaxPipeRecordBytes is an error). libFuzzer's -rss_limit_mb catches an allocation of a
// claimed size; -malloc_limit_mb (default: the RSS limit) catches it even when untouched.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "core/scoped_fd.h"
#include "data/perf_data_reader.h"
#include "data/perf_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vperf::ScopedFd fd(::memfd_create("perf-data-pipe-fuzz", MFD_CLOEXEC));
  if (!fd.valid()) return 0;
  size_t written = 0;
  while (written < size) {
    ssize_t n = ::write(fd.get(), data + written, size - written);
    if (n <= 0) return 0;
    written += static_cast<size_t>(n);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return 0;
  auto reader = vperf::data::PerfDataReader::open_pipe(fd.get());
  if (!reader) return 0;
  (void)reader->skipped_features();
  auto stats = reader.value().read([](const vperf::data::RecordView& v) {
    vperf::data::SampleFormat format;
    if (v.attr) format = vperf::data::SampleFormat::from_attr(v.attr->attr);
    auto rebuilt = vperf::data::build_record(v.record, v.attr ? &format : nullptr);
    (void)rebuilt;
    return true;
  });
  (void)stats;
  return 0;
}
