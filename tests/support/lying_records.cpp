#include "support/lying_records.h"

#include "core/byte_writer.h"
#include "data/perf_data_format.h"

namespace vperf::test {

std::vector<uint8_t> tracing_data_claiming(uint32_t payload) {
  ByteWriter w;
  w.u32(data::kRecordHeaderTracingData);
  w.u16(0);
  w.u16(16);  // header, u32 size, u32 padding
  w.u32(payload);
  w.u32(0);
  return w.take();
}

std::vector<uint8_t> auxtrace_claiming(uint64_t payload) {
  ByteWriter w;
  w.u32(data::kRecordAuxtrace);
  w.u16(0);
  w.u16(48);  // header, u64 size, offset, reference, u32 idx, tid, cpu, reserved
  w.u64(payload);
  w.zeros(32);
  return w.take();
}

}  // namespace vperf::test
