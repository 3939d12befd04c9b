#pragma once
// libpfm4, owned in one place.
//
// libpfm4 keeps its PMU tables in process-global state: pfm_initialize() detects the CPU (or
// obeys LIBPFM_FORCE_PMU, read from the environment at that moment) and activates the PMUs of
// that model; pfm_terminate() drops them. Every other call reads that global state. vperf
// therefore lets exactly one PfmSession exist at a time: opening a second one while another is
// alive is an error, not a silent re-initialisation under the first one's feet. Sessions are
// cheap (pfm_initialize takes well under a millisecond), so callers open one, copy what they
// need into the plain structs below, and close it.
//
// pfm_terminate() frees the heap tables some PMUs build at initialisation but leaves those PMUs
// flagged active; a later session forced to another model does not rebuild them, reads them and
// frees them again. Those PMUs are libpfm4's perf_events layer ("perf", whose table holds every
// tracepoint under a mounted debugfs: `encode --model M` crashed on hosts with debugfs) and
// ix86arch (CPUID leaf 0xA). vperf never lets libpfm4 initialise them (LIBPFM_DISABLED_PMUS for
// the duration of pfm_initialize()); it has their events itself. Sessions therefore neither read
// freed memory nor depend on the host's mounts.
//
// libpfm4 (4.13) does not deactivate a PMU in pfm_terminate(): a PMU once activated by
// LIBPFM_FORCE_PMU stays active, and "present", for the rest of the process. Unqualified
// names are looked up in PMU table order, so after forcing ivb an unqualified
// "INST_RETIRED" may find ivb's event even in a session forced to skx. vperf therefore always
// qualifies names with their PMU ("skx::INST_RETIRED") and picks the running CPU's core PMU by
// CPUID rather than by taking the first "present" one.
//
// What libpfm4 calls "present" is decided from CPUID family/model alone: on a VM without a
// virtual PMU it still reports the host CPU's PMU as present. PfmPmu::present keeps libpfm's
// word and callers must label it as such; whether the kernel exposes the PMU is a different
// question (sysfs, perf_event_open), answered elsewhere.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace vperf::events {

enum class PfmPmuKind { Core, Uncore, OsGeneric, Unknown };
std::string_view pfm_pmu_kind_name(PfmPmuKind kind);  // "core", "uncore", "os", "unknown"

// An event modifier libpfm4 accepts after the umasks: "u", "k", "c=1", "precise=2" ...
struct PfmModifier {
  std::string name;
  std::string description;
  bool takes_value = false;  // "c=<n>" rather than a flag
  bool from_os = false;      // provided by perf_events (u, k, precise, period ...) not the PMU
};

struct PfmUmask {
  std::string name;
  std::string description;
  std::string alias_of;  // libpfm's "equiv": this umask is another name for that one
  uint64_t code = 0;     // libpfm's attribute code; high bits may carry cmask/inv/any
  bool is_default = false;
  bool is_precise = false;  // PEBS
};

// perf_event_attr fields libpfm4 produced for one event string (PFM_OS_PERF_EVENT_EXT).
struct PfmEncoding {
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  bool exclude_user = false;
  bool exclude_kernel = false;
  bool exclude_hv = false;
  int precise_ip = 0;
  // libpfm's fully qualified form: "ivb::INST_RETIRED:ANY_P:e=0:i=0:c=0:t=0:u=1:k=1:..."
  std::string fully_qualified;
  // The fully qualified form cut before the first "name=value" modifier: "ivb::INST_RETIRED:ANY_P".
  std::string canonical_name() const;
};

struct PfmEvent {
  std::string pmu;  // libpfm PMU name: "ivb"
  std::string name;
  std::string description;
  std::string alias_of;
  uint64_t code = 0;
  bool is_precise = false;
  std::vector<PfmUmask> umasks;
  std::vector<PfmModifier> modifiers;
  // Filled by the catalog while the PMU is active: the encoding of "PMU::EVENT" (default
  // umasks) and of each "PMU::EVENT:UMASK", or why libpfm refused.
  std::optional<PfmEncoding> encoding;
  std::string encoding_error;
  std::vector<std::optional<PfmEncoding>> umask_encodings;  // parallel to umasks
  bool requires_umask() const;
};

struct PfmPmu {
  std::string name;  // "ivb", "skx_unc_cha0", "rapl"
  std::string description;
  PfmPmuKind kind = PfmPmuKind::Unknown;
  bool present = false;  // libpfm4's verdict (by CPU model or LIBPFM_FORCE_PMU)
  int generic_counters = 0;
  int fixed_counters = 0;
  int event_count = 0;
  std::vector<PfmEvent> events;  // empty until PfmSession::load_events
};

class PfmSession {
 public:
  // Initialises libpfm4. With forced_pmu, LIBPFM_FORCE_PMU is set only for the duration of
  // pfm_initialize() and the previous environment is restored before returning; likewise
  // LIBPFM_DISABLED_PMUS, extended with "perf,ix86arch". A forced session lists only the forced
  // PMU as present.
  static Result<PfmSession> open(const std::optional<std::string>& forced_pmu);

  PfmSession(PfmSession&& other) noexcept;
  PfmSession& operator=(PfmSession&& other) noexcept;
  PfmSession(const PfmSession&) = delete;
  PfmSession& operator=(const PfmSession&) = delete;
  ~PfmSession();

  const std::optional<std::string>& forced_pmu() const { return forced_pmu_; }

  // Every PMU this libpfm4 build supports (present or not), without events.
  std::vector<PfmPmu> list_pmus() const;
  // Events of one PMU with their umasks and modifiers. Works for PMUs that are not present
  // (libpfm keeps their tables) but only active ones can be encoded.
  std::vector<PfmEvent> load_events(const PfmPmu& pmu) const;
  // One event by name ("INST_RETIRED", "ivb::INST_RETIRED"), searching the active PMUs the
  // way libpfm4's own parser does; nullopt when libpfm4 knows no such event.
  std::optional<PfmEvent> find_event(const std::string& name) const;
  // Encodes an event string with libpfm's default privilege levels (user and kernel).
  Result<PfmEncoding> encode(const std::string& event) const;

 private:
  explicit PfmSession(std::optional<std::string> forced_pmu) : forced_pmu_(std::move(forced_pmu)), owns_(true) {}
  std::optional<std::string> forced_pmu_;
  bool owns_ = false;
};

}  // namespace vperf::events
