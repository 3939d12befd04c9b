#include "pmc/pmc_notes.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace vperf::events {

namespace {

struct EncodingNote {
  uint64_t config;             // matched against config & mask
  uint64_t mask;
  std::string_view vendor;     // "GenuineIntel", or empty for any vendor
  std::string_view models;     // space-separated vperf model names, or empty for every model of the vendor
  std::string_view text;
};

// Notes match the whole config: with cmask, inv or edge set the encoding means something else.
constexpr uint64_t kWholeConfig = ~uint64_t{0};

// Sources: Intel SDM vol. 3B ch. 20 (fixed-function counters), Intel perfmon JSON descriptions
// of CPU_CLK_UNHALTED.REF_XCLK / REF_TSC_P per model, and the kernel's FIXED_EVENT_CONSTRAINT
// tables (arch/x86/events/intel/core.c), which map the pseudo-encodings to fixed counters.
constexpr std::array kNotes{
    EncodingNote{0x0300, kWholeConfig, "GenuineIntel", "",
                 "0x300 is not an event select: it is the kernel's pseudo-encoding for fixed counter 2 "
                 "(libpfm4 UNHALTED_REFERENCE_CYCLES, perfmon CPU_CLK_UNHALTED.REF_TSC, perf's ref-cycles). "
                 "It counts unhalted cycles at the TSC rate and only fixed counter 2 can count it."},
    EncodingNote{0x013c, kWholeConfig, "GenuineIntel", "snb snb_ep ivb ivb_ep hsw hsw_ep bdw bdw_ep",
                 "0x13c (CPU_CLK_UNHALTED.REF_XCLK) counts the 100 MHz reference clock (XCLK) while the "
                 "thread is unhalted, not TSC ticks: multiply by TSC-frequency / 100 MHz before comparing "
                 "it with ref-cycles (0x300)."},
    EncodingNote{0x013c, kWholeConfig, "GenuineIntel", "skl skx clx",
                 "0x13c (CPU_CLK_UNHALTED.REF_XCLK) counts the reference clock XCLK while the thread is "
                 "unhalted (libpfm4: 100 MHz; Intel's perfmon: 'core crystal clock', frequency in CPUID "
                 "leaf 0x15), not TSC ticks: scale it before comparing it with ref-cycles (0x300)."},
    EncodingNote{0x013c, kWholeConfig, "GenuineIntel", "spr",
                 "0x13c is CPU_CLK_UNHALTED.REF_TSC_P on this part: it counts at the TSC rate, like "
                 "ref-cycles (0x300) but on a general-purpose counter. On Ivy Bridge to Skylake the same "
                 "encoding counted the much slower XCLK."},
    EncodingNote{0x0100, kWholeConfig, "GenuineIntel", "icl icx spr",
                 "0x100 is the pseudo-encoding for fixed counter 0 with precise distribution "
                 "(INST_RETIRED.PREC_DIST); on a general-purpose counter it means nothing."},
    EncodingNote{0x0400, kWholeConfig, "GenuineIntel", "icl icx spr",
                 "0x400 is the pseudo-encoding for fixed counter 3 (TOPDOWN.SLOTS, perf's 'slots'); "
                 "only that fixed counter can count it."},
    EncodingNote{0x00c0, kWholeConfig, "GenuineIntel", "",
                 "0xc0 (INST_RETIRED.ANY_P) is also what perf uses for INST_RETIRED.ANY: the kernel "
                 "places it on fixed counter 0 when that counter is free."},
    EncodingNote{0x003c, kWholeConfig, "GenuineIntel", "",
                 "0x3c (CPU_CLK_UNHALTED.THREAD_P, perf's cycles) may run on fixed counter 1 or a "
                 "general-purpose counter; the count is the same."},
};

bool model_listed(std::string_view models, std::string_view name) {
  while (!models.empty()) {
    size_t space = models.find(' ');
    std::string_view word = models.substr(0, space);
    if (word == name) return true;
    if (space == std::string_view::npos) break;
    models.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace

std::vector<std::string> encoding_notes(const PmcModel& model, uint64_t config) {
  std::vector<std::string> out;
  std::string_view vendor = model.cpu ? std::string_view(model.cpu->vendor) : std::string_view{};
  for (const EncodingNote& n : kNotes) {
    if ((config & n.mask) != n.config) continue;
    if (!n.vendor.empty() && n.vendor != vendor) continue;
    if (!n.models.empty() && !model_listed(n.models, model.name)) continue;
    out.emplace_back(n.text);
  }
  return out;
}

}  // namespace vperf::events
