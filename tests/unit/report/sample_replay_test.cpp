// SampleReplay over a RecordSource held in memory (what a live session will be): the one
// callchain walk (markers to cpumodes, recorded frames, unknown markers), the interned profile it
// builds (frames, mappings, stacks), resolution remembered only until an address space changes,
// the event index each sample carries, and a replay read again per refresh with the histogram
// reset in between.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstring>
#include <string>
#include <vector>

#include "report/profile.h"
#include "report/record_source.h"
#include "report/report_hists.h"
#include "report/report_sort_keys.h"
#include "report/sample_replay.h"
#include "symbols/machines.h"

namespace vperf::report {
namespace {

constexpr uint32_t kPid = 42;
constexpr uint64_t kLibStart = 0x7f0000000000, kLibLen = 0x10000, kLibPgoff = 0x2000;

// Records handed out as they are, each with the event its index names; read() delivers what was
// queued since the last read, as a live session delivers one refresh's worth.
class InMemorySource final : public RecordSource {
 public:
  explicit InMemorySource(size_t events) : attrs_(events) {
    for (size_t i = 0; i < events; ++i) {
      std::memset(&attrs_[i].attr, 0, sizeof(perf_event_attr));
      attrs_[i].attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
      attrs_[i].name = "event" + std::to_string(i);
    }
  }

  void sample(size_t event, uint64_t ip, std::vector<uint64_t> callchain, uint64_t period = 100, uint32_t tid = kPid) {
    data::Record r;
    r.type = PERF_RECORD_SAMPLE;
    r.misc = PERF_RECORD_MISC_USER;
    data::Sample s;
    s.ip = ip;
    s.period = period;
    s.callchain = std::move(callchain);
    r.body = std::move(s);
    r.sample_id.pid = kPid;
    r.sample_id.tid = tid;
    queued_.push_back({std::move(r), event});
  }
  void mmap(uint64_t start, uint64_t len, uint64_t pgoff, std::string file) {
    data::Record r;
    r.type = PERF_RECORD_MMAP;
    r.misc = PERF_RECORD_MISC_USER;
    r.body = data::MmapRecord{kPid, kPid, start, len, pgoff, std::move(file)};
    queued_.push_back({std::move(r), data::kNoAttrIndex});
  }
  void comm(std::string name) {
    data::Record r;
    r.type = PERF_RECORD_COMM;
    r.body = data::CommRecord{kPid, kPid, std::move(name)};
    queued_.push_back({std::move(r), data::kNoAttrIndex});
  }

  const std::vector<data::EventAttrEntry>& attrs() const override { return attrs_; }
  Result<data::ReadStats> read(const data::RecordCallback& on_record, data::ReadOptions) override {
    data::ReadStats stats;
    std::vector<Queued> batch = std::move(queued_);
    queued_.clear();
    for (const Queued& q : batch) {
      const data::EventAttrEntry* attr = q.event == data::kNoAttrIndex ? nullptr : &attrs_[q.event];
      ++stats.records;
      if (!on_record(data::RecordView{q.record, {}, attr, 0, q.event})) break;
    }
    return stats;
  }
  const std::vector<std::string>& warnings() const override { return warnings_; }

 private:
  struct Queued {
    data::Record record;
    size_t event;
  };
  std::vector<data::EventAttrEntry> attrs_;
  std::vector<Queued> queued_;
  std::vector<std::string> warnings_;
};

struct Seen {
  size_t event;
  uint32_t stack;
  uint32_t ip_frame;
  uint32_t recorded_frames;
  uint32_t unknown_marker_at;
};

std::vector<Seen> replay_all(SampleReplay& replay, RecordSource& source) {
  std::vector<Seen> seen;
  Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& s) {
    seen.push_back({s.event, s.stack, s.ip_frame, s.recorded_frames, s.unknown_marker_at});
    return true;
  });
  EXPECT_TRUE(stats.ok());
  return seen;
}

