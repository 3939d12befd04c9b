// The machine model fed with events: mmap/comm/fork/exit semantics, kernel maps from fixture
// kallsyms/modules, resolution by cpumode, and names as perf prints them.
#include "symbols/machine.h"

#include <gtest/gtest.h>

#include "support/capability.h"
#include "support/fake_event_fs.h"
#include "symbols/machines.h"
#include "test_programs.h"

namespace vperf::symbols {
namespace {

constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000100 T do_syscall_64\n"
    "ffffffff81000200 T entry_SYSCALL_64\n"
    "ffffffff81001000 T _etext\n"
    "ffffffffc0a00000 t kvm_init\t[kvm]\n"
    "ffffffffc0a00100 T kvm_vcpu_ioctl\t[kvm]\n";
constexpr const char* kModules = "kvm 8192 0 - Live 0xffffffffc0a00000\n";

SymbolConfig fixture_config(const test::TempTree& tree) {
  tree.write("kallsyms", kKallsyms);
  tree.write("modules", kModules);
  SymbolConfig c;
  c.kallsyms = tree.root() / "kallsyms";
  c.modules = tree.root() / "modules";
  c.jit_map_dir = tree.root();
  c.debug_dirs = {};
  c.proc.clear();  // the fixtures' pids are not this machine's processes
  return c;
}

constexpr uint8_t kUser = PERF_RECORD_MISC_USER;
constexpr uint8_t kKernel = PERF_RECORD_MISC_KERNEL;

// An mmap of a dso-less region: symbols do not matter for the map-set tests.
MmapEvent anon_mmap(pid_t pid, uint64_t start, uint64_t len, const std::string& name, uint64_t pgoff = 0) {
  MmapEvent e;
  e.pid = e.tid = pid;
  e.start = start;
  e.len = len;
  e.pgoff = pgoff;
  e.filename = name;
  return e;
}

TEST(MapSet, NewMappingCutsTheOverlappedParts) {
  MapSet set;
  auto dso_a = std::make_shared<Dso>(DsoKind::Unknown, "a", nullptr);
  auto dso_b = std::make_shared<Dso>(DsoKind::Unknown, "b", nullptr);
  set.insert(Map{0x1000, 0x5000, 0x0, 0, MapAddressing::FileOffset, 0, dso_a});
  set.insert(Map{0x2000, 0x3000, 0x0, 0, MapAddressing::FileOffset, 0, dso_b});
  auto maps = set.maps();
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0]->start, 0x1000u);
  EXPECT_EQ(maps[0]->end, 0x2000u);
  EXPECT_EQ(maps[1]->dso->name(), "b");
  EXPECT_EQ(maps[2]->start, 0x3000u);
  EXPECT_EQ(maps[2]->end, 0x5000u);
  EXPECT_EQ(maps[2]->pgoff, 0x2000u);  // the tail keeps its file offsets
  EXPECT_EQ(maps[2]->map_ip(0x3010), 0x2010u);
  EXPECT_EQ(set.find(0x2fff)->dso->name(), "b");
  EXPECT_EQ(set.find(0x5000), nullptr);
  // A mapping that covers everything replaces everything.
  set.insert(Map{0x0, 0x10000, 0, 0, MapAddressing::FileOffset, 0, dso_a});
  EXPECT_EQ(set.size(), 1u);
}

// perf's thread__fork passes the parent's name on only when a COMM named the parent: a child of
// a task vperf never saw named is ":TID" of its own, not the parent's ":PPID".
TEST(Machine, ForkPassesOnOnlyANameThatWasSet) {
  Machine m{SymbolConfig{}};
  m.process_fork(7141, 7141, 7142, 7141);  // the parent (7141) was never named
  ASSERT_NE(m.find_thread(7142), nullptr);
  EXPECT_EQ(m.find_thread(7142)->comm, ":7142");
  m.process_comm(300, 300, "named", false);
  m.process_fork(300, 300, 301, 300);
  EXPECT_EQ(m.find_thread(301)->comm, "named");
  m.process_fork(302, 301, 302, 301);  // a grandchild: the name was set upstream
  EXPECT_EQ(m.find_thread(302)->comm, "named");
}

