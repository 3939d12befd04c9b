#pragma once
// perf's fallback for an event the kernel refuses for lack of privilege (evsel__fallback in
// tools/perf/util/evsel.c, its EACCES case), shared by counting and sampling.
//
// At kernel.perf_event_paranoid >= 2 a user without CAP_PERFMON may observe user space only:
// perf_event_open answers EACCES for an event that includes the kernel. perf then retries the
// event with exclude_kernel and exclude_hv, renames it as if ":u" had been given, and says
//   kernel.perf_event_paranoid=2, trying to fall back to excluding kernel and hypervisor samples
// An event that already excludes the kernel, or that excludes user space (":k" asked for the
// kernel only, so user space alone would be a different event), is not retried.
#include <linux/perf_event.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace vperf::perf {

inline constexpr const char* kPerfEventParanoidPath = "/proc/sys/kernel/perf_event_paranoid";

// The sysctl's value ("2\n" -> 2; it may be negative).
Result<int> read_perf_event_paranoid(const std::filesystem::path& path = kPerfEventParanoidPath);

// perf's name of the user-space-only event: NAME + ":u", or + "u" when the name already has
// modifiers or PMU syntax (a ':' or a '/': "cpu/cycles/" -> "cpu/cycles/u").
std::string user_space_event_name(std::string_view name);

// perf's message for the retry.
std::string user_space_fallback_message(int paranoid);

// The retry perf makes after perf_event_open failed with `errno_value`: when it applies,
// `attr` gets exclude_kernel and exclude_hv, `name` its ":u" form, and the message is
// returned; otherwise nothing changes and nullopt is returned. `paranoid` is read only when
// errno_value is EACCES and the attr could be narrowed (perf asks the sysctl at that point too).
std::optional<std::string> fall_back_to_user_space(perf_event_attr& attr, std::string& name, int errno_value,
                                                   const std::function<Result<int>()>& paranoid);

}  // namespace vperf::perf