TEST(SampleReplay, WalksTheCallchainIntoInternedFramesAndStacks) {
  InMemorySource source(2);
  source.comm("worker");
  source.mmap(kLibStart, kLibLen, kLibPgoff, "/nonexistent/libwork.so");
  const uint64_t kernel_ip = 0xffffffff81001000, leaf = kLibStart + 0x100, caller = kLibStart + 0x200;
  source.sample(0, leaf, {PERF_CONTEXT_KERNEL, kernel_ip, PERF_CONTEXT_USER, leaf, caller});
  source.sample(1, leaf, {PERF_CONTEXT_KERNEL, kernel_ip, PERF_CONTEXT_USER, leaf, caller});
  // The kernel ends some callchains with a marker perf does not know (-1).
  source.sample(1, leaf, {PERF_CONTEXT_USER, leaf, ~0ULL, caller});
  source.sample(0, leaf, {});

  symbols::Machines machines{symbols::SymbolConfig{}};
  SampleReplay replay(machines);
  std::vector<Seen> seen = replay_all(replay, source);
  const Profile& profile = replay.profile();
  ASSERT_EQ(seen.size(), 4u);

  EXPECT_EQ(seen[0].event, 0u);
  EXPECT_EQ(seen[1].event, 1u);
  // The same chain is the same stack, its addresses the same frames.
  EXPECT_EQ(seen[0].stack, seen[1].stack);
  std::span<const uint32_t> stack = profile.stack(seen[0].stack);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(profile.frame(stack[0]).ip, kernel_ip);
  EXPECT_EQ(profile.frame(stack[0]).cpumode, PERF_RECORD_MISC_KERNEL);
  EXPECT_EQ(profile.frame(stack[0]).mapping, kNoId) << "no kernel map was recorded";
  EXPECT_EQ(profile.frame(stack[1]).ip, leaf);
  EXPECT_EQ(profile.frame(stack[1]).cpumode, PERF_RECORD_MISC_USER);
  EXPECT_EQ(stack[1], seen[0].ip_frame) << "the sample ip and the chain's leaf are one frame";
  EXPECT_EQ(profile.frame(stack[2]).ip, caller);
  EXPECT_EQ(seen[0].recorded_frames, 3u);
  EXPECT_EQ(seen[0].unknown_marker_at, kNoId);

  // Mappings keep where the code was and which file: what pprof's Mapping needs.
  const ProfileFrame& user = profile.frame(stack[1]);
  ASSERT_NE(user.mapping, kNoId);
  EXPECT_EQ(profile.frame(stack[2]).mapping, user.mapping);
  const ProfileMapping& mapping = profile.mapping(user.mapping);
  EXPECT_EQ(mapping.start(), kLibStart);
  EXPECT_EQ(mapping.end(), kLibStart + kLibLen);
  EXPECT_EQ(mapping.pgoff(), kLibPgoff);
  ASSERT_NE(mapping.dso(), nullptr);
  EXPECT_EQ(mapping.dso()->name(), "/nonexistent/libwork.so");
  EXPECT_EQ(user.at.map_relative, 0x100 + kLibPgoff);

  // Frames after an unknown marker still count; where it came is kept for perf script.
  std::span<const uint32_t> marked = profile.stack(seen[2].stack);
  ASSERT_EQ(marked.size(), 2u);
  EXPECT_EQ(marked[0], stack[1]);
  EXPECT_EQ(marked[1], stack[2]);
  EXPECT_EQ(seen[2].recorded_frames, 2u);
  EXPECT_EQ(seen[2].unknown_marker_at, 1u);

  // Without a callchain the ip alone is the stack, and no frame was recorded.
  std::span<const uint32_t> lone = profile.stack(seen[3].stack);
  ASSERT_EQ(lone.size(), 1u);
  EXPECT_EQ(lone[0], seen[3].ip_frame);
  EXPECT_EQ(seen[3].recorded_frames, 0u);
}

