// The guest symbol cache (guest/guest_symbol_cache.h) against hostile places and guests: a
// cache that would sit in a shared directory, a symbolic link or another user's file where the
// cache should be, two guests that claim the same boot id, and a cached kallsyms the guest's
// live memory does not agree with.
#include "guest/guest_symbol_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "core/files.h"
#include "symbols/kallsyms.h"
#include "support/fake_event_fs.h"
#include "support/fake_guest_agent.h"

namespace vperf::guest {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBootId = "0f6e1c7a-3b52-4c8e-9d1a-5e2f8b7c6d40";
const std::string kModules = "virtio_ring 45056 1 virtio_console, Live 0xffffffffc0000000\n";
const std::string kRelease = "6.1.0-test-amd64";

// A guest kernel's kallsyms with its image at `text` (KASLR puts it elsewhere at every boot).
std::string kallsyms_at(uint64_t text, const std::string& function = "native_safe_halt") {
  auto line = [](uint64_t address, const char* type, const std::string& name) {
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, "%016lx %s %s\n", static_cast<unsigned long>(address), type, name.c_str());
    return std::string(buffer);
  };
  return line(text, "T", "_text") + line(text + 0x1000, "T", function) + line(text + 0x2000, "T", "clear_user_rep_good") +
         line(text + 0x3000, "T", "do_syscall_64") + line(text + 0x800000, "T", "_etext") +
         line(text + 0xe00000, "D", "linux_banner");
}

// That kernel as the monitor reads it: code at the text symbols, the banner at linux_banner.
DumpMemory kernel_at(uint64_t text) {
  const std::string code("\x48\x8d\x25\x51\x3f\x60\x01\x48\x8d\x3d\xf2\xff\xff\xff\xb9\x01", 16);
  return test::guest_memory_holding({{text, code},
                                     {text + 0x1000, code},
                                     {text + 0x2000, code},
                                     {text + 0x3000, code},
                                     {text + 0xe00000, "Linux version " + kRelease + " (builder@host) #1 SMP"}});
}

std::map<std::string, std::string> guest_files(const std::string& kallsyms) {
  return {{"/proc/kallsyms", kallsyms},
          {"/proc/modules", kModules},
          {"/proc/sys/kernel/random/boot_id", std::string(kBootId) + "\n"},
          {"/proc/sys/kernel/osrelease", kRelease + "\n"}};
}

constexpr uint64_t kText = 0xffffffff9a000000;
constexpr const char* kDomainA = "libvirt-5b2b1c3e-0000-4000-8000-00000000a001";
constexpr const char* kDomainB = "libvirt-5b2b1c3e-0000-4000-8000-00000000b002";

GuestSymbolCache cache_of(const fs::path& base, const std::string& identity) {
  return {GuestSymbolCacheLocation{base, "vperf/guest-symbols"}, identity};
}

// An environment variable set (or unset, with nullopt) while alive.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved_) ::setenv(name_, saved_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

TEST(GuestSymbolCache, NeverInASharedDirectoryWhenHomeIsUnset) {
  ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv no_home("HOME", std::nullopt);
  std::optional<GuestSymbolCacheLocation> location = default_guest_symbol_cache();
  if (::geteuid() == 0) {
    ASSERT_TRUE(location.has_value());
    EXPECT_EQ(location->path(), "/var/cache/vperf/guest-symbols");
  } else {
    EXPECT_FALSE(location.has_value()) << location->path();
  }
  // Nor a relative XDG_CACHE_HOME or HOME (which would be the working directory), nor /tmp.
  ScopedEnv relative_xdg("XDG_CACHE_HOME", "cache");
  ScopedEnv tmp_home("HOME", "/tmp");
  location = default_guest_symbol_cache();
  if (location) {
    EXPECT_FALSE(location->path().string().starts_with("/tmp")) << location->path();
  }
}

TEST(GuestSymbolCache, XdgThenHomeWhenTheyAreThisUsers) {
  test::TempTree xdg, home;
  ScopedEnv set_xdg("XDG_CACHE_HOME", xdg.root().string());
  ScopedEnv set_home("HOME", home.root().string());
  EXPECT_EQ(default_guest_symbol_cache()->path(), xdg.root() / "vperf/guest-symbols");
  ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(default_guest_symbol_cache()->path(), home.root() / ".cache/vperf/guest-symbols");
}

TEST(GuestSymbolCache, AnotherUsersHomeIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  test::TempTree home;
  ASSERT_EQ(::chown(home.root().c_str(), 65534, 65534), 0);  // nobody's: as sudo may leave HOME
  ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv set_home("HOME", home.root().string());
  EXPECT_EQ(default_guest_symbol_cache()->path(), "/var/cache/vperf/guest-symbols");
}

