#include "report/sample_stacks.h"

#include <linux/perf_event.h>

#include <variant>

namespace vperf::report {

namespace {

FrameKind kind_of(uint8_t cpumode) {
  switch (cpumode) {
    case PERF_RECORD_MISC_KERNEL:
      return FrameKind::Kernel;
    case PERF_RECORD_MISC_GUEST_KERNEL:
      return FrameKind::GuestKernel;
    case PERF_RECORD_MISC_GUEST_USER:
      return FrameKind::GuestUser;
    default:
      return FrameKind::User;
  }
}

// PERF_CONTEXT_* markers in a callchain: the cpumode of the addresses after them.
std::optional<uint8_t> context_mode(uint64_t entry) {
  switch (entry) {
    case PERF_CONTEXT_HV:
      return PERF_RECORD_MISC_HYPERVISOR;
    case PERF_CONTEXT_KERNEL:
      return PERF_RECORD_MISC_KERNEL;
    case PERF_CONTEXT_USER:
      return PERF_RECORD_MISC_USER;
    case PERF_CONTEXT_GUEST_KERNEL:
      return PERF_RECORD_MISC_GUEST_KERNEL;
    case PERF_CONTEXT_GUEST_USER:
      return PERF_RECORD_MISC_GUEST_USER;
    default:
      return std::nullopt;
  }
}

// A frame as `perf script | stackcollapse-perf.pl --kernel` names it: the symbol, or the
// dso's file name in brackets when only the dso is known, or "[unknown]". Host frames count
// as kernel frames by stackcollapse-perf.pl's rule, from the dso: a "[bracketed]" dso other
// than [unknown] (the kernel, modules, and also [vdso]) or a vmlinux.
Frame frame_of(const symbols::ResolvedAddress& at, uint8_t mode) {
  std::string_view dso = at.dso_name();
  std::string name;
  if (at.symbol) {
    name = std::string(at.symbol_name());
  } else if (at.map && dso != "[unknown]") {
    std::string_view base = dso.substr(dso.rfind('/') == std::string_view::npos ? 0 : dso.rfind('/') + 1);
    name = "[" + std::string(base) + "]";
  } else {
    name = "[unknown]";
  }
  FrameKind kind = kind_of(mode);
  if (kind == FrameKind::User || kind == FrameKind::Kernel) {
    bool kernel_dso = (dso.starts_with("[") && dso.find("unknown") == std::string_view::npos) || dso.ends_with("vmlinux");
    kind = kernel_dso ? FrameKind::Kernel : FrameKind::User;
  }
  return {std::move(name), kind};
}

class Replay {
 public:
  explicit Replay(symbols::Machines& machines) : machines_(machines) {}

  void on_record(const data::Record& record) {
    uint8_t cpumode = record.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (const auto* m = std::get_if<data::MmapRecord>(&record.body)) {
      process_mmap(*m, cpumode, std::nullopt);
    } else if (const auto* m2 = std::get_if<data::Mmap2Record>(&record.body)) {
      process_mmap(*m2, cpumode, m2->prot);
    } else if (const auto* c = std::get_if<data::CommRecord>(&record.body)) {
      machine_for(cpumode, static_cast<pid_t>(c->pid))
          .process_comm(static_cast<pid_t>(c->pid), static_cast<pid_t>(c->tid), c->comm,
                        (record.misc & PERF_RECORD_MISC_COMM_EXEC) != 0);
    } else if (const auto* t = std::get_if<data::TaskRecord>(&record.body)) {
      symbols::Machine& machine = machine_for(cpumode, static_cast<pid_t>(t->pid));
      if (record.type == PERF_RECORD_FORK)
        machine.process_fork(static_cast<pid_t>(t->pid), static_cast<pid_t>(t->ppid), static_cast<pid_t>(t->tid),
                             static_cast<pid_t>(t->ptid));
      else
        machine.process_exit(static_cast<pid_t>(t->pid), static_cast<pid_t>(t->tid));
    } else if (const auto* s = std::get_if<data::Sample>(&record.body)) {
      add_sample(record, *s, cpumode);
    }
  }

  SampleStacks result;

 private:
  // MMAP and MMAP2 share these fields; MMAP has no prot (perf records only code maps then).
  template <typename MmapLike>
  void process_mmap(const MmapLike& m, uint8_t cpumode, std::optional<uint32_t> prot) {
    symbols::MmapEvent e;
    e.pid = static_cast<pid_t>(m.pid);
    e.tid = static_cast<pid_t>(m.tid);
    e.start = m.addr;
    e.len = m.len;
    e.pgoff = m.pgoff;
    if (prot) e.prot = *prot;
    e.filename = m.filename;
    e.cpumode = cpumode;
    machine_for(cpumode, e.pid).process_mmap(e);
  }

  symbols::Machine& machine_for(uint8_t cpumode, pid_t pid) {
    if (symbols::Machine* m = machines_.find_for_cpumode(cpumode, pid)) return *m;
    return machines_.host();
  }

  void add_sample(const data::Record& record, const data::Sample& sample, uint8_t cpumode) {
    pid_t pid = static_cast<pid_t>(record.sample_id.pid);
    pid_t tid = static_cast<pid_t>(record.sample_id.tid);
    Stack leaf_first;
    auto push = [&](uint8_t mode, uint64_t ip) {
      symbols::ResolvedAddress at = machines_.resolve(pid, tid, mode, ip);
      leaf_first.push_back(frame_of(at, mode));
    };
    if (sample.callchain.empty()) {
      push(cpumode, sample.ip);
    } else {
      uint8_t mode = cpumode;
      for (uint64_t entry : sample.callchain) {
        if (std::optional<uint8_t> switched = context_mode(entry)) {
          mode = *switched;
          continue;
        }
        if (entry >= PERF_CONTEXT_MAX) continue;  // another marker
        push(mode, entry);
      }
    }
    std::string comm;
    if (const symbols::Machine* machine = machines_.find_for_cpumode(cpumode, pid))
      if (const symbols::Thread* thread = machine->find_thread(tid)) comm = thread->comm;
    if (comm.empty()) comm = ":" + std::to_string(tid);
    Stack stack;
    stack.reserve(leaf_first.size() + 1);
    stack.push_back(process_frame(comm));
    stack.insert(stack.end(), leaf_first.rbegin(), leaf_first.rend());
    // stackcollapse-perf.pl adds up the period perf script prints, 1 when there is none.
    result.profile.add(stack, sample.period ? sample.period : 1);
    ++result.samples;
  }

  symbols::Machines& machines_;
};

}  // namespace

Result<SampleStacks> sample_stacks(data::PerfDataReader& reader, symbols::Machines& machines) {
  Replay replay(machines);
  Result<data::ReadStats> stats = reader.read([&](const data::RecordView& view) {
    replay.on_record(view.record);
    return true;
  });
  if (!stats) return stats.error();
  replay.result.warnings = reader.warnings();
  return std::move(replay.result);
}

}  // namespace vperf::report