// A sample of tid -1 (system-wide sched_switch samples the kernel could not attribute) right
// after a named thread's is ":-1", as perf names an unknown thread: the replay's shortcut for
// runs of one thread must not take -1 for "no thread known", as it did after a map record. (Found by comparing vperf script
// with perf script on a system-wide sched_switch recording.)
TEST(SampleReplay, ASampleOfTidMinusOneAfterANamedThreadIsUnnamed) {
  InMemorySource source(1);
  source.comm("worker");
  source.sample(0, kLibStart, {}, 100, kPid);
  source.sample(0, kLibStart, {}, 100, static_cast<uint32_t>(-1));
  source.sample(0, kLibStart, {}, 100, kPid);
  // A map record makes the replay forget the last thread; the next sample is tid -1.
  source.mmap(kLibStart, kLibLen, kLibPgoff, "/nonexistent/libwork.so");
  source.sample(0, kLibStart, {}, 100, static_cast<uint32_t>(-1));
  symbols::Machines machines{symbols::SymbolConfig{}};
  SampleReplay replay(machines);
  std::vector<std::string> comms;
  ASSERT_TRUE(replay.run(source, [&](const ResolvedSample& s) {
    comms.emplace_back(s.comm);
    return true;
  }).ok());
  EXPECT_EQ(comms, (std::vector<std::string>{"worker", ":-1", "worker", ":-1"}));
}

// Chains that never repeat fill the walked-chain cache past its bound: it is emptied, and a
// chain seen before that still gives the stack it gave the first time.
TEST(SampleReplay, TheWalkedChainCacheStaysBoundedAndChainsKeepTheirStacks) {
  InMemorySource source(1);
  source.mmap(kLibStart, kLibLen, kLibPgoff, "/nonexistent/libwork.so");
  const std::vector<uint64_t> first_chain = {PERF_CONTEXT_USER, kLibStart + 1, kLibStart + 2};
  source.sample(0, kLibStart + 1, first_chain);
  constexpr uint64_t kDistinct = 150000;  // 12 words each: 14 MiB of words alone
  for (uint64_t i = 0; i < kDistinct; ++i) {
    std::vector<uint64_t> chain = {PERF_CONTEXT_USER};
    for (uint64_t depth = 0; depth < 11; ++depth) chain.push_back(kLibStart + 0x100 + (i * 11 + depth) % 0x8000);
    const uint64_t ip = chain[1];
    source.sample(0, ip, std::move(chain));
  }
  source.sample(0, kLibStart + 1, first_chain);

  symbols::Machines machines{symbols::SymbolConfig{}};
  SampleReplay replay(machines);
  size_t most = 0;
  std::vector<Seen> seen;
  Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& s) {
    seen.push_back({s.event, s.stack, s.ip_frame, s.recorded_frames, s.unknown_marker_at});
    most = std::max(most, replay.chain_cache_bytes());
    return true;
  });
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(seen.size(), kDistinct + 2);
  EXPECT_LE(most, SampleReplay::kChainCacheBytes);
  EXPECT_GT(most, SampleReplay::kChainCacheBytes / 2) << "the cache is used up to its bound";
  EXPECT_EQ(seen.back().stack, seen.front().stack);
  EXPECT_EQ(seen.back().ip_frame, seen.front().ip_frame);
}

// script's replay forgets each sample once its callback returns: the profile is emptied when it
// outgrows its bound, and every sample still reads the same frames as without forgetting.
TEST(SampleReplay, ForgettingSamplesBoundsTheProfileAndEachSampleReadsTheSame) {
  auto make_source = [] {
    auto source = std::make_unique<InMemorySource>(1);
    source->mmap(kLibStart, kLibLen, kLibPgoff, "/nonexistent/libwork.so");
    for (uint64_t i = 0; i < 150000; ++i) {  // distinct 11-frame stacks: more than 8 MiB of profile
      std::vector<uint64_t> chain = {PERF_CONTEXT_USER};
      for (uint64_t depth = 0; depth < 11; ++depth) chain.push_back(kLibStart + 0x100 + (i * 11 + depth) % 0x8000);
      const uint64_t ip = chain[1];
      source->sample(0, ip, std::move(chain));
    }
    return source;
  };
  // Each sample's stack as (ip, cpumode) of its frames, hashed; and the profile's largest size.
  auto read = [](RecordSource& source, bool forget, size_t& most) {
    symbols::Machines machines{symbols::SymbolConfig{}};
    SampleReplay replay(machines, ReplayOptions{.forget_samples = forget});
    std::vector<uint64_t> stacks;
    EXPECT_TRUE(replay.run(source, [&](const ResolvedSample& s) {
                        uint64_t h = 0;
                        for (uint32_t frame : replay.profile().stack(s.stack))
                          h = h * 0x100000001b3ULL ^ (replay.profile().frame(frame).ip + replay.profile().frame(frame).cpumode);
                        stacks.push_back(h ^ replay.profile().frame(s.ip_frame).ip);
                        most = std::max(most, replay.profile().bytes());
                        return true;
                      }).ok());
    return stacks;
  };
  size_t kept_most = 0, forgot_most = 0;
  std::unique_ptr<InMemorySource> first = make_source(), second = make_source();
  const std::vector<uint64_t> kept = read(*first, false, kept_most);
  const std::vector<uint64_t> forgot = read(*second, true, forgot_most);
  ASSERT_EQ(kept.size(), 150000u);
  EXPECT_EQ(forgot, kept);
  EXPECT_GT(kept_most, SampleReplay::kForgottenProfileBytes) << "the profile outgrows the bound without forgetting";
  EXPECT_LE(forgot_most, SampleReplay::kForgottenProfileBytes + 4096) << "and stays within it (plus one sample) with it";
}