TEST(GuestSymbolCache, CreatedPrivateAndUsedOnceMemoryAgrees) {
  test::TempTree base;
  test::FakeAgent agent(guest_files(kallsyms_at(kText)));
  DumpMemory kernel = kernel_at(kText);
  Result<GuestSymbolFiles> first = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  EXPECT_FALSE(first->from_cache);
  EXPECT_TRUE(first->cache_warnings.empty());
  for (const fs::path& dir : {base.root() / "vperf", base.root() / "vperf/guest-symbols",
                              base.root() / "vperf/guest-symbols" / kDomainA / kBootId}) {
    struct stat st {};
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << dir;
  }
  Result<GuestSymbolFiles> second = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->kallsyms, kallsyms_at(kText));
  EXPECT_EQ(agent.opened("/proc/kallsyms"), 1);
  // No way to read the guest's memory: the cache is not trusted, the agent is asked again.
  Result<GuestSymbolFiles> unchecked = read_guest_symbols(agent, cache_of(base.root(), kDomainA), nullptr);
  ASSERT_TRUE(unchecked.ok());
  EXPECT_FALSE(unchecked->from_cache);
  EXPECT_EQ(agent.opened("/proc/kallsyms"), 2);
}

TEST(GuestSymbolCache, TwoGuestsClaimingOneBootIdKeepTheirOwnEntries) {
  test::TempTree base;
  test::FakeAgent guest_a(guest_files(kallsyms_at(kText)));
  // Guest B reports A's boot id and modules, with a kallsyms of its own.
  test::FakeAgent guest_b(guest_files(kallsyms_at(kText, "planted_by_b")));
  DumpMemory kernel = kernel_at(kText);
  ASSERT_TRUE(read_guest_symbols(guest_b, cache_of(base.root(), kDomainB), &kernel).ok());
  Result<GuestSymbolFiles> a = read_guest_symbols(guest_a, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->from_cache) << "guest B's entry served guest A";
  EXPECT_EQ(a->kallsyms, kallsyms_at(kText));
  Result<GuestSymbolFiles> a_again = read_guest_symbols(guest_a, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(a_again.ok());
  EXPECT_TRUE(a_again->from_cache);
  EXPECT_EQ(a_again->kallsyms.find("planted_by_b"), std::string::npos);
}

TEST(GuestSymbolCache, CachedKallsymsTheLiveMemoryContradictsIsReadAgain) {
  test::TempTree base;
  // Stored in an earlier run with the kernel at another KASLR offset (or planted by the guest).
  test::FakeAgent agent(guest_files(kallsyms_at(0xffffffff81000000)));
  DumpMemory old_kernel = kernel_at(0xffffffff81000000);
  ASSERT_TRUE(read_guest_symbols(agent, cache_of(base.root(), kDomainA), &old_kernel).ok());
  // The guest now runs at kText and says so; its memory is there, not at the cached addresses.
  agent.files()["/proc/kallsyms"] = kallsyms_at(kText);
  DumpMemory kernel = kernel_at(kText);
  Result<GuestSymbolFiles> files = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(files.ok());
  EXPECT_FALSE(files->from_cache);
  EXPECT_EQ(files->kallsyms, kallsyms_at(kText));
  ASSERT_EQ(files->cache_warnings.size(), 1u);
  EXPECT_NE(files->cache_warnings[0].find("does not read \"Linux version 6.1.0-test-amd64 \""), std::string::npos)
      << files->cache_warnings[0];
  // And the entry now holds what the guest's memory agrees with.
  Result<GuestSymbolFiles> again = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
}

TEST(GuestSymbolCache, LiveChecksOfTheBannerAndTheText) {
  Result<symbols::Kallsyms> kallsyms = symbols::Kallsyms::parse(kallsyms_at(kText), "test");
  ASSERT_TRUE(kallsyms.ok());
  DumpMemory kernel = kernel_at(kText);
  EXPECT_EQ(cached_kallsyms_mismatch(*kallsyms, kRelease, kernel), std::nullopt);
  EXPECT_EQ(cached_kallsyms_mismatch(*kallsyms, "", kernel), std::nullopt);
  // Another release's banner.
  std::optional<std::string> release = cached_kallsyms_mismatch(*kallsyms, "6.2.0-other", kernel);
  ASSERT_TRUE(release.has_value());
  EXPECT_NE(release->find("linux_banner"), std::string::npos) << *release;
  // The banner matches but a text symbol the kallsyms names is not mapped.
  DumpMemory banner_only = test::guest_memory_holding({{kText + 0xe00000, "Linux version " + kRelease + " (x)"}});
  std::optional<std::string> text = cached_kallsyms_mismatch(*kallsyms, kRelease, banner_only);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("cannot be read"), std::string::npos) << *text;
  // _text reads as zeros.
  DumpMemory zeros = test::guest_memory_holding(
      {{kText, std::string(16, '\0')}, {kText + 0x1000, std::string(16, 'x')}, {kText + 0x2000, std::string(16, 'x')},
       {kText + 0x3000, std::string(16, 'x')}, {kText + 0xe00000, "Linux version " + kRelease + " (x)"}});
  std::optional<std::string> zero = cached_kallsyms_mismatch(*kallsyms, kRelease, zeros);
  ASSERT_TRUE(zero.has_value());
  EXPECT_NE(zero->find("_text is zero"), std::string::npos) << *zero;
}