TEST(Machine, ThreadsOfAProcessShareMapsAndForkCopiesThem) {
  test::TempTree tree;
  Machine m(fixture_config(tree));
  m.process_comm(100, 100, "parent", false);
  m.process_mmap(anon_mmap(100, 0x400000, 0x1000, "[heap]"));
  // A new thread (same pid) sees later mmaps of its process.
  m.process_fork(100, 100, 101, 100);
  m.process_mmap(anon_mmap(100, 0x500000, 0x1000, "/SYSV0000"));
  ASSERT_NE(m.find_thread(101), nullptr);
  EXPECT_EQ(m.find_thread(101)->comm, "parent");
  EXPECT_EQ(m.find_thread(101)->maps, m.find_thread(100)->maps);
  EXPECT_NE(m.find_thread(101)->maps->find(0x500010), nullptr);
  // A new process gets a copy: its later mmaps are its own.
  m.process_fork(200, 100, 200, 100);
  m.process_mmap(anon_mmap(200, 0x600000, 0x1000, "/SYSV0001"));
  EXPECT_NE(m.find_thread(200)->maps->find(0x400010), nullptr);
  EXPECT_NE(m.find_thread(200)->maps->find(0x600010), nullptr);
  EXPECT_EQ(m.find_thread(100)->maps->find(0x600010), nullptr);
  // comm without exec renames only.
  m.process_comm(200, 200, "child", false);
  EXPECT_EQ(m.find_thread(200)->comm, "child");
  EXPECT_NE(m.find_thread(200)->maps->find(0x400010), nullptr);
  // exec keeps the maps until the new program's MMAPs replace them (perf 6.1: a sample inside
  // execve resolves in the old image).
  m.process_comm(200, 200, "newprog", true);
  EXPECT_EQ(m.find_thread(200)->comm, "newprog");
  EXPECT_NE(m.find_thread(200)->maps->find(0x400010), nullptr);
  EXPECT_NE(m.find_thread(100)->maps->find(0x400010), nullptr);
  // exit marks; a reused tid replaces the thread.
  m.process_exit(200, 200);
  EXPECT_TRUE(m.find_thread(200)->exited);
  m.process_fork(200, 100, 200, 100);
  EXPECT_FALSE(m.find_thread(200)->exited);
  EXPECT_EQ(m.find_thread(200)->comm, "parent");
}

TEST(Machine, UnknownThreadsAreNamedByTidAndJoinTheirLeader) {
  test::TempTree tree;
  Machine m(fixture_config(tree));
  m.process_mmap(anon_mmap(300, 0x400000, 0x1000, "[heap]"));
  Thread& t = m.findnew_thread(300, 301);
  EXPECT_EQ(t.comm, ":301");
  EXPECT_NE(t.maps->find(0x400010), nullptr);
}

TEST(Machine, KernelMapsFromKallsymsAndModules) {
  test::TempTree tree;
  Machine m(fixture_config(tree));
  auto created = m.create_kernel_maps();
  ASSERT_TRUE(created.ok()) << created.error().describe();
  auto maps = m.kernel_maps().maps();
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0]->start, 0xffffffff81000000u);
  EXPECT_EQ(maps[0]->end, 0xffffffff81001000u);  // _etext

  auto r = m.resolve(-1, 0, kKernel, 0xffffffff81000123);
  EXPECT_EQ(r.symbol_name(), "do_syscall_64");
  EXPECT_EQ(r.symbol_offset, 0x23u);
  EXPECT_EQ(r.dso_name(), "[kernel.kallsyms]");
  EXPECT_EQ(r.level_marker(), "[k]");
  auto mod = m.resolve(-1, 0, kKernel, 0xffffffffc0a00104);
  EXPECT_EQ(mod.symbol_name(), "kvm_vcpu_ioctl");
  EXPECT_EQ(mod.dso_name(), "[kvm]");
  EXPECT_EQ(mod.dso()->kind(), DsoKind::Module);
  // Past _etext (.init.text) the kernel map reaches up to the first module, as perf's does.
  auto init_text = m.resolve(-1, 0, kKernel, 0xffffffff90000000);
  EXPECT_EQ(init_text.dso_name(), "[kernel.kallsyms]");
  auto past_modules = m.resolve(-1, 0, kKernel, 0xfffffffff0000000);
  EXPECT_EQ(past_modules.symbol_name(), "[unknown]");
  EXPECT_EQ(past_modules.dso_name(), "[unknown]");
  // A user-mode address is looked up in the process's maps only, as perf 6.1's thread__find_map:
  // one in the kernel's range (a frame-pointer walk's garbage) is unknown, not kernel code.
  auto user_in_kernel = m.resolve(5, 5, kUser, 0xffffffff81000201);
  EXPECT_EQ(user_in_kernel.symbol_name(), "[unknown]");
  EXPECT_EQ(user_in_kernel.dso_name(), "[unknown]");
  EXPECT_EQ(user_in_kernel.level, '.');
}

