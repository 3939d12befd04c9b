#include "support/guest_rig.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/scoped_fd.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"
#include "data/synthesize.h"
#include "guest/guest_agent.h"
#include "support/run_program.h"

namespace vperf::test {

namespace {

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string tail(const std::string& text, size_t lines) {
  size_t at = text.size();
  for (size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

// The environment scripts/test-guest.sh reads the guest's architecture from.
std::map<std::string, std::string> arch_environment(GuestArch arch) {
  if (arch == GuestArch::Arm64) return {{"VPERF_GUEST_ARCH", "arm64"}};
  return {};
}

}  // namespace

Result<GuestRig> guest_rig(GuestArch arch) {
  GuestRig rig;
  rig.arch = arch;
  rig.dir = std::filesystem::path(VPERF_BINARY).parent_path() / (arch == GuestArch::Arm64 ? "guest-rig-arm64" : "guest-rig");
  rig.kallsyms = rig.dir / "guest-kallsyms";
  rig.modules = rig.dir / "guest-modules";
  std::filesystem::create_directories(rig.dir);
  ScopedFd lock(::open((rig.dir / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) return Error::from_errno("lock " + rig.dir.string());
  const std::filesystem::path done = rig.dir / "captured";
  if (!std::filesystem::exists(done)) {
    ProgramResult r = run_program({"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", "capture", rig.dir.string()},
                                  arch_environment(arch));
    if (r.exit_code != 0) return Error{"scripts/test-guest.sh capture failed: " + tail(r.err + r.out, 3)};
    std::ofstream(done) << r.out;
  }
  rig.release = first_line(rig.dir / "release");
  if (!std::filesystem::exists(rig.kallsyms) || !std::filesystem::exists(rig.modules))
    return Error{"the guest rig in " + rig.dir.string() + " has no symbol dumps (remove it to capture again)"};
  return rig;
}

namespace {
// scripts/test-guest.sh ACTION on the rig, under its lock (test processes run in parallel).
Result<void> rig_action(const GuestRig& rig, const std::string& action) {
  ScopedFd lock(::open((rig.dir / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) return Error::from_errno("lock " + rig.dir.string());
  ProgramResult r = run_program({"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", action, rig.dir.string()},
                                arch_environment(rig.arch));
  if (r.exit_code != 0) return Error{"scripts/test-guest.sh " + action + " failed: " + tail(r.err + r.out, 3)};
  return {};
}
}  // namespace

Result<std::filesystem::path> guest_perf(const GuestRig& rig) {
  VPERF_TRY(rig_action(rig, "perf"));
  return rig.dir / "perf";
}

Result<std::filesystem::path> guest_test_module(const GuestRig& rig) {
  VPERF_TRY(rig_action(rig, "module"));
  return rig.dir / "test-module/vperf_probe_module.ko";
}

Result<std::filesystem::path> guest_vmlinux(const GuestRig& rig) {
  VPERF_TRY(rig_action(rig, "vmlinux"));
  return rig.dir / "vmlinux-dbg";
}

Result<std::unique_ptr<RunningGuest>> RunningGuest::boot(const GuestRig& rig, const std::filesystem::path& dir, bool with_vperf,
                                                         const std::vector<std::filesystem::path>& files, bool patches_kernel_text,
                                                         const Arm64GuestCpu& arm64) {
  std::filesystem::create_directories(dir);
  std::error_code ec;
  for (const char* file : {"vmlinuz", "initramfs.cpio.gz", "kvm-silent", "release"})
    if (std::filesystem::exists(rig.dir / file))
      std::filesystem::copy_file(rig.dir / file, dir / file, std::filesystem::copy_options::overwrite_existing, ec);
  std::map<std::string, std::string> env = arch_environment(rig.arch);
  if (with_vperf) {
    std::vector<std::string> argv = {"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", "add-vperf", dir.string()};
    if (rig.arch == GuestArch::Arm64) {
#if defined(VPERF_ARM64_BINARY)
      argv.insert(argv.end(), {VPERF_ARM64_BINARY, VPERF_ARM64_WORKLOAD});
#else
      return Error{"this build has no arm64 vperf (configured without aarch64-linux-gnu-g++: scripts/install-deps.sh installs it)"};
#endif
    } else {
      argv.insert(argv.end(), {VPERF_BINARY, VPERF_WORKLOAD});
    }
    for (const std::filesystem::path& file : files) argv.push_back(file.string());
    ProgramResult added = run_program(argv, env);
    if (added.exit_code != 0) return Error{"scripts/test-guest.sh add-vperf failed: " + tail(added.err + added.out, 3)};
  }
  std::unique_ptr<RunningGuest> guest(new RunningGuest(dir));
  if (patches_kernel_text) env["VPERF_GUEST_TCG"] = "single";
  if (arm64.icount_shift) env["VPERF_GUEST_ICOUNT"] = std::to_string(*arm64.icount_shift);
  if (!arm64.pmu) env["VPERF_GUEST_PMU"] = "off";
  ProgramResult r = run_program({"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", "boot", dir.string()}, env);
  if (r.exit_code != 0) return Error{"scripts/test-guest.sh boot failed: " + tail(r.err + r.out, 3)};
  return guest;
}

RunningGuest::~RunningGuest() {
  run_program({"bash", std::string(VPERF_SOURCE_DIR) + "/scripts/test-guest.sh", "stop", dir_.string()});
}

pid_t RunningGuest::qemu_pid() const { return static_cast<pid_t>(std::stol("0" + first_line(dir_ / "qemu.pid"))); }

Result<GuestCommandResult> run_in_guest(const RunningGuest& guest, const std::string& command, std::chrono::seconds limit) {
  VPERF_TRY(std::unique_ptr<guest::QgaSocketAgent> agent, guest::QgaSocketAgent::connect(guest.qga()));
  VPERF_TRY(boost::json::value started,
            agent->command("guest-exec", {{"path", "/bin/sh"}, {"arg", boost::json::array{"-c", command}}, {"capture-output", true}}));
  if (!started.is_object() || !started.as_object().contains("pid")) return Error{"guest-exec gave no pid for: " + command};
  const boost::json::value pid = started.as_object().at("pid");
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // The agent reports the end only when asked: poll its status (the command's own readiness).
  while (std::chrono::steady_clock::now() < deadline) {
    VPERF_TRY(boost::json::value status, agent->command("guest-exec-status", {{"pid", pid}}));
    const boost::json::object& o = status.as_object();
    if (o.at("exited").as_bool()) {
      GuestCommandResult result;
      if (const boost::json::value* code = o.if_contains("exitcode")) result.exit_code = static_cast<int>(code->to_number<int64_t>());
      for (const auto& [key, text] : {std::pair<const char*, std::string*>{"out-data", &result.out}, {"err-data", &result.err}})
        if (const boost::json::value* data = o.if_contains(key)) {
          VPERF_TRY(std::string decoded, guest::decode_base64(data->as_string()));
          *text = std::move(decoded);
        }
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Error{"the guest command did not end within " + std::to_string(limit.count()) + " s: " + command};
}

std::map<std::string, double> guest_symbol_shares(const std::string& report) {
  std::map<std::string, double> out;
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) {
    size_t marker = line.find("[g] ");
    if (line.empty() || line[0] == '#' || marker == std::string::npos) continue;
    out[line.substr(marker + 4)] += std::stod(line);
  }
  return out;
}

std::string idle_and_dd_share_problems(const std::string& report) {
  std::map<std::string, double> shares = guest_symbol_shares(report);
  double busy = 0;
  for (const auto& [name, share] : shares) busy += name == "native_safe_halt" ? 0.0 : share;
  std::string problems;
  if (shares["native_safe_halt"] <= 20.0) problems += "native_safe_halt at most 20%; ";
  if (busy <= 30.0) problems += "the guest kernel outside native_safe_halt at most 30%; ";
  if (clear_user_share(shares) <= 5.0) problems += "clear_user at most 5%; ";
  return problems;
}

double clear_user_share(const std::map<std::string, double>& shares) {
  double sum = 0;
  for (const char* name : {"clear_user_rep_good", "clear_user_erms", "clear_user_original", "__clear_user"})
    if (auto it = shares.find(name); it != shares.end()) sum += it->second;
  return sum;
}

std::string guest_share_summary(const std::string& report) {
  std::map<std::string, double> shares = guest_symbol_shares(report);
  // perf's "# Samples: 1K of event 'vcpu-clock'" ("376  of event" below 1000): the count as
  // the report rounds it.
  std::string samples = "?";
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("# Samples: ")) {
      std::istringstream count(line.substr(11));
      count >> samples;
    }
  char text[160];
  std::snprintf(text, sizeof text, "native_safe_halt %.2f%%, clear_user %.2f%%, read_zero %.2f%%", shares["native_safe_halt"],
                clear_user_share(shares), shares["read_zero"]);
  std::string summary = "guest shares of " + samples + " samples: " + text;
  // Where the rest went: what a share short of its usual value was spent on instead.
  std::string others;
  for (const auto& [name, share] : shares)
    if (share >= 1.0 && name != "native_safe_halt" && name != "read_zero" && !name.starts_with("clear_user") && name != "__clear_user") {
      std::snprintf(text, sizeof text, "%s %.2f%%", name.c_str(), share);
      others += (others.empty() ? "" : ", ") + std::string(text);
    }
  return others.empty() ? summary : summary + "; others of 1% or more: " + others;
}

size_t recorded_samples(const std::string& record_summary) {
  const size_t at = record_summary.find(" s: ");
  return at == std::string::npos ? 0 : std::stoul(record_summary.substr(at + 4));
}

Result<void> write_guest_perf_data(const std::filesystem::path& path, const GuestPerfData& content) {
  data::EventAttrEntry entry;
  std::memset(&entry.attr, 0, sizeof entry.attr);
  entry.attr.size = sizeof entry.attr;
  entry.attr.type = PERF_TYPE_HARDWARE;
  entry.attr.config = PERF_COUNT_HW_CPU_CYCLES;
  entry.attr.sample_period = 1000;
  entry.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  if (content.callchains) entry.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  entry.attr.exclude_host = 1;  // perf kvm record: the guest only
  entry.attr.sample_id_all = 1;
  entry.attr.mmap = entry.attr.comm = entry.attr.task = 1;
  entry.name = "cycles";
  const data::SampleFormat format = data::SampleFormat::from_attr(entry.attr);
  Result<data::PerfDataWriter> writer = data::PerfDataWriter::create_file(path, {entry});
  if (!writer) return writer.error();

  uint64_t time = 1000000;
  auto write = [&](uint32_t type, uint16_t misc, data::RecordBody body, pid_t pid, pid_t tid) -> Result<void> {
    data::Record r;
    r.type = type;
    r.misc = misc;
    r.body = std::move(body);
    r.sample_id.pid = static_cast<uint32_t>(pid);
    r.sample_id.tid = static_cast<uint32_t>(tid);
    r.sample_id.time = time += 1000;
    return writer->write(data::build_record(r, &format));
  };
  for (const GuestPerfData::GuestMaps& maps : content.guest_maps) {
    auto records = data::synthesize_guest_kernel_maps(maps.kallsyms, maps.modules, maps.machine_pid, format);
    if (!records) return records.error();
    for (const data::RecordBytes& bytes : *records)
      VPERF_TRY(writer->write(bytes));
  }
  for (const GuestPerfData::Thread& t : content.threads)
    VPERF_TRY(write(PERF_RECORD_COMM, 0, data::CommRecord{static_cast<uint32_t>(t.pid), static_cast<uint32_t>(t.tid), t.comm},
                    t.pid, t.tid));
  for (const GuestSample& s : content.samples) {
    data::Sample sample;
    sample.ip = s.ip;
    sample.period = 1000;
    sample.callchain = s.callchain;
    VPERF_TRY(write(PERF_RECORD_SAMPLE, s.cpumode, sample, s.vmm_pid, s.vcpu_tid));
  }
  VPERF_TRY(writer->flush_round());
  data::HeaderFeatures features;
  features.hostname = "vperf-test";
  features.osrelease = "6.1.0";
  features.arch = "x86_64";
  features.nr_cpus_online = features.nr_cpus_available = 2;
  return writer->finish(features);
}

namespace {
bool libvirt_answers() { return run_program({"virsh", "-c", "qemu:///system", "version"}).exit_code == 0; }

// libvirtd in a mount namespace of its own where /dev/kvm is the node udev would have made
// (group kvm, rw for the group), on a tmpfs of that namespace; everything else is the host's.
// Without udev (these machines) the host's /dev/kvm stays root's 0600, and libvirt 9.0 then
// sees KVM two ways: its QEMU probe runs as libvirt-qemu with CAP_DAC_OVERRIDE and finds KVM
// (caps flag "kvm"), while virQEMUCapsIsValid checks /dev/kvm as libvirt-qemu without it and
// finds none ("KVM was enabled when probing ..., but it is not available now"), so every
// lookup threw the capabilities away and probed QEMU again: ~4 s each, ~90 s of every test.
// With the node the two agree, and the cache in /var/cache/libvirt holds. If any step fails
// libvirtd starts as before (slow, not wrong).
constexpr const char* kStartLibvirtd = R"(
if [ -c /dev/kvm ] && d=$(mktemp -d /tmp/vperf-test-kvm.XXXXXX); then
  if mount -t tmpfs -o size=4k,mode=0700 vperf-test-kvm "$d"; then
    cp -a /dev/kvm "$d/kvm" && chgrp kvm "$d/kvm" && chmod g+rw "$d/kvm" && mount --bind "$d/kvm" /dev/kvm
    umount "$d"
  fi
  rmdir "$d"
fi
exec libvirtd -d)";
}  // namespace

Result<std::unique_ptr<LibvirtDaemons>> LibvirtDaemons::ensure() {
  ScopedFd lock(::open("/tmp/vperf-test-libvirtd.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) return Error::from_errno("lock /tmp/vperf-test-libvirtd.lock");
  if (libvirt_answers()) return std::unique_ptr<LibvirtDaemons>(new LibvirtDaemons(std::move(lock), false));
  run_program({"virtlogd", "-d"});
  // Slave propagation: the host's later mounts reach the daemon, its /dev/kvm stays its own.
  run_program({"unshare", "--mount", "--propagation", "slave", "sh", "-c", kStartLibvirtd});
  std::unique_ptr<LibvirtDaemons> started(new LibvirtDaemons(std::move(lock), true));
  for (int i = 0; i < 150 && !libvirt_answers(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!libvirt_answers()) return Error{"libvirtd did not start"};
  return started;
}

LibvirtDaemons::~LibvirtDaemons() {
  if (!started_) return;
  // Gone before the lock is let go: the next test starts its own.
  run_program({"sh", "-c",
               "p=\"$(cat /run/libvirtd.pid 2>/dev/null) $(cat /run/virtlogd.pid 2>/dev/null)\"; kill $p 2>/dev/null; "
               "for i in $(seq 50); do kill -0 $p 2>/dev/null || break; sleep 0.1; done"});
}

Result<std::unique_ptr<TransientDomain>> TransientDomain::create(const GuestRig& rig, const std::filesystem::path& dir,
                                                                 std::string name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir / "sock", ec);
  // QEMU runs as libvirt's user: it reads the guest's files and creates the extra QMP socket.
  for (fs::path p = dir; p.has_relative_path() && p.string().starts_with("/tmp/"); p = p.parent_path()) ::chmod(p.c_str(), 0755);
  ::chmod((dir / "sock").c_str(), 0777);
  fs::copy_file(rig.dir / "vmlinuz", dir / "vmlinuz", fs::copy_options::overwrite_existing, ec);
  fs::copy_file(rig.dir / "initramfs.cpio.gz", dir / "initramfs.cpio.gz", fs::copy_options::overwrite_existing, ec);
  if (ec) return Error{"cannot copy the rig's guest into " + dir.string() + ": " + ec.message()};
  std::unique_ptr<TransientDomain> domain(new TransientDomain(dir, std::move(name)));
  const fs::path xml = dir / "domain.xml";
  std::ofstream(xml) << "<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'><name>" << domain->name_
                     << "</name><memory unit='MiB'>512</memory><vcpu>2</vcpu>"
                     << "<os><type arch='x86_64' machine='pc'>hvm</type><kernel>" << (dir / "vmlinuz").string() << "</kernel><initrd>"
                     << (dir / "initramfs.cpio.gz").string()
                     << "</initrd><cmdline>console=ttyS0 panic=-1 quiet</cmdline></os><on_reboot>destroy</on_reboot>"
                     // The guest's init keeps a shell on ttyS0: without a serial port it would end.
                     << "<devices><serial type='file'><source path='" << (dir / "serial.log").string()
                     << "'/></serial><controller type='virtio-serial'/><channel type='unix'>"
                     << "<target type='virtio' name='org.qemu.guest_agent.0'/></channel></devices>"
                     << "<qemu:commandline><qemu:arg value='-qmp'/><qemu:arg value='unix:" << domain->qmp_socket().string()
                     << ",server=on,wait=off'/></qemu:commandline></domain>";
  ProgramResult created = run_program({"virsh", "-c", "qemu:///system", "create", xml.string()});
  if (created.exit_code != 0) {
    domain->name_.clear();  // nothing to destroy
    return Error{"virsh create failed: " + created.err};
  }
  // Booted when the agent answers (TCG: 10-30 s).
  for (int i = 0; i < 240; ++i) {
    if (run_program({"virsh", "-c", "qemu:///system", "qemu-agent-command", domain->name_, "{\"execute\":\"guest-ping\"}"}).exit_code == 0)
      return domain;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return Error{"the domain's guest agent did not answer within 120 s (console: " + (dir / "serial.log").string() + ")"};
}

TransientDomain::~TransientDomain() {
  if (!name_.empty()) run_program({"virsh", "-c", "qemu:///system", "destroy", name_});
}

std::string TransientDomain::vmm_pid() const {
  std::string pid;
  std::ifstream("/run/libvirt/qemu/" + name_ + ".pid") >> pid;
  return pid;
}

}  // namespace vperf::test