// A cache directory that is a symbolic link, or one another user may write, is not used: the
// symbols come from the agent, with one warning line that names it, and nothing is written
// where it points.
TEST(GuestSymbolCache, SymbolicLinkInsteadOfTheCacheDirectoryIsRefused) {
  test::TempTree base, elsewhere;
  fs::create_symlink(elsewhere.root(), base.root() / "vperf");
  test::FakeAgent agent(guest_files(kallsyms_at(kText)));
  DumpMemory kernel = kernel_at(kText);
  Result<GuestSymbolFiles> files = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->kallsyms, kallsyms_at(kText));
  ASSERT_EQ(files->cache_warnings.size(), 1u);
  EXPECT_EQ(files->cache_warnings[0], "guest symbol cache not used: " + (base.root() / "vperf").string() + " is a symbolic link");
  EXPECT_TRUE(fs::is_empty(elsewhere.root()));
}

TEST(GuestSymbolCache, GroupWritableCacheDirectoryIsRefused) {
  test::TempTree base;
  fs::create_directory(base.root() / "vperf");
  ASSERT_EQ(::chmod((base.root() / "vperf").c_str(), 0770), 0);
  test::FakeAgent agent(guest_files(kallsyms_at(kText)));
  DumpMemory kernel = kernel_at(kText);
  Result<GuestSymbolFiles> files = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->cache_warnings.size(), 1u);
  EXPECT_NE(files->cache_warnings[0].find("is writable by group or others"), std::string::npos) << files->cache_warnings[0];
  EXPECT_TRUE(fs::is_empty(base.root() / "vperf"));
}

// A cached file that is a symbolic link is neither read nor written through.
TEST(GuestSymbolCache, SymbolicLinkInsteadOfACachedFileIsNotFollowed) {
  test::TempTree base, elsewhere;
  test::FakeAgent agent(guest_files(kallsyms_at(kText)));
  DumpMemory kernel = kernel_at(kText);
  ASSERT_TRUE(read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel).ok());
  const fs::path entry = base.root() / "vperf/guest-symbols" / kDomainA / kBootId;
  const std::string planted = kallsyms_at(kText, "planted");
  elsewhere.write("kallsyms", planted);
  fs::remove(entry / "kallsyms");
  fs::create_symlink(elsewhere.root() / "kallsyms", entry / "kallsyms");
  Result<GuestSymbolFiles> files = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(files.ok());
  EXPECT_FALSE(files->from_cache);
  EXPECT_EQ(files->kallsyms, kallsyms_at(kText));
  ASSERT_EQ(files->cache_warnings.size(), 1u);
  EXPECT_EQ(files->cache_warnings[0], "guest symbol cache not used: " + (entry / "kallsyms").string() + " is a symbolic link");
  // Rewritten as a file of its own; the link's target is as it was.
  EXPECT_FALSE(fs::is_symlink(entry / "kallsyms"));
  EXPECT_EQ(read_file(elsewhere.root() / "kallsyms").value(), planted);
  EXPECT_EQ(read_file(entry / "kallsyms").value(), kallsyms_at(kText));
}

TEST(GuestSymbolCache, AnotherUsersEntryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  test::TempTree base;
  test::FakeAgent agent(guest_files(kallsyms_at(kText)));
  DumpMemory kernel = kernel_at(kText);
  ASSERT_TRUE(read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel).ok());
  const fs::path entry = base.root() / "vperf/guest-symbols" / kDomainA / kBootId;
  ASSERT_EQ(::chown((entry / "kallsyms").c_str(), 65534, 65534), 0);
  Result<GuestSymbolFiles> files = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(files.ok());
  EXPECT_FALSE(files->from_cache);
  ASSERT_EQ(files->cache_warnings.size(), 1u);
  EXPECT_EQ(files->cache_warnings[0],
            "guest symbol cache not used: " + (entry / "kallsyms").string() + " belongs to uid 65534, not to uid 0");
  ASSERT_EQ(::chown(entry.c_str(), 65534, 65534), 0);
  files = read_guest_symbols(agent, cache_of(base.root(), kDomainA), &kernel);
  ASSERT_TRUE(files.ok());
  EXPECT_FALSE(files->from_cache);
  ASSERT_FALSE(files->cache_warnings.empty());
  EXPECT_NE(files->cache_warnings[0].find(entry.string() + " belongs to uid 65534"), std::string::npos) << files->cache_warnings[0];
}

TEST(GuestSymbolCache, VmmIdentityIsPidAndStartTime) {
  Result<std::string> self = vmm_guest_identity(::getpid());
  ASSERT_TRUE(self.ok()) << self.error().describe();
  EXPECT_TRUE(self->starts_with("vmm-" + std::to_string(::getpid()) + "-")) << *self;
  EXPECT_GT(self->size(), ("vmm-" + std::to_string(::getpid()) + "-").size());
  EXPECT_FALSE(vmm_guest_identity(0x7ffffff0).ok());
}

}  // namespace
}  // namespace vperf::guest
