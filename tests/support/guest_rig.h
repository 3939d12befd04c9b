#pragma once
// Test support for vperf kvm: the real guest of scripts/test-guest.sh, and perf.data files with
// guest samples at that guest's addresses.
//
// guest_rig() captures the guest once per build tree (BUILD/guest-rig: kernel and busybox from
// apt, booted by QEMU, its /proc/kallsyms and /proc/modules dumped over virtio-serial, then
// stopped) under an flock, so the test processes ctest runs in parallel share one boot. It
// takes about a minute the first time (TCG), nothing afterwards.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scoped_fd.h"

namespace vperf::test {

// The test guest's architecture: x86-64 (KVM where it works, TCG otherwise), or arm64 under
// QEMU's TCG (-M virt -cpu max), whose emulated PMUv3 is a real hardware PMU for the tests.
enum class GuestArch { X86_64, Arm64 };

struct GuestRig {
  GuestArch arch = GuestArch::X86_64;
  std::filesystem::path dir;
  std::filesystem::path kallsyms;  // the guest's /proc/kallsyms (KASLR as it booted)
  std::filesystem::path modules;   // its /proc/modules
  std::string release;             // uname -r
};

// The captured guest; an Error (the script's last lines) when it cannot be built or booted here.
// The arm64 rig lives in BUILD/guest-rig-arm64.
Result<GuestRig> guest_rig(GuestArch arch = GuestArch::X86_64);

// perf 6.1 for the rig's architecture (Debian's linux-perf, unpacked once per rig under its
// lock: scripts/test-guest.sh perf), to run in the guest as the oracle; an Error without apt.
Result<std::filesystem::path> guest_perf(const GuestRig& rig);

// The test kernel module (tests/kernel_module) built with DWARF against the rig's kernel
// headers, once per rig under its lock (scripts/test-guest.sh module); an Error when the headers
// cannot be had (not root, no apt lists).
Result<std::filesystem::path> guest_test_module(const GuestRig& rig);

// The rig kernel's vmlinux with DWARF (Debian's linux-image-RELEASE-dbg, only vmlinux kept),
// fetched once per rig under its lock (scripts/test-guest.sh vmlinux); an Error without apt.
Result<std::filesystem::path> guest_vmlinux(const GuestRig& rig);

// A running copy of the rig's guest, booted from `dir` (its own kernel, initramfs and sockets,
// so tests in parallel processes never share a VM); stopped when destroyed. Its kallsyms and
// modules are those of this boot (KASLR).
// How QEMU emulates an arm64 guest's CPU.
struct Arm64GuestCpu {
  // QEMU's -icount shift=N: one instruction per 2^N ns of virtual time, so that
  // cycles = instructions << N.
  std::optional<unsigned> icount_shift;
  bool pmu = true;  // false: -cpu max,pmu=off, a guest without a PMU
};

class RunningGuest {
 public:
  // `with_vperf`: vperf and vperf-workload, stripped, at /bin in the guest with the libraries
  // they link (scripts/test-guest.sh add-vperf), for tests that run vperf inside it, and each of
  // `files` at /lib/vperf-test/. `patches_kernel_text`: the tests enable tracers or probes, so
  // under TCG one host thread runs the vCPUs in turn (VPERF_GUEST_TCG=single, see the script):
  // QEMU 7.2's thread per vCPU livelocked the guest in ftrace's text patching.
  // `arm64`: how QEMU emulates the arm64 CPU. An arm64 guest gets vperf and vperf-workload built
  // for arm64 (VPERF_ARM64_BINARY, VPERF_ARM64_WORKLOAD).
  static Result<std::unique_ptr<RunningGuest>> boot(const GuestRig& rig, const std::filesystem::path& dir, bool with_vperf = false,
                                                    const std::vector<std::filesystem::path>& files = {},
                                                    bool patches_kernel_text = false, const Arm64GuestCpu& arm64 = {});
  RunningGuest(const RunningGuest&) = delete;
  RunningGuest& operator=(const RunningGuest&) = delete;
  ~RunningGuest();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path qmp() const { return dir_ / "qmp.sock"; }
  std::filesystem::path qga() const { return dir_ / "qga.sock"; }
  std::filesystem::path kallsyms() const { return dir_ / "guest-kallsyms"; }
  std::filesystem::path modules() const { return dir_ / "guest-modules"; }
  pid_t qemu_pid() const;

