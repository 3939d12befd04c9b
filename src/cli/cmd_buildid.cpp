// perf's build-id commands: buildid-cache (add, remove, purge and list the cache that
// symbols/build_id_cache.h describes) and buildid-list (the BUILD_ID table of a recording).
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.h"
#include "session/reading_session.h"
#include "session/record_build_ids.h"
#include "symbols/build_id_cache.h"

namespace vperf::cli {

namespace {

struct BuildIdCacheOptions {
  std::vector<std::string> add, remove, purge;
  bool purge_all = false, list = false, verbose = false;
};

symbols::BuildIdCache cache_of(const Invocation& inv) {
  return symbols::BuildIdCache(inv.buildid_dir.empty() ? symbols::BuildIdCache::default_dir()
                                                       : std::filesystem::path(inv.buildid_dir));
}

// perf's order: add, remove, purge, purge-all, then list; a failure ends the command there.
int run_buildid_cache(const BuildIdCacheOptions& o, const Invocation& inv) {
  const symbols::BuildIdCache cache = cache_of(inv);
  for (const std::string& file : o.add) {
    symbols::BuildId id = checked(cache.add(file));
    if (o.verbose) *inv.err << "Adding " << id.hex() << " " << file << ": Ok\n";
  }
  for (const std::string& file : o.remove) {
    const bool removed = checked(cache.remove(file));
    if (o.verbose) *inv.err << "Removing " << file << ": " << (removed ? "Ok" : "not in the cache") << "\n";
  }
  for (const std::string& file : o.purge) {
    const size_t removed = checked(cache.purge(file));
    if (o.verbose) *inv.err << "Purging " << file << ": " << removed << " removed\n";
  }
  if (o.purge_all) {
    const size_t removed = checked(cache.purge_all());
    if (o.verbose) *inv.err << "Purged " << removed << " entries\n";
  }
  if (o.list)
    for (const symbols::BuildIdCacheEntry& entry : cache.list()) *inv.out << entry.id.hex() << " " << entry.path << "\n";
  return 0;
}

}  // namespace

void add_buildid_cache_command(CLI::App& app, Invocation& inv) {
  auto o = std::make_shared<BuildIdCacheOptions>();
  CLI::App* sub = app.add_subcommand("buildid-cache",
                                     "Manage the build-id cache perf and vperf keep binaries in (~/.debug, or --buildid-dir DIR "
                                     "before the command)");
  sub->add_option("-a,--add", o->add, "Add these files under their build-ids")->check(non_empty());
  sub->add_option("-r,--remove", o->remove, "Remove these files' entries (for their current build-ids)")->check(non_empty());
  sub->add_option("-p,--purge", o->purge, "Remove every entry taken from these paths")->check(non_empty());
  sub->add_flag("-P,--purge-all", o->purge_all, "Remove every entry");
  sub->add_flag("-l,--list", o->list, "List the entries: build-id and the file it was taken from");
  sub->add_flag("-v,--verbose", o->verbose, "Say what each change did");
  sub->callback([o, &inv] {
    if (o->add.empty() && o->remove.empty() && o->purge.empty() && !o->purge_all && !o->list)
      throw usage_error("buildid-cache needs something to do", "-a FILE, -r FILE, -p FILE, -P or -l");
    inv.action = [o, &inv] { return run_buildid_cache(*o, inv); };
  });
}

void add_buildid_list_command(CLI::App& app, Invocation& inv) {
  auto input = std::make_shared<std::string>("perf.data");
  auto kernel = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("buildid-list", "List the build-ids a recording holds (its BUILD_ID table), as perf buildid-list");
  sub->add_option("-i,--input", *input, "perf.data to read (vperf's or perf's; - for a pipe)")->check(non_empty());
  sub->add_flag("-k,--kernel", *kernel, "The running kernel's build-id only");
  sub->callback([input, kernel, &inv] {
    inv.action = [input, kernel, &inv] {
      if (*kernel) {
        std::optional<symbols::BuildId> id = session::build_id_from_file("/sys/kernel/notes");
        if (!id) throw UserError("cannot read the running kernel's build-id from /sys/kernel/notes", "is /sys mounted?");
        *inv.out << id->hex() << "\n";
        return 0;
      }
      session::ReadingInput source;
      source.input = *input;
      session::ReadingSession session(source, "vperf record -- COMMAND");
      data::PerfDataReader& reader = session.reader();
      // A pipe's build-ids come as records, which a pass reads.
      if (reader.is_pipe()) checked(reader.read([](const data::RecordView&) { return true; }));
      for (const data::BuildIdEntry& entry : reader.features().build_ids)
        *inv.out << symbols::BuildId{entry.build_id}.hex() << " " << entry.filename << "\n";
      return 0;
    };
  });
}

}  // namespace vperf::cli
