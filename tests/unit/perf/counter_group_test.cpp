#include "perf/counter_group.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace vperf::perf {
namespace {

std::vector<uint8_t> bytes_of(std::initializer_list<uint64_t> words) {
  std::vector<uint8_t> out(words.size() * sizeof(uint64_t));
  std::memcpy(out.data(), std::data(words), out.size());
  return out;
}

constexpr uint64_t kTimes = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

TEST(ReadFormat, GroupLayoutWithIds) {
  auto bytes = bytes_of({2, 1000, 500, 77, 11, 88, 12});
  auto r = parse_read_format(bytes, kTimes | PERF_FORMAT_GROUP | PERF_FORMAT_ID);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].value, 77u);
  EXPECT_EQ((*r)[0].id, 11u);
  EXPECT_EQ((*r)[1].value, 88u);
  EXPECT_EQ((*r)[1].time_enabled, 1000u);
  EXPECT_EQ((*r)[1].time_running, 500u);
}

TEST(ReadFormat, LoneEventLayout) {
  auto bytes = bytes_of({42, 900, 900});
  auto r = parse_read_format(bytes, kTimes);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].value, 42u);
  EXPECT_FALSE((*r)[0].id.has_value());
}

TEST(ReadFormat, ShortOrImpossibleBuffersAreErrors) {
  EXPECT_FALSE(parse_read_format(bytes_of({2, 1000, 500, 77, 11}), kTimes | PERF_FORMAT_GROUP | PERF_FORMAT_ID).ok());
  EXPECT_FALSE(parse_read_format(bytes_of({}), kTimes).ok());
  auto huge = parse_read_format(bytes_of({~uint64_t{0}, 1, 1}), kTimes | PERF_FORMAT_GROUP);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("impossible"), std::string::npos);
}

TEST(ScaleCount, MultiplexedValuesScaleByEnabledOverRunning) {
  ScaledCount full = scale_count({1000, 200, 200, {}});
  EXPECT_TRUE(full.counted);
  EXPECT_DOUBLE_EQ(full.value, 1000);
  EXPECT_DOUBLE_EQ(full.running_percent, 100);
  ScaledCount half = scale_count({1000, 200, 50, {}});
  EXPECT_DOUBLE_EQ(half.value, 4000);
  EXPECT_DOUBLE_EQ(half.running_percent, 25);
  EXPECT_FALSE(scale_count({0, 200, 0, {}}).counted) << "never running is <not counted>";
}

// A fake kernel: every open hands out a pipe's read end holding the bytes a read() returns.
class PipeOpener final : public PerfEventOpener {
 public:
  explicit PipeOpener(std::vector<uint8_t> leader_bytes) : bytes_(std::move(leader_bytes)) {}
  mutable std::vector<OpenTarget> targets;
  Result<EventFd> open(const perf_event_attr&, const OpenTarget& target) const override {
    targets.push_back(target);
    int fds[2];
    if (::pipe(fds) != 0) return Error::from_errno("pipe");
    if (targets.size() == 1 && ::write(fds[1], bytes_.data(), bytes_.size()) != static_cast<ssize_t>(bytes_.size()))
      return Error::from_errno("write");
    ::close(fds[1]);
    return EventFd(ScopedFd(fds[0]));
  }

 private:
  std::vector<uint8_t> bytes_;
};

perf_event_attr attr_with(uint64_t read_format) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.read_format = read_format;
  return a;
}

TEST(CounterGroup, MembersJoinTheLeaderAndAreReadTogether) {
  PipeOpener opener(bytes_of({2, 1000, 1000, 5, 9}));
  std::vector<perf_event_attr> attrs{attr_with(kTimes | PERF_FORMAT_GROUP), attr_with(kTimes | PERF_FORMAT_GROUP)};
  auto group = CounterGroup::open(opener, attrs, OpenTarget{});
  ASSERT_TRUE(group.ok()) << group.error().describe();
  ASSERT_EQ(opener.targets.size(), 2u);
  EXPECT_EQ(opener.targets[0].group_fd, -1);
  EXPECT_GE(opener.targets[1].group_fd, 0) << "the member opens with the leader's fd";
  auto values = group->read();
  ASSERT_TRUE(values.ok()) << values.error().describe();
  EXPECT_EQ((*values)[0].value, 5u);
  EXPECT_EQ((*values)[1].value, 9u);
}

TEST(CounterGroup, RefusesAttrsItCouldNotScaleOrReadTogether) {
  PipeOpener opener(bytes_of({1}));
  std::vector<perf_event_attr> no_times{attr_with(0)};
  EXPECT_FALSE(CounterGroup::open(opener, no_times, OpenTarget{}).ok());
  std::vector<perf_event_attr> no_group{attr_with(kTimes), attr_with(kTimes)};
  EXPECT_FALSE(CounterGroup::open(opener, no_group, OpenTarget{}).ok());
  EXPECT_FALSE(CounterGroup::open(opener, std::vector<perf_event_attr>{}, OpenTarget{}).ok());
}

}  // namespace
}  // namespace vperf::perf
