#include "pmc/pfm_session.h"

#include <perfmon/pfmlib_perf_event.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/shared_library.h"
#include "core/strings.h"

namespace vperf::events {

namespace {

// libpfm4 is opened when a command first needs its tables (list, encode, decode, check, and
// stat or record given a model-specific event name), not when vperf starts: its tables are
// relocated at load, which made it 2 MB of every reading command's resident memory and a part
// of every command's startup. Each member has the declared function's name and type.
struct PfmApi {
  decltype(&::pfm_initialize) pfm_initialize = nullptr;
  decltype(&::pfm_terminate) pfm_terminate = nullptr;
  decltype(&::pfm_strerror) pfm_strerror = nullptr;
  decltype(&::pfm_find_event) pfm_find_event = nullptr;
  decltype(&::pfm_get_event_attr_info) pfm_get_event_attr_info = nullptr;
  decltype(&::pfm_get_event_info) pfm_get_event_info = nullptr;
  decltype(&::pfm_get_event_next) pfm_get_event_next = nullptr;
  decltype(&::pfm_get_os_event_encoding) pfm_get_os_event_encoding = nullptr;
  decltype(&::pfm_get_pmu_info) pfm_get_pmu_info = nullptr;

  static Result<PfmApi> load() {
    VPERF_TRY(SharedLibrary library, SharedLibrary::open("libpfm.so.4", "install libpfm4: apt-get install libpfm4"));
    PfmApi api;
    VPERF_BIND_FUNCTION(library, api, pfm_initialize);
    VPERF_BIND_FUNCTION(library, api, pfm_terminate);
    VPERF_BIND_FUNCTION(library, api, pfm_strerror);
    VPERF_BIND_FUNCTION(library, api, pfm_find_event);
    VPERF_BIND_FUNCTION(library, api, pfm_get_event_attr_info);
    VPERF_BIND_FUNCTION(library, api, pfm_get_event_info);
    VPERF_BIND_FUNCTION(library, api, pfm_get_event_next);
    VPERF_BIND_FUNCTION(library, api, pfm_get_os_event_encoding);
    VPERF_BIND_FUNCTION(library, api, pfm_get_pmu_info);
    return api;
  }
};

// Loaded by the first PfmSession::open; every other call is made within a session.
const PfmApi& pfm() { return loaded_once<PfmApi>().value(); }

// True while a PfmSession owns libpfm4's global state (see the header for why there is one).
std::atomic<bool> g_libpfm_owned{false};

constexpr const char* kForceEnv = "LIBPFM_FORCE_PMU";
constexpr const char* kDisabledEnv = "LIBPFM_DISABLED_PMUS";

// PMUs vperf never lets libpfm4 initialise (LIBPFM_DISABLED_PMUS matches by substring: "perf"
// is also "perf_raw"). Both build heap tables at initialisation that pfm_terminate() frees while
// leaving the PMU flagged active; a later session forced to another model does not rebuild them
// but still reads them and frees them again at its own pfm_terminate(). `vperf encode --model M`
// opens such sessions in turn, so it read freed memory on every machine where ix86arch is
// detected and crashed where debugfs is mounted:
//  - "perf": libpfm4's copy of perf_events' generic events plus every tracepoint under
//    <debugfs>/tracing/events. vperf resolves those itself (builtins, sysfs, tracefs); walking
//    every tracepoint also cost each initialisation.
//  - "ix86arch": the architectural events from CPUID leaf 0xA, which vperf has as perf's builtin
//    hardware events and which every model-specific core PMU of libpfm4 includes.
constexpr const char* kNeverInitialised = "perf,ix86arch";

// The user's LIBPFM_DISABLED_PMUS (if any) plus the PMUs vperf never initialises.
std::string disabled_pmus() {
  const char* user = std::getenv(kDisabledEnv);
  if (user == nullptr || *user == '\0') return kNeverInitialised;
  return std::string(user) + "," + kNeverInitialised;
}


// Sets an environment variable for one scope and puts the old value (or its absence) back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (!value) return;
    if (const char* old = std::getenv(name)) previous_ = old;
    setenv(name, value->c_str(), 1);
    active_ = true;
  }
  ~ScopedEnv() {
    if (!active_) return;
    if (previous_)
      setenv(name_, previous_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> previous_;
  bool active_ = false;
};

std::string text_or_empty(const char* s) { return s ? s : ""; }

PfmPmuKind kind_of(pfm_pmu_type_t type) {
  switch (type) {
    case PFM_PMU_TYPE_CORE: return PfmPmuKind::Core;
    case PFM_PMU_TYPE_UNCORE: return PfmPmuKind::Uncore;
    case PFM_PMU_TYPE_OS_GENERIC: return PfmPmuKind::OsGeneric;
    default: return PfmPmuKind::Unknown;
  }
}

std::optional<PfmEvent> event_at(int idx, const std::string& pmu_name) {
  pfm_event_info_t ev;
  std::memset(&ev, 0, sizeof ev);
  ev.size = sizeof ev;
  if (pfm().pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &ev) != PFM_SUCCESS) return std::nullopt;
  PfmEvent event;
  event.pmu = pmu_name;
  event.name = text_or_empty(ev.name);
  event.description = text_or_empty(ev.desc);
  event.alias_of = text_or_empty(ev.equiv);
  event.code = ev.code;
  event.is_precise = ev.is_precise != 0;
  for (int a = 0; a < ev.nattrs; ++a) {
    pfm_event_attr_info_t attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    if (pfm().pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &attr) != PFM_SUCCESS) continue;
    if (attr.type == PFM_ATTR_UMASK) {
      event.umasks.push_back(PfmUmask{text_or_empty(attr.name), text_or_empty(attr.desc), text_or_empty(attr.equiv),
                                      attr.code, attr.is_dfl != 0, attr.is_precise != 0});
    } else if (attr.type == PFM_ATTR_MOD_BOOL || attr.type == PFM_ATTR_MOD_INTEGER) {
      event.modifiers.push_back(PfmModifier{text_or_empty(attr.name), text_or_empty(attr.desc),
                                            attr.type == PFM_ATTR_MOD_INTEGER, attr.ctrl == PFM_ATTR_CTRL_PERF_EVENT});
    }
  }
  return event;
}

