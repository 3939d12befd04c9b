#include "kvm/kvm_recording.h"

#include <linux/kvm.h>
#include <linux/perf_event.h>

#include <variant>

#include "data/perf_data_format.h"
#include "kvm/kvm_tracepoints.h"
#include "symbols/machines.h"

namespace vperf::kvm {

void KvmSampleDecoder::load_file_tracing_data(const data::PerfDataReader& reader, std::ostream& warnings) {
  for (const data::RawFeature& feature : reader.features().other)
    if (feature.feature == data::kFeatTracingData) load_tracing_data(feature.bytes, warnings);
}

void KvmSampleDecoder::load_tracing_data(std::span<const uint8_t> bytes, std::ostream& warnings) {
  Result<report::TracepointDecoder> decoder = report::TracepointDecoder::parse(bytes);
  if (!decoder) {
    warnings << "vperf: warning: tracing data ignored: " << decoder.error().describe() << '\n';
    return;
  }
  decoder_.emplace(std::move(decoder).value());
  kinds_.clear();  // names may only now be known (pipe mode)
}

std::optional<KvmEventKind> KvmSampleDecoder::kind(const data::EventAttrEntry& entry) {
  if (entry.attr.type != PERF_TYPE_TRACEPOINT) return std::nullopt;
  auto cached = kinds_.find(entry.attr.config);
  if (cached != kinds_.end()) return cached->second;
  std::optional<std::string> name = entry.name.empty() ? std::nullopt : std::optional<std::string>(entry.name);
  if (!name && decoder_) name = decoder_->event_name(entry.attr.config);
  std::optional<KvmEventKind> kind = name ? kvm_event_kind(*name) : std::nullopt;
  if (decoder_ || name) kinds_[entry.attr.config] = kind;
  if (kind) seen_kinds_.insert(*kind);
  return kind;
}

Result<std::optional<KvmEvent>> KvmSampleDecoder::decode(const report::ResolvedSample& s, KvmEventKind kind,
                                                         std::string_view cpuid) {
  if (!decoder_) {
    ++undecodable_;
    return std::optional<KvmEvent>();
  }
  const uint64_t id = s.view.attr->attr.config;
  std::span<const uint8_t> raw = s.sample.raw;
  auto field = [&](std::string_view name) { return decoder_->field_value(id, raw, name); };
  KvmEvent e;
  e.kind = kind;
  e.pid = s.pid;
  e.tid = s.tid;
  e.time = s.time;
  bool ok = true;
  auto need = [&](std::string_view name) -> uint64_t {
    std::optional<uint64_t> v = field(name);
    if (!v) ok = false;
    return v.value_or(0);
  };
  switch (kind) {
    case KvmEventKind::Exit: {
      e.reason = need("exit_reason");
      e.vcpu = static_cast<uint32_t>(field("vcpu_id").value_or(0));
      // The isa field (Linux 5.7+) says which table; perf 6.1 goes by the recording's CPU.
      if (std::optional<uint64_t> isa = field("isa"))
        e.isa = static_cast<KvmIsa>(*isa);
      else if (std::optional<KvmIsa> from_cpu = isa_from_cpuid(cpuid))
        e.isa = *from_cpu;
      else
        return Error{"cannot tell VMX from SVM exit reasons: kvm_exit has no isa field and the recording's CPU ('" +
                         std::string(cpuid) + "') is neither Intel nor AMD",
                     0, "vperf kvm stat knows x86 only"};
      break;
    }
    case KvmEventKind::Entry: e.vcpu = static_cast<uint32_t>(need("vcpu_id")); break;
    case KvmEventKind::UserspaceExit:
      e.reason = need("reason");
      e.error = static_cast<int64_t>(field("errno").value_or(0));
      break;
    case KvmEventKind::Pio:
      e.access = static_cast<uint32_t>(need("rw"));
      e.address = need("port");
      e.size = static_cast<uint32_t>(need("size"));
      break;
    case KvmEventKind::Mmio:
      e.access = static_cast<uint32_t>(need("type"));
      e.address = need("gpa");
      e.size = static_cast<uint32_t>(field("len").value_or(0));
      break;
    case KvmEventKind::Msr:
      e.access = static_cast<uint32_t>(need("write"));
      e.address = need("ecx");
      break;
    case KvmEventKind::Hypercall: e.address = need("nr"); break;
    case KvmEventKind::RunIoctl:
      // The kernel filter keeps only KVM_RUN; a recording made without it has them all.
      if (need("cmd") != KVM_RUN) return std::optional<KvmEvent>();
      break;
  }
  if (!ok) {
    ++undecodable_;
    return std::optional<KvmEvent>();
  }
  return std::optional<KvmEvent>(e);
}

Result<bool> analyse_kvm_recording(data::PerfDataReader& reader, KvmExitAnalysis& analysis, KvmPass& pass,
                                   std::mutex* lock, std::ostream& warnings) {
  auto guard = [lock] { return lock ? std::unique_lock<std::mutex>(*lock) : std::unique_lock<std::mutex>(); };
  KvmSampleDecoder decoder;
  decoder.load_file_tracing_data(reader, warnings);
  symbols::Machines machines{symbols::SymbolConfig{}};
  report::SampleReplay replay(machines, report::ReplayOptions{.ordered = true, .resolve_chain = false});
  replay.set_record_observer([&](const data::RecordView& view) {
    if (const auto* tracing = std::get_if<data::TracingDataRecord>(&view.record.body))
      decoder.load_tracing_data(tracing->data, warnings);
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
    return true;
  }
  for (const std::string& warning : reader.warnings()) warnings << "vperf: warning: " << warning << '\n';
  // Events the recording has but no sample of: their attrs still say they were recorded.
  for (const data::EventAttrEntry& entry : reader.attrs()) (void)decoder.kind(entry);
  pass.kvm_events_recorded = decoder.saw_any_kind();
  pass.run_entries_recorded = decoder.saw_kind(KvmEventKind::RunIoctl);
  pass.userspace_exits_recorded = decoder.saw_kind(KvmEventKind::UserspaceExit);
  pass.undecodable = decoder.undecodable();
  return true;
}

}  // namespace vperf::kvm
