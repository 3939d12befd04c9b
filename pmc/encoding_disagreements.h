#pragma once
// Where libpfm4 and Intel's perfmon table give one event different encodings.
//
// Both catalogs name most core events alike (Intel's EVENT.UMASK is libpfm4's EVENT:UMASK), and
// then their encodings should be the same; libpfm4 4.13 has some wrong (Ivy Bridge's
// MOVE_ELIMINATION umasks 0x01 and 0x04 swapped). Intel's table wins (docs/encode.md); encode,
// decode and list --pmc print the other catalog's encoding on the line ("(libpfm4: r458)").
//
// "The same" means the same config (event select, umask, cmask, inv, edge, any), or the config of
// one of the perfmon event's other EventCodes ("0xB7, 0xBB"), or, for a fixed-counter event,
// the table's own pseudo-encoding (EventCode | UMask << 8), which names the same counter that
// perf's general-purpose twin does. config1 is not compared: libpfm4 fills offcore and load
// latency values from its own defaults, which Intel's two-part names do not have.
#include <boost/json/value.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmc/pmc_catalog.h"

namespace vperf::events {

struct EncodingDisagreement {
  std::string perfmon_name;  // "MOVE_ELIMINATION.INT_ELIMINATED"
  std::string libpfm_name;   // "ivb::MOVE_ELIMINATION:INT_ELIMINATED"
  uint64_t perfmon_config = 0;
  uint64_t libpfm_config = 0;
};

class EncodingDisagreements {
 public:
  // Joins the catalog's perfmon core events with its encoded libpfm4 core PMU by name.
  explicit EncodingDisagreements(const PmcCatalog& catalog);

  // How many events both catalogs name (the join's size, for tests that must not pass vacuously).
  size_t compared() const { return compared_; }
  const std::vector<EncodingDisagreement>& all() const { return disagreements_; }

  // The disagreement about a perfmon event name, or about libpfm4's EVENT:UMASK; nullptr when
  // the two agree or only one catalog has the event.
  const EncodingDisagreement* for_perfmon(std::string_view perfmon_name) const;
  const EncodingDisagreement* for_libpfm(std::string_view event, std::string_view umask) const;

 private:
  size_t compared_ = 0;
  std::vector<EncodingDisagreement> disagreements_;
  std::map<std::string, size_t, std::less<>> by_key_;  // "EVENT.UMASK" upper case -> index
};

// The other catalog's encoding of a name, where the two disagree.
struct OtherCatalogEncoding {
  std::string catalog;  // "libpfm4" or "perfmon"
  uint64_t config = 0;
  // "(libpfm4: r458)", as the line of encode, decode and list --pmc shows it.
  std::string text() const;
};

// {"catalog": "libpfm4", "raw": "r458", "config": "0x458"}, or null when the two agree.
boost::json::value other_catalog_json(const std::optional<OtherCatalogEncoding>& other);

// For a perfmon event: libpfm4's encoding of the same name; for libpfm4's EVENT:UMASK: Intel's.
std::optional<OtherCatalogEncoding> libpfm_encoding_if_different(const EncodingDisagreements& d, std::string_view perfmon_name);
std::optional<OtherCatalogEncoding> perfmon_encoding_if_different(const EncodingDisagreements& d, std::string_view event,
                                                                  std::string_view umask);

}  // namespace vperf::events
