// PfmSession against the real libpfm4: sessions opened one after another in one process, forced
// and not, as `vperf encode --model M` opens them. These tests also run in every mount state
// (tests/mount_states): with debugfs mounted, libpfm4's perf_events layer used to build a
// tracepoint table that pfm_terminate() freed and the next forced session read and freed again.
#include "pmc/pfm_session.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/strings.h"

namespace vperf::events {
namespace {

PfmSession open_or_fail(const std::optional<std::string>& forced) {
  Result<PfmSession> s = PfmSession::open(forced);
  if (!s) throw std::runtime_error(s.error().message);
  return std::move(s).value();
}

std::vector<std::string> present_names(const PfmSession& s) {
  std::vector<std::string> names;
  for (const PfmPmu& p : s.list_pmus())
    if (p.present) names.push_back(p.name);
  return names;
}

// Every session lists, loads and encodes; the order is the one the encode command uses
// (forced model, the model's tables unforced, forced again for the name) and then some.
TEST(PfmSession, SessionsForcedAndNotAlternateWithoutReadingFreedTables) {
  const std::vector<std::optional<std::string>> order = {"skx", std::nullopt, "skx", "ivb", std::nullopt, "ivb", "skx"};
  for (const std::optional<std::string>& forced : order) {
    SCOPED_TRACE(forced.value_or("(not forced)"));
    PfmSession s = open_or_fail(forced);
    std::vector<PfmPmu> pmus = s.list_pmus();
    ASSERT_FALSE(pmus.empty());
    if (!forced) continue;
    auto it = std::find_if(pmus.begin(), pmus.end(), [&](const PfmPmu& p) { return p.name == *forced; });
    ASSERT_NE(it, pmus.end());
    EXPECT_FALSE(s.load_events(*it).empty());
    Result<PfmEncoding> enc = s.encode(*forced + "::INST_RETIRED:ANY_P");
    ASSERT_TRUE(enc) << enc.error().message;
    EXPECT_EQ(enc->config, 0xc0u);
  }
}

TEST(PfmSession, AForcedSessionCallsOnlyTheForcedPmuPresent) {
  { PfmSession detect = open_or_fail(std::nullopt); }
  { PfmSession ivb = open_or_fail(std::string("ivb")); }
  PfmSession skx = open_or_fail(std::string("skx"));
  EXPECT_EQ(present_names(skx), std::vector<std::string>{"skx"});
}

// libpfm4's perf_events layer (which walks debugfs) and ix86arch build tables that pfm_terminate()
// frees and a later forced session reads and frees again (valgrind: invalid read in
// pfm_get_pmu_info, invalid free in pfm_terminate). vperf has their events itself and never
// loads them, whatever the user's LIBPFM_DISABLED_PMUS says; that variable is left as it was.
TEST(PfmSession, PmusWhoseTablesTerminateFreesAreNeverInitialised) {
  for (const char* user_setting : {static_cast<const char*>(nullptr), "rapl"}) {
    if (user_setting)
      setenv("LIBPFM_DISABLED_PMUS", user_setting, 1);
    else
      unsetenv("LIBPFM_DISABLED_PMUS");
    {
      PfmSession s = open_or_fail(std::nullopt);
      for (const PfmPmu& p : s.list_pmus()) {
        EXPECT_NE(p.name, "perf");
        EXPECT_NE(p.name, "perf_raw");
        EXPECT_FALSE(p.name == "ix86arch" && p.present);
        if (user_setting) {
          EXPECT_FALSE(p.name == "rapl" && p.present) << "the user's own setting is kept";
        }
      }
      EXPECT_FALSE(s.find_event("perf::PERF_COUNT_HW_CPU_CYCLES"));
    }
    const char* after = std::getenv("LIBPFM_DISABLED_PMUS");
    if (user_setting)
      EXPECT_STREQ(after, user_setting);
    else
      EXPECT_EQ(after, nullptr);
  }
  unsetenv("LIBPFM_DISABLED_PMUS");
}

}  // namespace
}  // namespace vperf::events
