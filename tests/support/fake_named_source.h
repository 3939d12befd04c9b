#pragma once
// A NamedEventSource with a fixed table, standing in for libpfm4/perfmon in resolver tests.
// It understands "NAME" and "NAME:u"/"NAME:k" (libpfm-style privilege modifiers), and
// answers "mine, but malformed" for "NAME:<anything else>".
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "events/named_event_source.h"

namespace vperf::test {

class FakeNamedSource final : public events::NamedEventSource {
 public:
  // name -> raw config; every event counts on PMU type 4 ("cpu").
  explicit FakeNamedSource(std::map<std::string, uint64_t> table, events::EventOrigin origin = events::EventOrigin::Libpfm)
      : table_(std::move(table)), origin_(origin) {}

  std::optional<Result<events::ResolvedEvent>> resolve(std::string_view name) const override {
    ++calls_;
    for (const auto& [known, config] : table_) {
      if (!name.starts_with(known)) continue;
      std::string_view rest = name.substr(known.size());
      if (!rest.empty() && rest.front() != ':') continue;
      events::ResolvedEvent event;
      event.name = known;
      event.pmu = "cpu";
      event.type = 4;
      event.config = config;
      event.origin = origin_;
      if (rest == ":u") {
        event.exclude_kernel = event.exclude_hv = true;
      } else if (rest == ":k") {
        event.exclude_user = event.exclude_hv = true;
      } else if (!rest.empty()) {
        return Result<events::ResolvedEvent>(Error{"unknown modifier '" + std::string(rest.substr(1)) + "' for " + known});
      }
      return Result<events::ResolvedEvent>(event);
    }
    return std::nullopt;
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& entry : table_) out.push_back(entry.first);
    return out;
  }

  int calls() const { return calls_; }

 private:
  std::map<std::string, uint64_t> table_;
  events::EventOrigin origin_;
  mutable int calls_ = 0;
};

}  // namespace vperf::test