// libpfm4's description of PMU `id`, or nullopt for an id libpfm4 does not know. In a session
// forced to `forced_pmu` only that PMU reads as present: a PMU activated by an earlier session
// keeps libpfm4's "active" flag, but only the forced one was initialised by this one.
std::optional<pfm_pmu_info_t> pmu_info(const std::optional<std::string>& forced_pmu, int id) {
  auto pmu = static_cast<pfm_pmu_t>(id);
  pfm_pmu_info_t info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  if (pfm().pfm_get_pmu_info(pmu, &info) != PFM_SUCCESS || info.name == nullptr) return std::nullopt;
  if (forced_pmu && !equals_nocase(*forced_pmu, info.name)) info.is_present = 0;
  return info;
}

}  // namespace

std::string_view pfm_pmu_kind_name(PfmPmuKind kind) {
  switch (kind) {
    case PfmPmuKind::Core: return "core";
    case PfmPmuKind::Uncore: return "uncore";
    case PfmPmuKind::OsGeneric: return "os";
    case PfmPmuKind::Unknown: break;
  }
  return "unknown";
}

std::string PfmEncoding::canonical_name() const {
  // fully_qualified is "pmu::EVENT:UMASK[:UMASK]:mod=v:mod=v..."; umasks never contain '='.
  size_t pmu_sep = fully_qualified.find("::");
  size_t start = pmu_sep == std::string::npos ? 0 : pmu_sep + 2;
  size_t end = fully_qualified.size();
  size_t pos = start;
  while ((pos = fully_qualified.find(':', pos)) != std::string::npos) {
    size_t next = fully_qualified.find(':', pos + 1);
    std::string_view part(fully_qualified.data() + pos + 1,
                          (next == std::string::npos ? fully_qualified.size() : next) - pos - 1);
    if (part.find('=') != std::string_view::npos) {
      end = pos;
      break;
    }
    pos += 1;
  }
  return fully_qualified.substr(0, end);
}

bool PfmEvent::requires_umask() const {
  if (umasks.empty()) return false;
  for (const PfmUmask& u : umasks)
    if (u.is_default) return false;
  return true;
}