TEST(Machine, WithoutAModulesFileModuleMapsComeFromKallsyms) {
  test::TempTree tree;
  SymbolConfig c = fixture_config(tree);
  c.modules = tree.root() / "absent";
  Machine m(c);
  ASSERT_TRUE(m.create_kernel_maps().ok());
  // The kernel, and [kvm] over its kallsyms symbols (to the page after the last one).
  EXPECT_EQ(m.kernel_maps().size(), 2u);
  EXPECT_EQ(m.resolve(-1, 0, kKernel, 0xffffffffc0a00104).dso_name(), "[kvm]");
  EXPECT_EQ(m.resolve(-1, 0, kKernel, 0xffffffffc0a00104).symbol_name(), "kvm_vcpu_ioctl");
  // Between the kernel and the module, the kernel map reaches the module; past it, nothing.
  EXPECT_EQ(m.resolve(-1, 0, kKernel, 0xffffffffc0000000).dso_name(), "[kernel.kallsyms]");
  EXPECT_EQ(m.resolve(-1, 0, kKernel, 0xffffffffc0b00000).dso_name(), "[unknown]");
}

TEST(Machine, ABracketedKernelMmapIsAModuleWithItsKallsymsSymbols) {
  // perf kvm record writes a guest module's map as "[virtio_console]"; without a modules file
  // its symbols are still the module's kallsyms lines (perf's dso__split_kallsyms).
  test::TempTree tree;
  SymbolConfig c = fixture_config(tree);
  c.modules.clear();
  Machine m(c);
  MmapEvent kvm = anon_mmap(-1, 0xffffffffc0a00000, 0x2000, "[kvm]");
  kvm.cpumode = kKernel;
  m.process_mmap(kvm);
  auto at = m.resolve(-1, 0, kKernel, 0xffffffffc0a00104);
  EXPECT_EQ(at.dso_name(), "[kvm]");
  EXPECT_EQ(at.symbol_name(), "kvm_vcpu_ioctl");
}

TEST(Machine, HiddenKallsymsIsAnErrorWithTheFix) {
  test::TempTree tree;
  tree.write("kallsyms", "0000000000000000 T _text\n0000000000000000 T f\n");
  SymbolConfig c;
  c.kallsyms = tree.root() / "kallsyms";
  Machine m(c);
  auto created = m.create_kernel_maps();
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("kptr_restrict=0"), std::string::npos);
}