TEST(SampleReplay, ResolvesAgainAfterTheAddressSpaceChanges) {
  InMemorySource source(1);
  source.comm("worker");
  const uint64_t ip = kLibStart + 0x100;
  source.sample(0, ip, {PERF_CONTEXT_USER, ip});
  source.mmap(kLibStart, kLibLen, 0, "/nonexistent/late.so");
  source.sample(0, ip, {PERF_CONTEXT_USER, ip});

  symbols::Machines machines{symbols::SymbolConfig{}};
  SampleReplay replay(machines);
  std::vector<Seen> seen = replay_all(replay, source);
  ASSERT_EQ(seen.size(), 2u);
  const Profile& profile = replay.profile();
  EXPECT_EQ(profile.frame(seen[0].ip_frame).mapping, kNoId) << "mapped only later";
  ASSERT_NE(profile.frame(seen[1].ip_frame).mapping, kNoId) << "the remembered resolution outlived the MMAP";
  EXPECT_EQ(profile.mapping(profile.frame(seen[1].ip_frame).mapping).dso()->name(), "/nonexistent/late.so");
  EXPECT_NE(seen[0].stack, seen[1].stack);
}

TEST(SampleReplay, ReadsALiveSourceAgainPerRefreshWithTheHistogramReset) {
  InMemorySource source(1);
  source.comm("worker");
  source.mmap(kLibStart, kLibLen, 0, "/nonexistent/libwork.so");
  const uint64_t a = kLibStart + 0x100, b = kLibStart + 0x200;
  for (int i = 0; i < 3; ++i) source.sample(0, a, {PERF_CONTEXT_USER, a, b});

  symbols::Machines machines{symbols::SymbolConfig{}};
  Profile profile;
  SampleReplay replay(machines, profile);
  HistSettings settings;
  settings.sort_keys = default_sort_keys();
  settings.callchains = true;
  HistBuilder hists(settings, profile);
  auto refresh = [&] {
    hists.reset();
    Result<data::ReadStats> stats = replay.run(source, [&](const ResolvedSample& s) {
      hists.add(s.event, s);
      return true;
    });
    EXPECT_TRUE(stats.ok());
    hists.finish();
  };

  refresh();
  ASSERT_EQ(hists.events().size(), 1u);
  EXPECT_EQ(hists.events()[0].samples, 3u);
  EXPECT_EQ(hists.events()[0].total_period, 300u);

  // The next refresh: the maps and comm learnt before still resolve these samples.
  source.sample(0, b, {PERF_CONTEXT_USER, b});
  refresh();
  ASSERT_EQ(hists.events().size(), 1u);
  const EventHists& now = hists.events()[0];
  EXPECT_EQ(now.samples, 1u);
  EXPECT_EQ(now.total_period, 100u);
  ASSERT_EQ(now.entries.size(), 1u) << "entries of the previous refresh are gone";
  EXPECT_EQ(now.entries[0].self_period, 100u);
  EXPECT_EQ(now.entries[0].address, b - kLibStart) << "unresolved: its offset in the map";
  EXPECT_EQ(hists.comms().text(now.entries[0].comm), "worker");
}

}  // namespace
}  // namespace vperf::report
