#pragma once
// Watching processes from integration tests: readiness by polling a condition (never a fixed
// sleep), and the children a program started.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace vperf::test {

// Polls `condition` every 10 ms until it holds or `limit` has passed; the limit only bounds a
// failure, it is never what makes a test pass.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit);

// PIDs of the live children of `parent` whose comm is `comm`.
std::vector<pid_t> children_named(pid_t parent, const std::string& comm);

}  // namespace vperf::test
