#include "kvm_stat/kvm_recording.h"

#include <linux/kvm.h>
#include <linux/perf_event.h>

#include <variant>

#include "kvm_stat/kvm_tracepoints.h"
#include "symbols/machines.h"

namespace vperf::kvm {

namespace {

// The fields decode() reads of each kind, slot by slot.
std::array<std::string_view, 3> field_names(KvmEventKind kind) {
  switch (kind) {
    case KvmEventKind::Exit: return {"exit_reason", "vcpu_id", "isa"};
    case KvmEventKind::Entry: return {"vcpu_id"};
    case KvmEventKind::UserspaceExit: return {"reason", "errno"};
    case KvmEventKind::Pio: return {"rw", "port", "size"};
    case KvmEventKind::Mmio: return {"type", "gpa", "len"};
    case KvmEventKind::Msr: return {"write", "ecx"};
    case KvmEventKind::Hypercall: return {"nr"};
    case KvmEventKind::RunIoctl: return {"cmd"};
  }
  return {};
}

}  // namespace

KvmSampleDecoder::KvmSampleDecoder(std::ostream& warnings)
    : tracing_([&warnings](const std::string& warning) { warnings << "vperf: warning: " << warning << '\n'; }) {}

void KvmSampleDecoder::load_file_tracing_data(const data::PerfDataReader& reader) {
  if (tracing_.load_file(reader)) forget_decoded_formats();
}

void KvmSampleDecoder::load_tracing_data(const data::Record& record) {
  if (tracing_.load_record(record)) forget_decoded_formats();
}

void KvmSampleDecoder::forget_decoded_formats() {
  kinds_.clear();  // names may only now be known (pipe mode)
  fields_.clear();  // their handles belonged to the previous decoder
}

const KvmSampleDecoder::EventFields& KvmSampleDecoder::fields_of(uint64_t id, KvmEventKind kind) {
  auto [at, added] = fields_.try_emplace(id);
  if (added) {
    std::array<std::string_view, 3> names = field_names(kind);
    for (size_t slot = 0; slot < names.size(); ++slot)
      if (!names[slot].empty()) at->second[slot] = tracing_.decoder()->numeric_field(id, names[slot]);
  }
  return at->second;
}

std::optional<KvmEventKind> KvmSampleDecoder::kind(const data::EventAttrEntry& entry) {
  if (entry.attr.type != PERF_TYPE_TRACEPOINT) return std::nullopt;
  auto cached = kinds_.find(entry.attr.config);
  if (cached != kinds_.end()) return cached->second;
  std::optional<std::string> name = entry.name.empty() ? std::nullopt : std::optional<std::string>(entry.name);
  const tracing::TracepointDecoder* decoder = tracing_.decoder();
  if (!name && decoder) name = decoder->event_name(entry.attr.config);
  std::optional<KvmEventKind> kind = name ? kvm_event_kind(*name) : std::nullopt;
  if (decoder || name) kinds_[entry.attr.config] = kind;
  if (kind) seen_kinds_.insert(*kind);
  return kind;
}

Result<std::optional<KvmEvent>> KvmSampleDecoder::decode(const report::ResolvedSample& s, KvmEventKind kind,
                                                         std::string_view cpuid) {
  if (!tracing_.decoder()) {
    ++undecodable_;
    return std::optional<KvmEvent>();
  }
  const EventFields& fields = fields_of(s.view.attr->attr.config, kind);
  std::span<const uint8_t> raw = s.sample.raw;
  // The field in `slot` (field_names above), or nullopt when the format or the sample lacks it.
  auto field = [&](size_t slot) { return fields[slot] ? fields[slot]->read(raw) : std::nullopt; };
  KvmEvent e;
  e.kind = kind;
  e.pid = s.pid;
  e.tid = s.tid;
  e.time = s.time;
  bool ok = true;
  auto need = [&](size_t slot) -> uint64_t {
    std::optional<uint64_t> v = field(slot);
    if (!v) ok = false;
    return v.value_or(0);
  };
  switch (kind) {
    case KvmEventKind::Exit: {
      e.reason = need(0);                                         // exit_reason
      e.vcpu = static_cast<uint32_t>(field(1).value_or(0));  // vcpu_id
      // The isa field (Linux 5.7+) says which table; perf 6.1 goes by the recording's CPU.
      if (std::optional<uint64_t> isa = field(2))
        e.isa = static_cast<KvmIsa>(*isa);
      else if (std::optional<KvmIsa> from_cpu = isa_from_cpuid(cpuid))
        e.isa = *from_cpu;
      else
        return Error{"cannot tell VMX from SVM exit reasons: kvm_exit has no isa field and the recording's CPU ('" +
                         std::string(cpuid) + "') is neither Intel nor AMD",
                     0, "vperf kvm stat knows x86 only"};
      break;
    }
    case KvmEventKind::Entry: e.vcpu = static_cast<uint32_t>(need(0)); break;  // vcpu_id
    case KvmEventKind::UserspaceExit:
      e.reason = need(0);                                       // reason
      e.error = static_cast<int64_t>(field(1).value_or(0));  // errno
      break;
    case KvmEventKind::Pio:
      e.access = static_cast<uint32_t>(need(0));  // rw
      e.address = need(1);                        // port
      e.size = static_cast<uint32_t>(need(2));    // size
      break;
    case KvmEventKind::Mmio:
      e.access = static_cast<uint32_t>(need(0));                // type
      e.address = need(1);                                      // gpa
      e.size = static_cast<uint32_t>(field(2).value_or(0));  // len
      break;
    case KvmEventKind::Msr:
      e.access = static_cast<uint32_t>(need(0));  // write
      e.address = need(1);                        // ecx
      break;
    case KvmEventKind::Hypercall: e.address = need(0); break;  // nr
    case KvmEventKind::RunIoctl:
      // The kernel filter keeps only KVM_RUN; a recording made without it has them all.
      if (need(0) != KVM_RUN) return std::optional<KvmEvent>();  // cmd
      break;
  }
  if (!ok) {
    ++undecodable_;
    return std::optional<KvmEvent>();
  }
  return std::optional<KvmEvent>(e);
}

Result<void> analyse_kvm_recording(data::PerfDataReader& reader, KvmExitAnalysis& analysis, KvmPass& pass,
                                   std::mutex* lock, std::ostream& warnings) {
  auto guard = [lock] { return lock ? std::unique_lock<std::mutex>(*lock) : std::unique_lock<std::mutex>(); };
  KvmSampleDecoder decoder(warnings);
  decoder.load_file_tracing_data(reader);
  symbols::Machines machines{symbols::SymbolConfig{}};
  report::SampleReplay replay(machines, report::ReplayOptions{.ordered = true, .resolve_chain = false});
  replay.set_record_observer([&](const data::RecordView& view) {
    decoder.load_tracing_data(view.record);
    if (const auto* lost = std::get_if<data::LostRecord>(&view.record.body)) {
      std::unique_lock<std::mutex> held = guard();
      pass.lost += lost->lost;
    }
  });
  std::optional<Error> failed;
  Result<data::ReadStats> stats = replay.run(reader, [&](const report::ResolvedSample& s) {
    if (!s.view.attr) return true;
    std::optional<KvmEventKind> kind = decoder.kind(*s.view.attr);
    if (!kind) return true;
    Result<std::optional<KvmEvent>> event = decoder.decode(s, *kind, reader.features().cpuid);
    if (!event) {
      failed = event.error();
      return false;
    }
    if (!*event) return true;
    std::unique_lock<std::mutex> held = guard();
    analysis.add(**event);
    return true;
  });
  if (failed) return *failed;
  std::unique_lock<std::mutex> held = guard();
  if (!stats) {
    pass.unreadable = stats.error();
    return {};
  }
  for (const std::string& warning : reader.warnings()) warnings << "vperf: warning: " << warning << '\n';
  // Events the recording has but no sample of: their attrs still say they were recorded.
  for (const data::EventAttrEntry& entry : reader.attrs()) (void)decoder.kind(entry);
  pass.kvm_events_recorded = decoder.saw_any_kind();
  pass.run_entries_recorded = decoder.saw_kind(KvmEventKind::RunIoctl);
  pass.userspace_exits_recorded = decoder.saw_kind(KvmEventKind::UserspaceExit);
  pass.undecodable = decoder.undecodable();
  return {};
}

std::optional<Error> kvm_report_problem(const KvmPass& pass, const KvmExitAnalysis& analysis, const KvmReportInput& input,
                                        std::ostream& warnings) {
  if (!pass.kvm_events_recorded)
    return Error{input.file + " has no kvm tracepoint events", 0, "record them: " + input.record_hint};
  if (pass.undecodable)
    warnings << "vperf: warning: " << pass.undecodable
             << " kvm samples could not be decoded (no tracing data for their format)\n";
  if (analysis.events() == 0 && !input.domain.empty())
    return Error{input.file + " has no kvm events of domain " + input.domain + "'s VMM (pid " + input.pids + " now)", 0,
                 "a domain started again since the recording runs under another pid: give the recorded one with -p"};
  if (analysis.events() == 0)
    return Error{input.file + " has no kvm events" + (input.pids.empty() ? "" : " of pid(s) " + input.pids) +
                     ": no VM ran while it was recorded",
                 0, "record while a VM runs: " + input.record_hint};
  return std::nullopt;
}

}  // namespace vperf::kvm
