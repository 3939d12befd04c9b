#include "tracing/tracefs.h"

// libtracefs 1.6's header is C only: it has no extern "C" of its own, and it passes 0 for an
// enum in an inline function, which C++ allows only with -fpermissive (set for this file in
// src/tracing/CMakeLists.txt). libtraceevent's header, which it includes, has its own.
#include <traceevent/event-parse.h>
extern "C" {
#include <tracefs/tracefs.h>
}

#include <cerrno>
#include <cstdlib>

namespace vperf::tracing {

namespace {

// A path libtracefs allocated, as a std::filesystem::path.
std::filesystem::path take_path(char* path) {
  if (!path) return {};
  std::filesystem::path out(path);
  tracefs_put_tracing_file(path);
  return out;
}

}  // namespace

void Tracefs::InstanceDeleter::operator()(tracefs_instance* instance) const { tracefs_instance_free(instance); }

Result<Tracefs> Tracefs::open(const std::filesystem::path& root) {
  // libtracefs reports failures on stderr unless told otherwise; vperf's errors say them.
  tracefs_set_loglevel(TEP_LOG_NONE);
  std::unique_ptr<tracefs_instance, InstanceDeleter> top(tracefs_instance_alloc(root.c_str(), nullptr));
  if (!top) return Error::from_errno("tracefs at " + root.string() + " is not a directory", errno ? errno : ENOTDIR);
  return Tracefs(root, std::move(top));
}

Tracefs::Tracefs(Tracefs&&) noexcept = default;
Tracefs& Tracefs::operator=(Tracefs&&) noexcept = default;
Tracefs::~Tracefs() = default;

std::filesystem::path Tracefs::event_file(std::string_view system, std::string_view event, std::string_view file) const {
  std::filesystem::path path = take_path(tracefs_event_get_file(top_.get(), std::string(system).c_str(),
                                                                std::string(event).c_str(), std::string(file).c_str()));
  // Only an allocation failure leaves libtracefs without a path; the layout is the same.
  if (path.empty()) path = root_ / "events" / std::string(system) / std::string(event) / std::string(file);
  return path;
}

bool Tracefs::event_file_exists(std::string_view system, std::string_view event, std::string_view file) const {
  return tracefs_event_file_exists(top_.get(), std::string(system).c_str(), std::string(event).c_str(),
                                   std::string(file).c_str());
}

std::filesystem::path Tracefs::file(std::string_view name) const {
  std::filesystem::path path = take_path(tracefs_instance_get_file(top_.get(), std::string(name).c_str()));
  if (path.empty()) path = root_ / std::string(name);
  return path;
}

}  // namespace vperf::tracing
