#pragma once
// `vperf decode RAW...`: which catalog events (libpfm4 and perfmon JSON) have a raw encoding.
//
// A libpfm4 event matches when the encoding libpfm4 produces for EVENT:UMASK (or EVENT when it
// has no umasks) has the same config; a perfmon event matches when the config built from its
// EventCode (any of them, for "0xB7, 0xBB") and fields does. When the raw form gives config1
// (offcore_rsp=, ldlat=, frontend=) it must match too; without it, events that need a config1
// value are listed apart as variants.
#include <boost/json/value.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "pmc/encoding_disagreements.h"
#include "pmc/pmc_catalog.h"
#include "pmc/pmc_encoding.h"

namespace vperf::events {

struct DecodeMatch {
  std::string source;  // "libpfm4" or "perfmon"
  std::string name;    // "ivb::CPU_CLK_UNHALTED:REF_P", "CPU_CLK_THREAD_UNHALTED.REF_XCLK"
  std::string description;
  uint64_t config1 = 0;
  std::string detail;  // "alias of REF_XCLK", "PEBS", "fixed counter 2", "deprecated"
  // Where the other catalog encodes the same name otherwise (libpfm4 and Intel disagree).
  std::optional<OtherCatalogEncoding> other_catalog;
};

struct DecodedRaw {
  RawEncoding raw;
  CoreEventFields fields;
  std::string raw_syntax;
  std::string pmu_syntax;
  std::vector<DecodeMatch> matches;
  // Events with this config whose meaning is chosen by config1 (offcore_rsp, ldlat, frontend),
  // when the raw form gave no config1: they are candidates, not matches.
  std::vector<DecodeMatch> config1_variants;
  std::vector<std::string> notes;
};

// Parses every token first: an unparseable one is a usage error naming it.
std::vector<DecodedRaw> decode_pmc_encodings(const PmcCatalog& catalog, const std::vector<std::string>& tokens);
DecodedRaw decode_pmc_encoding(const PmcCatalog& catalog, const RawEncoding& raw);

void print_decoded(std::ostream& out, const PmcCatalog& catalog, const std::vector<DecodedRaw>& decoded);
boost::json::value decoded_json(const PmcCatalog& catalog, const std::vector<DecodedRaw>& decoded);

}  // namespace vperf::events