TEST(Machine, KernelMmapEventsAndKaslrShift) {
  test::TempTree tree;
  Machine m(fixture_config(tree));
  // Recorded under a kernel whose _text was 0x200000 higher than the kallsyms read now.
  MmapEvent k;
  k.pid = k.tid = -1;
  k.cpumode = kKernel;
  k.start = 0xffffffff81200000;
  k.len = 0x1000;
  k.pgoff = 0xffffffff81200000;
  k.filename = "[kernel.kallsyms]_text";
  m.process_mmap(k);
  MmapEvent mod = k;
  mod.start = 0xffffffffc0a00000;
  mod.len = 0x2000;
  mod.pgoff = 0;
  mod.filename = "/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm.ko";
  m.process_mmap(mod);
  auto r = m.resolve(-1, 0, kKernel, 0xffffffff81200105);
  EXPECT_EQ(r.symbol_name(), "do_syscall_64");
  EXPECT_EQ(r.symbol_offset, 5u);
  auto mr = m.resolve(-1, 0, kKernel, 0xffffffffc0a00001);
  EXPECT_EQ(mr.dso_name(), "[kvm]");
  EXPECT_EQ(mr.symbol_name(), "kvm_init");
}

TEST(Machine, ResolvesTheWorkloadMappedLikeAPie) {
  test::TempTree tree;
  Machine m(fixture_config(tree));
  uint64_t leaf = test::nm_address(VPERF_WORKLOAD, "spin_leaf_hash");
  ASSERT_NE(leaf, 0u);
  // The executable segment (file offset 0x2000 in this build, read from the ELF) at a
  // random base, as ld.so maps it.
  auto elf = ElfFile::open(VPERF_WORKLOAD);
  ASSERT_TRUE(elf.ok());
  LoadSegment text{};
  for (const auto& s : elf->load_segments())
    if (s.executable) text = s;
  const uint64_t base = 0x5649c3f81000;
  MmapEvent e;
  e.pid = e.tid = 77;
  e.start = base + (text.vaddr & ~0xfffULL);
  e.len = text.filesz + (text.vaddr & 0xfff);
  e.pgoff = text.offset & ~0xfffULL;
  e.filename = VPERF_WORKLOAD;
  m.process_comm(77, 77, "vperf-workload", true);
  m.process_mmap(e);
  auto r = m.resolve(77, 77, kUser, base + leaf + 3);
  EXPECT_EQ(r.symbol_name(), "spin_leaf_hash");
  EXPECT_EQ(r.symbol_offset, 3u);
  EXPECT_EQ(r.symbol_address, leaf + 3);
  EXPECT_EQ(r.dso_name(), VPERF_WORKLOAD);
  EXPECT_EQ(r.dso_short_name(), "vperf-workload");
  EXPECT_EQ(r.level_marker(), "[.]");
  EXPECT_EQ(r.dso()->kind(), DsoKind::User);
  // Another thread of the process resolves the same; an unknown thread resolves nothing.
  m.findnew_thread(77, 78);
  EXPECT_EQ(m.resolve(77, 78, kUser, base + leaf).symbol_name(), "spin_leaf_hash");
  auto unknown = m.resolve(99, 99, kUser, base + leaf);
  EXPECT_EQ(unknown.symbol_name(), "[unknown]");
  EXPECT_EQ(unknown.dso_name(), "[unknown]");
  // Hypervisor mode resolves nothing.
  EXPECT_EQ(m.resolve(77, 77, PERF_RECORD_MISC_HYPERVISOR, base + leaf).level, 'H');
}

TEST(Machine, AnonymousExecutableMemoryUsesThePerfPidMap) {
  test::TempTree tree;
  SymbolConfig c = fixture_config(tree);
  tree.write("perf-55.map", "7f0000001000 100 LazyCompile:~hot app.js:3\n");
  Machine m(c);
  m.process_mmap(anon_mmap(55, 0x7f0000000000, 0x10000, "//anon"));
  auto r = m.resolve(55, 55, kUser, 0x7f0000001010);
  EXPECT_EQ(r.symbol_name(), "LazyCompile:~hot app.js:3");
  EXPECT_EQ(r.dso_name(), (tree.root() / "perf-55.map").string());
  EXPECT_EQ(r.dso()->kind(), DsoKind::Jit);
  EXPECT_EQ(r.dso_short_name(), "[JIT] tid 55");  // perf 6.1's name for it in report's dso column
  EXPECT_EQ(m.resolve(55, 55, kUser, 0x7f0000005000).symbol_name(), "[unknown]");
  // The same name where the process wrote no map (QEMU's TCG code buffer in a system-wide profile).
  m.process_mmap(anon_mmap(56, 0x7f0000000000, 0x10000, "//anon"));
  EXPECT_EQ(m.resolve(56, 56, kUser, 0x7f0000001010).dso_short_name(), "[JIT] tid 56");
}

