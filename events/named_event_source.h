#pragma once
// A source of named hardware events beyond perf's builtins: libpfm4's tables
// ("INST_RETIRED:ANY_P", "ivb::L2_STORE_LOCK_RQSTS:HIT_M:u:c=1") and Intel's perfmon JSON
// ("L2_STORE_LOCK_RQSTS.HIT_M"). The event resolver asks each source in turn.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "events/resolved_event.h"

namespace vperf::events {

class NamedEventSource {
 public:
  virtual ~NamedEventSource() = default;
  // Resolves a full name with the source's own modifiers. nullopt means "not mine"
  // (try the next source); an Error means "mine, but malformed" (e.g. a bad umask),
  // whose message names the offending part.
  virtual std::optional<Result<ResolvedEvent>> resolve(std::string_view name) const = 0;
  // Every event name this source knows, for "did you mean" suggestions.
  virtual std::vector<std::string> names() const = 0;
};

}  // namespace vperf::events
