#include "guest/recording/monitor_session.h"

#include <linux/perf_event.h>

#include <fstream>

#include "core/files.h"
#include "data/perf_data_writer.h"
#include "data/perf_record.h"
#include "data/synthesize.h"
#include "events/record_attr.h"
#include "perf/stop_signals.h"
#include "session/record_sink.h"

namespace vperf::guest {

// The session's loop, clock and sink, which every recorder waits in and writes through.
using session::Next;
using session::RecordSink;
using session::RunClock;
using session::RunLoop;

namespace {

namespace fs = std::filesystem;
using std::chrono::nanoseconds;

// A readable file every this many ticks, as record's rounds.
constexpr uint64_t kTicksPerRound = 100;

std::string comm_of(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

// The COMM of the VMM and of each vCPU thread, so readers name the samples' tasks.
void write_host_comms(RecordSink& sink, const data::SampleFormat& format, const MonitorTarget& target) {
  auto comm = [&](pid_t tid) {
    data::Record r;
    r.type = PERF_RECORD_COMM;
    r.body = data::CommRecord{static_cast<uint32_t>(target.vmm), static_cast<uint32_t>(tid), comm_of(target.vmm, tid)};
    r.sample_id.pid = static_cast<uint32_t>(target.vmm);
    r.sample_id.tid = static_cast<uint32_t>(tid);
    r.sample_id.id = 1;
    sink.write(r, format);
  };
  comm(target.vmm);
  for (const guest::VcpuThread& v : target.vcpus) comm(v.thread_id);
}

// The event id of a sample whose stack `method` made (ids: 1 vcpu-clock, 2.. the methods).
uint64_t event_id_of(const std::vector<guest::StackMethod>& methods, guest::StackMethod method) {
  for (size_t i = 0; i < methods.size(); ++i)
    if (methods[i] == method) return i + 2;
  return 1;
}

// One vCPU's sample: cpumode GUEST_KERNEL (CPL 0) or GUEST_USER, the VMM's pid, the vCPU
// thread's tid, the vCPU as cpu; with stacks, the guest kernel's call chain.
Result<data::Record> guest_sample(const guest::VcpuSample& s, const MonitorTarget& target, uint64_t period) {
  const bool in_kernel = s.registers.in_kernel();
  data::Sample sample;
  sample.ip = s.registers.rip;
  sample.period = period;
  data::Record r;
  r.type = PERF_RECORD_SAMPLE;
  r.misc = in_kernel ? PERF_RECORD_MISC_GUEST_KERNEL : PERF_RECORD_MISC_GUEST_USER;
  r.sample_id.id = 1;
  if (target.stacks) {
    std::optional<guest::KernelStack> stack;
    if (in_kernel) {
      Result<std::optional<guest::KernelStack>> read = target.stacks->read(s.registers);
      if (!read) return read.error();
      stack = std::move(read).value();
    }
    sample.callchain.push_back(in_kernel ? PERF_CONTEXT_GUEST_KERNEL : PERF_CONTEXT_GUEST_USER);
    if (stack) {
      sample.callchain.insert(sample.callchain.end(), stack->frames.begin(), stack->frames.end());
      r.sample_id.id = event_id_of(target.methods, stack->method);
    } else {
      sample.callchain.push_back(s.registers.rip);
    }
  }
  r.body = std::move(sample);
  r.sample_id.pid = static_cast<uint32_t>(target.vmm);
  r.sample_id.tid = static_cast<uint32_t>(s.thread_id);
  r.sample_id.time = s.time_ns;
  r.sample_id.cpu = static_cast<uint32_t>(s.registers.index);
  return r;
}

class MonitorRecording {
 public:
  MonitorRecording(const MonitorRecordRequest& request, MonitorTarget& target, RunClock& clock, RecordSink& sink,
                   const data::SampleFormat& format, uint64_t period)
      : r_(request), target_(target), clock_(clock), sink_(sink), format_(format), period_(period) {}

  MonitorRecordResult run(const perf::StopSignals& signals, std::optional<perf::Workload>& workload) {
    MonitorRecordResult result;
    guest::VcpuSampler sampler(*target_.monitor, target_.vcpus, r_.pause);
    if (Result<void> ok = sampler.check_can_pause(); !ok) {
      result.stats = ok.error();
      return result;
    }
    RunLoop loop(clock_);
    const nanoseconds start = clock_.now();
    if (r_.duration_seconds) loop.at(start + nanoseconds(static_cast<int64_t>(*r_.duration_seconds * 1e9)), [] { return Next::stop; });
    loop.watch_signals(signals, [&workload](const std::vector<perf::StopSignal>& taken) {
      if (workload) workload->forward(taken);
      return Next::stop;
    });
    if (workload)
      loop.watch_workload(*workload, [&result](const perf::WorkloadExit& exit) {
        result.exit = exit;
        return Next::stop;
      });
    const nanoseconds interval(static_cast<int64_t>(1e9 / r_.frequency));
    nanoseconds due = start;
    RunLoop::OnTime tick = [&]() {
      const nanoseconds now = clock_.now();
      due = std::max(due + interval, now);  // never bunch up ticks after a slow answer
      Result<bool> more = sampler.tick(static_cast<uint64_t>(now.count()), [this](std::span<const guest::VcpuSample> t) { return write_tick(t); });
      if (!more) failure_ = more.error();
      if (!more || !*more) return Next::stop;
      loop.at(due, tick);
      return Next::keep_going;
    };
    loop.at(start, tick);
    if (Result<bool> ran = loop.run(); !ran) failure_ = ran.error();
    sampler.stats().seconds = std::chrono::duration<double>(clock_.now() - start).count();
    result.stats = failure_ ? Result<guest::SamplerStats>(*failure_) : Result<guest::SamplerStats>(sampler.stats());
    return result;
  }

 private:
  bool write_tick(std::span<const guest::VcpuSample> tick) {
    for (const guest::VcpuSample& s : tick) {
      Result<data::Record> sample = guest_sample(s, target_, period_);
      if (!sample) {
        failure_ = sample.error();  // a stack dump the monitor failed
        return false;
      }
      sink_.write(*sample, format_);
    }
    if (++since_round_ == kTicksPerRound) {
      sink_.flush_round();
      since_round_ = 0;
    }
    sink_.check();
    return true;
  }

  const MonitorRecordRequest& r_;
  MonitorTarget& target_;
  RunClock& clock_;
  RecordSink& sink_;
  const data::SampleFormat& format_;
  uint64_t period_;
  uint64_t since_round_ = 0;
  std::optional<Error> failure_;
};

}  // namespace

std::vector<data::EventAttrEntry> monitor_events(double frequency, const std::vector<guest::StackMethod>& methods, bool stacks) {
  events::ResolvedEvent vcpu_clock;
  vcpu_clock.name = "cpu-clock";
  vcpu_clock.pmu = "software";
  vcpu_clock.type = PERF_TYPE_SOFTWARE;
  vcpu_clock.config = PERF_COUNT_SW_CPU_CLOCK;
  events::SyntheticSampleOptions options;
  options.period = static_cast<uint64_t>(1e9 / frequency);  // ns of vCPU time per sample
  options.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  if (stacks) options.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_IDENTIFIER;
  options.scope = events::MachineScope{.host = false, .guest = true};
  std::vector<data::EventAttrEntry> events(1 + methods.size());
  for (size_t i = 0; i < events.size(); ++i) {
    options.tracking = i == 0;
    events[i].attr = events::build_synthetic_sample_attr(vcpu_clock, options);
    events[i].name = i == 0 ? "vcpu-clock" : "vcpu-clock." + std::string(guest::method_name(methods[i - 1]));
    if (stacks) events[i].ids = {i + 1};
  }
  return events;
}

MonitorRecordResult record_through_monitor(const MonitorRecordRequest& request, MonitorTarget& target, RunClock& clock) {
  const std::vector<data::EventAttrEntry> events = monitor_events(request.frequency, target.methods, target.stacks != nullptr);
  const data::SampleFormat format = data::SampleFormat::from_attr(events.front().attr);
  if (Result<void> moved = move_aside_to_old(request.output); !moved)
    throw UserError("cannot write the recording to " + request.output + ": " + moved.error().describe(),
                    "give -o a file name");
  Result<data::PerfDataWriter> writer = data::PerfDataWriter::create_file(request.output, events);
  if (!writer) throw UserError("cannot create " + request.output + ": " + writer.error().describe(), "");
  RecordSink sink(writer.value(), {format}, request.output);
  write_host_comms(sink, format, target);
  // perf kvm's guest maps, for the default guest (machine pid 0), so perf kvm report reads them.
  if (target.guest_proc)
    if (auto maps = data::synthesize_guest_kernel_maps(*target.guest_proc / "kallsyms", *target.guest_proc / "modules", 0, format);
        maps)
      sink.write_all(*maps);
  sink.check();

  Result<perf::StopSignals> signals = perf::StopSignals::install();
  if (!signals) throw UserError("cannot install signal handlers: " + signals.error().describe(), "");
  std::optional<perf::Workload> workload;
  if (!request.command.empty()) {
    Result<perf::Workload> w = perf::Workload::prepare(request.command);
    if (!w) throw UserError(w.error().describe(), "");
    workload.emplace(std::move(w).value());
    if (Result<void> started = workload->start(); !started) throw UserError(started.error().describe(), "check the command");
  }
  MonitorRecordResult result = MonitorRecording(request, target, clock, sink, format, events.front().attr.sample_period)
                                   .run(*signals, workload);
  sink.flush_round();
  sink.check();
  if (Result<void> ok = writer->finish(data::this_machine_features(request.cmdline)); !ok)
    throw UserError("cannot finish " + request.output + ": " + ok.error().describe(), "");
  return result;
}

}  // namespace vperf::guest