// perf's nsinfo, on a /proc of our own making: pid 70 runs in another mount namespace (a
// container, pid 7 inside its pid namespace), pid 71 in ours. The container's JIT map is in its
// own /tmp under its pid there, and its binary is read through PROC/70/root; the name stays the
// host pid's, and our own process's files stay ours.
TEST(Machine, AContainersFilesAndJitMapAreFoundThroughItsRoot) {
  test::TempTree tree;
  SymbolConfig c = fixture_config(tree);
  const std::filesystem::path proc = tree.root() / "proc";
  c.proc = proc;
  c.jit_map_dir = "/tmp";
  std::filesystem::create_directories(proc / "self" / "ns");
  std::filesystem::create_symlink("mnt:[4026531841]", proc / "self" / "ns" / "mnt");
  for (const char* pid : {"70", "71"}) std::filesystem::create_directories(proc / pid / "ns");
  std::filesystem::create_symlink("mnt:[4026532999]", proc / "70" / "ns" / "mnt");
  std::filesystem::create_symlink("mnt:[4026531841]", proc / "71" / "ns" / "mnt");
  tree.write("proc/70/status", "Name:\tnode\nTgid:\t70\nNSpid:\t70\t7\nPPid:\t1\n");
  tree.write("container/tmp/perf-7.map", "7f0000001000 100 LazyCompile:~inside app.js:1\n");
  std::filesystem::create_symlink(tree.root() / "container", proc / "70" / "root");

  Machine m(c);
  m.process_mmap(anon_mmap(70, 0x7f0000000000, 0x10000, "//anon"));
  auto r = m.resolve(70, 70, kUser, 0x7f0000001010);
  EXPECT_EQ(r.symbol_name(), "LazyCompile:~inside app.js:1");
  EXPECT_EQ(r.dso_name(), "/tmp/perf-70.map");
  EXPECT_EQ(r.dso_short_name(), "[JIT] tid 70");

  // A binary the container has and the host has not: read through its root, one Dso per
  // namespace (pid 71's /opt/app is the host's, which does not exist).
  const std::string app = "/opt/vperf-container-test/app";
  ASSERT_FALSE(std::filesystem::exists(app));
  std::filesystem::create_directories(tree.root() / "container/opt/vperf-container-test");
  std::filesystem::copy_file(std::filesystem::read_symlink("/proc/self/exe"), tree.root() / ("container" + app));
  MmapEvent inside = anon_mmap(70, 0x400000, 0x100000, app);
  inside.prot = PROT_READ | PROT_EXEC;
  m.process_mmap(inside);
  MmapEvent outside = inside;
  outside.pid = outside.tid = 71;
  m.process_mmap(outside);
  auto in_container = m.resolve(70, 70, kUser, 0x400000);
  auto on_host = m.resolve(71, 71, kUser, 0x400000);
  EXPECT_EQ(in_container.dso_name(), app);
  EXPECT_NE(in_container.dso(), on_host.dso());
  ASSERT_NE(in_container.dso(), nullptr);
  (void)in_container.dso()->symbols();
  EXPECT_TRUE(in_container.dso()->build_id().has_value()) << "the container's copy was read";
  EXPECT_FALSE(in_container.dso()->load_error().has_value());
  ASSERT_NE(on_host.dso(), nullptr);
  (void)on_host.dso()->symbols();
  EXPECT_TRUE(on_host.dso()->load_error().has_value()) << "the host has no such file";
}

TEST(ProcessNamespace, TheInnermostPidIsTheLastNspid) {
  EXPECT_EQ(innermost_pid("Name:\tx\nNSpid:\t4242\t17\t3\n"), 3);
  EXPECT_EQ(innermost_pid("NSpid:\t4242\n"), 4242);
  EXPECT_EQ(innermost_pid("Name:\tx\n"), std::nullopt);
  EXPECT_EQ(innermost_pid("NSpid:\t12\tx\n"), std::nullopt);
  EXPECT_EQ(innermost_pid("NSpid:\t99999999999\n"), std::nullopt);
}