 private:
  explicit RunningGuest(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

// A shell command run in the guest through its agent (guest-exec with captured output), as
// root, with init's environment (absolute paths): its exit status and output. An Error when
// the agent does not answer or the command outlives `limit`.
struct GuestCommandResult {
  int exit_code = -1;
  std::string out, err;
};
Result<GuestCommandResult> run_in_guest(const RunningGuest& guest, const std::string& command,
                                        std::chrono::seconds limit = std::chrono::seconds(180));

// A guest sample as the host's kernel writes it: the VMM's pid, the vCPU thread's tid,
// GUEST_KERNEL or GUEST_USER, the guest ip, and a callchain in perf's layout (context markers
// included) or none.
struct GuestSample {
  pid_t vmm_pid = 0;
  pid_t vcpu_tid = 0;
  uint8_t cpumode = 0;
  uint64_t ip = 0;
  std::vector<uint64_t> callchain;
};

struct GuestPerfData {
  // Host threads named by COMM records: (pid, tid, comm), e.g. the VMM and "CPU 0/KVM".
  struct Thread {
    pid_t pid, tid;
    std::string comm;
  };
  std::vector<Thread> threads;
  // Guest kernel and module maps written as perf kvm record writes them (machine pid, kallsyms,
  // modules); none: the file has no guest MMAP records.
  struct GuestMaps {
    pid_t machine_pid;
    std::filesystem::path kallsyms, modules;
  };
  std::vector<GuestMaps> guest_maps;
  std::vector<GuestSample> samples;
  bool callchains = false;  // PERF_SAMPLE_CALLCHAIN in the attr
};

// A `--sort sym` report of guest samples as symbol -> percent ("    39.58%  [g] clear_user_rep_good").
std::map<std::string, double> guest_symbol_shares(const std::string& report);
// The share of read_zero's clear_user under whichever name the guest kernel chose for this CPU
// (arch/x86/lib: clear_user_rep_good, clear_user_erms, clear_user_original; __clear_user).
double clear_user_share(const std::map<std::string, double>& shares);
// One line with what the share checks of the kvm tests compare, for their stdout and failure
// messages ("guest shares of 1K samples: native_safe_halt 48.10%, clear_user 38.52%, read_zero
// 2.31%; others of 1% or more: ..."): the distributions over repeated runs that justify their
// bounds are read from it.
std::string guest_share_summary(const std::string& report);
// The sample count in the summary `vperf kvm record --qmp|--domain` prints ("... for 4.02 s: 382
// samples, ..."); 0 if there is none. Share checks are judged over a count, not over a time.
size_t recorded_samples(const std::string& record_summary);
// What is wrong with the guest shares of a `--sort sym` report of a 2-vCPU guest whose one vCPU
// idles and the other runs dd from /dev/zero; empty when nothing is. Each tick samples both
// vCPUs: the idle one in native_safe_halt (47-50% of all samples in 62 runs, loaded or not),
// the busy one in dd's reads, in the guest kernel outside the idle loop. There it is mostly in
// clear_user (27-43% of all samples in 61 of the runs), but without --pause a running TCG
// vCPU's registers are the ones QEMU last stored, at a jump out of chained translated code: in
// 1 run of 62 x64_sys_call took 34% and clear_user 13% (docs/guest.md). So clear_user's bound
// only says dd's copy was seen; the busy vCPU's share is what the sampling must get right.
std::string idle_and_dd_share_problems(const std::string& report);

// Writes a perf.data (cycles, guest-only as perf kvm record opens it: exclude_host) with
// `content`; period 1000 per sample.
Result<void> write_guest_perf_data(const std::filesystem::path& path, const GuestPerfData& content);

}  // namespace vperf::test

namespace vperf::test {

// libvirtd and virtlogd for the libvirt tests: started by hand when none answers at
// qemu:///system (these machines have no systemd), and stopped again on destruction if this
// object started them. A libvirtd started here sees /dev/kvm as udev would have left it (group
// kvm, 0660) in a mount namespace of its own, so that libvirt keeps its QEMU capabilities
// cache instead of probing QEMU again on every lookup (guest_rig.cpp says why). Test
// processes running in parallel take turns (an exclusive lock held for the object's life), so
// none stops the daemons another one is using.
class LibvirtDaemons {
 public:
  static Result<std::unique_ptr<LibvirtDaemons>> ensure();
  LibvirtDaemons(const LibvirtDaemons&) = delete;
  LibvirtDaemons& operator=(const LibvirtDaemons&) = delete;
  ~LibvirtDaemons();

 private:
  LibvirtDaemons(ScopedFd lock, bool started) : lock_(std::move(lock)), started_(started) {}
  ScopedFd lock_;
  bool started_;
};

// A transient TCG domain of qemu:///system booting the rig's guest from `dir`, with the guest
// agent's channel (org.qemu.guest_agent.0) and a second QMP monitor at qmp_socket() beside
// libvirt's own; ready when the agent answers; destroyed on destruction.
class TransientDomain {
 public:
  static Result<std::unique_ptr<TransientDomain>> create(const GuestRig& rig, const std::filesystem::path& dir, std::string name);
  TransientDomain(const TransientDomain&) = delete;
  TransientDomain& operator=(const TransientDomain&) = delete;
  ~TransientDomain();

  const std::string& name() const { return name_; }
  std::filesystem::path qmp_socket() const { return dir_ / "sock" / "qmp.sock"; }
  std::string vmm_pid() const;  // libvirt's record of it, /run/libvirt/qemu/NAME.pid

 private:
  TransientDomain(std::filesystem::path dir, std::string name) : dir_(std::move(dir)), name_(std::move(name)) {}
  std::filesystem::path dir_;
  std::string name_;
};

}  // namespace vperf::test