Result<PfmSession> PfmSession::open(const std::optional<std::string>& forced_pmu) {
  if (const Result<PfmApi>& api = loaded_once<PfmApi>(); !api) return api.error();
  bool expected = false;
  if (!g_libpfm_owned.compare_exchange_strong(expected, true))
    return Error{"libpfm4 is already initialised by another PfmSession; close it first"};
  int rc;
  {
    ScopedEnv force(kForceEnv, forced_pmu);
    ScopedEnv disable(kDisabledEnv, disabled_pmus());
    rc = pfm().pfm_initialize();
  }
  if (rc != PFM_SUCCESS) {
    g_libpfm_owned = false;
    return Error{std::string("libpfm4 initialisation failed: ") + pfm().pfm_strerror(rc)};
  }
  return PfmSession(forced_pmu);
}

PfmSession::PfmSession(PfmSession&& other) noexcept
    : forced_pmu_(std::move(other.forced_pmu_)), owns_(other.owns_) {
  other.owns_ = false;
}

PfmSession& PfmSession::operator=(PfmSession&& other) noexcept {
  if (this != &other) {
    if (owns_) {
      pfm().pfm_terminate();
      g_libpfm_owned = false;
    }
    forced_pmu_ = std::move(other.forced_pmu_);
    owns_ = other.owns_;
    other.owns_ = false;
  }
  return *this;
}

PfmSession::~PfmSession() {
  if (!owns_) return;
  pfm().pfm_terminate();
  g_libpfm_owned = false;
}

std::vector<PfmPmu> PfmSession::list_pmus() const {
  std::vector<PfmPmu> out;
  for (int id = PFM_PMU_NONE; id < PFM_PMU_MAX; ++id) {
    std::optional<pfm_pmu_info_t> info = pmu_info(forced_pmu_, id);
    if (!info) continue;
    PfmPmu pmu;
    pmu.name = info->name;
    pmu.description = text_or_empty(info->desc);
    pmu.kind = kind_of(info->type);
    pmu.present = info->is_present != 0;
    pmu.generic_counters = info->num_cntrs;
    pmu.fixed_counters = info->num_fixed_cntrs;
    pmu.event_count = info->nevents;
    out.push_back(std::move(pmu));
  }
  return out;
}

std::vector<PfmEvent> PfmSession::load_events(const PfmPmu& pmu) const {
  std::vector<PfmEvent> out;
  // The PMU's id is needed to get its first event; look it up by name among all PMUs.
  int first = -1;
  for (int id = PFM_PMU_NONE; id < PFM_PMU_MAX && first < 0; ++id)
    if (std::optional<pfm_pmu_info_t> info = pmu_info(forced_pmu_, id); info && pmu.name == info->name) first = info->first_event;
  for (int idx = first; idx >= 0; idx = pfm().pfm_get_event_next(idx)) {
    std::optional<PfmEvent> event = event_at(idx, pmu.name);
    if (event) out.push_back(std::move(*event));
  }
  return out;
}

std::optional<PfmEvent> PfmSession::find_event(const std::string& name) const {
  int idx = pfm().pfm_find_event(name.c_str());
  if (idx < 0) return std::nullopt;
  pfm_event_info_t ev;
  std::memset(&ev, 0, sizeof ev);
  ev.size = sizeof ev;
  if (pfm().pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &ev) != PFM_SUCCESS) return std::nullopt;
  std::optional<pfm_pmu_info_t> pmu = pmu_info(forced_pmu_, ev.pmu);
  return event_at(idx, pmu ? pmu->name : "");
}

Result<PfmEncoding> PfmSession::encode(const std::string& event) const {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  char* fstr = nullptr;
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.size = sizeof arg;
  arg.attr = &attr;
  arg.fstr = &fstr;
  int rc = pfm().pfm_get_os_event_encoding(event.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  if (rc != PFM_SUCCESS) return Error{"libpfm4 cannot encode '" + event + "': " + pfm().pfm_strerror(rc)};
  PfmEncoding enc;
  enc.type = attr.type;
  enc.config = attr.config;
  enc.config1 = attr.config1;
  enc.config2 = attr.config2;
  enc.exclude_user = attr.exclude_user != 0;
  enc.exclude_kernel = attr.exclude_kernel != 0;
  enc.exclude_hv = attr.exclude_hv != 0;
  enc.precise_ip = static_cast<int>(attr.precise_ip);
  enc.fully_qualified = text_or_empty(fstr);
  std::free(fstr);  // libpfm allocates it with malloc
  return enc;
}

}  // namespace vperf::events
