// perf daemon's config file, as perf 6.1 reads its [daemon] and [session-NAME] sections.
#include "session/daemon.h"

#include <gtest/gtest.h>

namespace vperf::session {
namespace {

TEST(DaemonConfig, ReadsTheBaseAndEverySessionsRunLine) {
  Result<DaemonConfig> config = parse_daemon_config(
      "# perf's own example\n"
      "[report]\n"
      "  children = false\n"
      "[daemon]\n"
      "base=/opt/perfdata\n"
      "\n"
      "[session-cycles]\n"
      "run = -m 10M -e cycles --overwrite --switch-output -a\n"
      "; a comment\n"
      "[session-sched]\n"
      "\trun = \"-m 20M -e sched:* --overwrite --switch-output -a\"\n");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->base, "/opt/perfdata");
  ASSERT_EQ(config->sessions.size(), 2u);
  EXPECT_EQ(config->sessions[0], (DaemonSessionConfig{"cycles", "-m 10M -e cycles --overwrite --switch-output -a"}));
  EXPECT_EQ(config->sessions[1], (DaemonSessionConfig{"sched", "-m 20M -e sched:* --overwrite --switch-output -a"}));
}

TEST(DaemonConfig, ASessionWithoutARunLineIsNone) {
  Result<DaemonConfig> config = parse_daemon_config("[daemon]\nbase=/b\n[session-empty]\n[session-x]\nrun=-e cpu-clock\n");
  ASSERT_TRUE(config.ok());
  ASSERT_EQ(config->sessions.size(), 1u);
  EXPECT_EQ(config->sessions[0].name, "x");
}

TEST(DaemonConfig, MalformedLinesAreNamed) {
  for (const char* bad : {"[daemon\nbase=/b\n", "[daemon]\nbase /b\n", "[session-a/b]\nrun=-a\n", "[session-]\nrun=-a\n",
                          "[session-a:b]\nrun=-a\n"}) {
    Result<DaemonConfig> config = parse_daemon_config(bad);
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_TRUE(config.error().message.starts_with("line ")) << config.error().message;
  }
}

}  // namespace
}  // namespace vperf::session