// Skipped only where the kernel maps no vdso at all; where /proc/self/maps shows one, failing to
// load it is a failure.
TEST(Machine, VdsoFromThisProcess) {
  VPERF_REQUIRE(test::maps_vdso(), "a [vdso] in /proc/self/maps");
  test::TempTree tree;
  SymbolConfig c = fixture_config(tree);
  Machine m(c);
  m.process_mmap(anon_mmap(9, 0x7ffd0000000, 0x2000, "[vdso]"));
  auto dso = m.find_dso("[vdso]");
  ASSERT_NE(dso, nullptr);
  EXPECT_EQ(dso->kind(), DsoKind::Vdso);
  ASSERT_FALSE(dso->load_error().has_value()) << dso->load_error()->describe();
  const Symbol* gettime = dso->symbols().find_by_name("__vdso_clock_gettime");
  ASSERT_NE(gettime, nullptr);
  auto r = m.resolve(9, 9, kUser, 0x7ffd0000000 + gettime->start + 1);
  EXPECT_EQ(r.symbol_name(), "__vdso_clock_gettime");
  EXPECT_EQ(r.dso_name(), "[vdso]");

  c.vdso = VdsoSource::Skip;
  Machine skipped(c);
  skipped.process_mmap(anon_mmap(9, 0x7ffd0000000, 0x2000, "[vdso]"));
  auto s = skipped.resolve(9, 9, kUser, 0x7ffd0000000 + gettime->start + 1);
  EXPECT_EQ(s.symbol_name(), "[unknown]");
  EXPECT_EQ(s.dso_name(), "[vdso]");
  EXPECT_TRUE(skipped.find_dso("[vdso]")->load_error().has_value());
}

TEST(Machines, GuestModesGoToTheGuestOfThatPid) {
  test::TempTree host_tree, guest_tree;
  Machines machines(fixture_config(host_tree));
  guest_tree.write("kallsyms", "ffffffff82000000 T _text\nffffffff82000100 T guest_only_function\nffffffff82001000 T _etext\n");
  SymbolConfig gc;
  gc.kallsyms = guest_tree.root() / "kallsyms";
  gc.modules = guest_tree.root() / "modules";
  gc.vdso = VdsoSource::Skip;
  Machine& guest = machines.add_guest(4000, gc);
  ASSERT_TRUE(guest.create_kernel_maps().ok());
  ASSERT_TRUE(machines.host().create_kernel_maps().ok());
  EXPECT_EQ(guest.kernel_dso_name(), "[guest.kernel.kallsyms]");

  auto g = machines.resolve(4000, 4001, PERF_RECORD_MISC_GUEST_KERNEL, 0xffffffff82000104);
  EXPECT_EQ(g.symbol_name(), "guest_only_function");
  EXPECT_EQ(g.dso_name(), "[guest.kernel.kallsyms]");
  EXPECT_EQ(g.level_marker(), "[g]");
  EXPECT_EQ(g.dso()->kind(), DsoKind::GuestKernel);
  // The host's kernel for host modes.
  EXPECT_EQ(machines.resolve(4000, 4001, kKernel, 0xffffffff81000104).symbol_name(), "do_syscall_64");
  // A guest mode of a VMM without a guest machine: nothing, not the host's symbols.
  auto none = machines.resolve(5000, 5001, PERF_RECORD_MISC_GUEST_KERNEL, 0xffffffff81000104);
  EXPECT_EQ(none.symbol_name(), "[unknown]");
  EXPECT_EQ(none.level, 'g');
  EXPECT_EQ(machines.find_for_cpumode(PERF_RECORD_MISC_GUEST_USER, 4000), &guest);
  EXPECT_EQ(machines.find_for_cpumode(kUser, 4000), &machines.host());
}

}  // namespace
}  // namespace vperf::symbols
