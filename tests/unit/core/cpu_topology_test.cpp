#include "core/cpu_topology.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

namespace vperf {
namespace {

class CpuTopologyTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("vperf_topology_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void write(const std::filesystem::path& rel, const std::string& text) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void cpu(int n, int socket, int die, int core, bool with_die = true) {
    const std::string dir = "cpu" + std::to_string(n) + "/topology/";
    write(dir + "physical_package_id", std::to_string(socket) + "\n");
    if (with_die) write(dir + "die_id", std::to_string(die) + "\n");
    write(dir + "core_id", std::to_string(core) + "\n");
  }

  std::filesystem::path root_;
};

TEST_F(CpuTopologyTree, ReadsOnlineCpus) {
  write("online", "0-1,3\n");
  cpu(0, 0, 0, 0);
  cpu(1, 0, 0, 1);
  cpu(2, 1, 0, 0);  // offline: not listed, not read
  cpu(3, 1, 1, 4);
  auto topo = load_cpu_topology(root_);
  ASSERT_TRUE(topo.ok()) << topo.error().describe();
  ASSERT_EQ(topo->places().size(), 3u);
  EXPECT_EQ(topo->place_of(3), (CpuPlace{3, 1, 1, 4}));
  EXPECT_EQ(topo->place_of(1), (CpuPlace{1, 0, 0, 1}));
  EXPECT_EQ(topo->find(2), nullptr);
  EXPECT_EQ(topo->place_of(2), (CpuPlace{2, -1, -1, -1}));
}

TEST_F(CpuTopologyTree, MissingDieIdMeansDieZero) {
  write("online", "0\n");
  cpu(0, 2, 7, 5, /*with_die=*/false);
  auto topo = load_cpu_topology(root_);
  ASSERT_TRUE(topo.ok()) << topo.error().describe();
  EXPECT_EQ(topo->place_of(0), (CpuPlace{0, 2, 0, 5}));
}

// The NUMA node is the CPU directory's nodeM entry (a link to the node in sysfs); without one
// (a kernel without NUMA) it is -1, as perf has it.
TEST_F(CpuTopologyTree, NodeComesFromTheCpusNodeEntry) {
  write("online", "0-2\n");
  cpu(0, 0, 0, 0);
  cpu(1, 0, 0, 1);
  cpu(2, 1, 0, 0);
  std::filesystem::create_directories(root_ / "cpu0/node0");
  std::filesystem::create_directories(root_ / "cpu1/node3");
  auto topo = load_cpu_topology(root_);
  ASSERT_TRUE(topo.ok()) << topo.error().describe();
  EXPECT_EQ(topo->place_of(0).node, 0);
  EXPECT_EQ(topo->place_of(1).node, 3);
  EXPECT_EQ(topo->place_of(2).node, -1);
}

TEST_F(CpuTopologyTree, ErrorsNameTheFile) {
  write("online", "0-1\n");
  cpu(0, 0, 0, 0);
  write("cpu1/topology/physical_package_id", "0\n");
  write("cpu1/topology/core_id", "x\n");
  auto topo = load_cpu_topology(root_);
  ASSERT_FALSE(topo.ok());
  EXPECT_NE(topo.error().describe().find("cpu1/topology/core_id"), std::string::npos) << topo.error().describe();

  std::filesystem::remove(root_ / "online");
  auto no_online = load_cpu_topology(root_);
  ASSERT_FALSE(no_online.ok());
  EXPECT_NE(no_online.error().describe().find("online"), std::string::npos);
}

TEST(CpuTopology, LaterDuplicateWins) {
  CpuTopology t({{1, 0, 0, 1}, {0, 0, 0, 0}, {1, 3, 0, 9}});
  ASSERT_EQ(t.places().size(), 2u);
  EXPECT_EQ(t.places()[0].cpu, 0);
  EXPECT_EQ(t.place_of(1), (CpuPlace{1, 3, 0, 9}));
}

TEST(CpuTopology, ThisMachine) {
  auto topo = load_cpu_topology();
  ASSERT_TRUE(topo.ok()) << topo.error().describe();
  ASSERT_FALSE(topo->empty());
  EXPECT_EQ(topo->places().front().cpu, 0);
  EXPECT_GE(topo->places().front().socket, 0);
}

}  // namespace
}  // namespace vperf
