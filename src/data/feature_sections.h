#pragma once
// Encoding and decoding of perf.data feature sections (layouts in data/perf_data_format.h).
// Shared by the file mode (sections after the data) and the pipe mode (HEADER_FEATURE records).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/byte_writer.h"
#include "core/error.h"
#include "data/perf_data_writer.h"

namespace vperf::data {

// A string as perf's feature sections hold one (do_write_string): u32 length of the
// NUL-terminated text padded to kNameAlign, then the padded text.
void put_perf_string(ByteWriter& w, std::string_view s);

// The sections `features` + `attrs` make, in feature-bit order, as {feature, bytes}.
// EVENT_DESC comes from `attrs`; empty fields are left out; `features.other` is added verbatim
// for bits not produced here. BUILD_ID is included (pipe mode writes it as records instead).
std::vector<RawFeature> encode_features(const HeaderFeatures& features, const std::vector<EventAttrEntry>& attrs);

// One BUILD_ID entry as perf writes it: a build-id record (4-byte aligned) whose header type is
// 0 in the BUILD_ID section and HEADER_BUILD_ID as a pipe record.
std::vector<uint8_t> encode_build_id(const BuildIdEntry& entry, uint32_t type);

// Decodes section `feature` into `out`. Returns false (no error) for a feature vperf keeps as
// bytes (appended to out.other); an Error if a modelled section is malformed.
Result<bool> decode_feature(int feature, std::span<const uint8_t> bytes, HeaderFeatures& out);

}  // namespace vperf::data
