#pragma once
// Fake sysfs PMU and tracefs trees in a temporary directory, for the events/ unit tests.
// Header-only so that each test program can use it without a change to the build.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace vperf::test {

// A temporary directory removed with everything in it when the object goes away.
class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "vperf-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    root_ = pattern;
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  const std::filesystem::path& root() const { return root_; }

  // Writes `contents` to root/relative, creating the directories on the way.
  void write(const std::filesystem::path& relative, const std::string& contents) const {
    std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << contents;
  }

 private:
  std::filesystem::path root_;
};

// A sysfs PMU directory: <root>/<name>/{type, format/*, events/*, caps/*, cpumask}.
struct FakePmu {
  std::string name;
  uint32_t type = 0;
  std::vector<std::pair<std::string, std::string>> format;  // term -> "config:0-7"
  std::vector<std::pair<std::string, std::string>> events;  // alias (or alias.scale/.unit) -> contents
  std::vector<std::pair<std::string, std::string>> caps;
  std::string cpumask;
};

inline void add_fake_pmu(const TempTree& tree, const FakePmu& pmu) {
  tree.write(std::filesystem::path(pmu.name) / "type", std::to_string(pmu.type) + "\n");
  for (const auto& [term, spec] : pmu.format) tree.write(std::filesystem::path(pmu.name) / "format" / term, spec + "\n");
  for (const auto& [alias, terms] : pmu.events) tree.write(std::filesystem::path(pmu.name) / "events" / alias, terms + "\n");
  for (const auto& [cap, value] : pmu.caps) tree.write(std::filesystem::path(pmu.name) / "caps" / cap, value + "\n");
  if (!pmu.cpumask.empty()) tree.write(std::filesystem::path(pmu.name) / "cpumask", pmu.cpumask + "\n");
}

// An Intel-like core PMU named "cpu", the msr and power PMUs of a KVM guest, and two
// instances of an uncore PMU.
inline void add_typical_pmus(const TempTree& tree) {
  add_fake_pmu(tree, FakePmu{"cpu",
                             4,
                             {{"event", "config:0-7"},
                              {"umask", "config:8-15"},
                              {"edge", "config:18"},
                              {"pc", "config:19"},
                              {"any", "config:21"},
                              {"inv", "config:23"},
                              {"cmask", "config:24-31"},
                              {"offcore_rsp", "config1:0-63"},
                              {"ldlat", "config1:0-15"},
                              {"frontend", "config1:0-23"}},
                             {{"cpu-cycles", "event=0x3c"},
                              {"mem-loads", "event=0xcd,umask=0x1,ldlat=3"},
                              {"ref-cycles", "event=0x00,umask=0x03"}},
                             {{"max_precise", "3"}, {"pmu_name", "skylake"}},
                             ""});
  add_fake_pmu(tree, FakePmu{"msr", 10, {{"event", "config:0-63"}}, {{"tsc", "event=0x00"}, {"smi", "event=0x04"}}, {}, ""});
  add_fake_pmu(tree, FakePmu{"power",
                             9,
                             {{"event", "config:0-7"}},
                             {{"energy-psys", "event=0x05"},
                              {"energy-psys.scale", "2.3283064365386962890625e-10"},
                              {"energy-psys.unit", "Joules"}},
                             {},
                             "0"});
  for (int i = 0; i < 2; ++i)
    add_fake_pmu(tree, FakePmu{"uncore_imc_" + std::to_string(i),
                               static_cast<uint32_t>(20 + i),
                               {{"event", "config:0-7"}, {"umask", "config:8-15"}},
                               {{"cas_count_read", "event=0x04,umask=0x03"}},
                               {},
                               "0"});
  add_fake_pmu(tree, FakePmu{"software", 1, {}, {}, {}, ""});
}

// A tracefs tree: <root>/events/<subsystem>/<event>/{id,format}.
inline void add_fake_tracepoint(const TempTree& tree, const std::string& subsystem, const std::string& event, uint64_t id) {
  std::filesystem::path dir = std::filesystem::path("events") / subsystem / event;
  tree.write(dir / "id", std::to_string(id) + "\n");
  tree.write(dir / "format", "name: " + event + "\nID: " + std::to_string(id) + "\n");
}

inline void add_typical_tracepoints(const TempTree& tree) {
  add_fake_tracepoint(tree, "sched", "sched_switch", 372);
  add_fake_tracepoint(tree, "sched", "sched_wakeup", 374);
  add_fake_tracepoint(tree, "sched", "sched_process_exec", 360);
  add_fake_tracepoint(tree, "syscalls", "sys_enter_read", 700);
  add_fake_tracepoint(tree, "syscalls", "sys_enter_write", 702);
  add_fake_tracepoint(tree, "syscalls", "sys_exit_read", 701);
  add_fake_tracepoint(tree, "irq", "irq_handler_entry", 100);
  // Files perf ignores: they are not event directories with an id.
  tree.write("events/enable", "0\n");
  tree.write("events/sched/enable", "0\n");
  tree.write("events/sched/filter", "none\n");
}

}  // namespace vperf::test
