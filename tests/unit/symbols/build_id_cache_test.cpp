// perf's build-id cache layout (DIR/<path>/<build-id>/elf and DIR/.build-id/xx/<rest> -> ../../
// <path>/<build-id>), on copies of the bundled workload; perf 6.1 reads and writes the same
// directories in tests/integration/buildid_test.cpp.
#include "symbols/build_id_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "symbols/elf_file.h"

namespace vperf::symbols {
namespace {

namespace fs = std::filesystem;

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class BuildIdCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) / ("vperf_build_id_cache_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
    program_ = fs::canonical(root_ / "bin") / "workload";
    fs::copy_file(VPERF_WORKLOAD, program_);
    Result<ElfFile> elf = ElfFile::open(program_);
    ASSERT_TRUE(elf.ok());
    ASSERT_TRUE(elf->build_id().has_value()) << "the workload is linked with a build-id";
    id_ = *elf->build_id();
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_, program_;
  BuildId id_;
};

TEST_F(BuildIdCacheTest, AddWritesPerfsLayout) {
  const BuildIdCache cache(root_ / "debug");
  Result<BuildId> added = cache.add(program_);
  ASSERT_TRUE(added.ok()) << added.error().describe();
  EXPECT_EQ(*added, id_);
  const std::string hex = id_.hex();
  const fs::path elf = root_ / "debug" / program_.relative_path() / hex / "elf";
  ASSERT_TRUE(fs::is_regular_file(elf));
  EXPECT_EQ(contents(elf), contents(program_));
  EXPECT_NE(fs::status(elf).permissions() & fs::perms::owner_exec, fs::perms::none);
  const fs::path link = root_ / "debug" / ".build-id" / hex.substr(0, 2) / hex.substr(2);
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("../..") / program_.relative_path() / hex);
  EXPECT_EQ(cache.list(), (std::vector<BuildIdCacheEntry>{{id_, program_.string()}}));
  EXPECT_EQ(cache.find(id_), elf);
  Result<bool> again = cache.add(program_, id_);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again) << "already there";
}

TEST_F(BuildIdCacheTest, RemovePurgeAndPurgeAll) {
  const BuildIdCache cache(root_ / "debug");
  ASSERT_TRUE(cache.add(program_).ok());
  Result<bool> removed = cache.remove(program_);
  ASSERT_TRUE(removed.ok());
  EXPECT_TRUE(*removed);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_FALSE(cache.find(id_));
  EXPECT_FALSE(*cache.remove(program_)) << "nothing left to remove";

  // Two build-ids of one path (a rebuilt program): purge takes both, purge_all everything.
  ASSERT_TRUE(cache.add(program_).ok());
  BuildId other = id_;
  other.bytes.back() ^= 0xff;
  ASSERT_TRUE(cache.add(program_, other).ok());
  EXPECT_EQ(cache.list().size(), 2u);
  Result<size_t> purged = cache.purge(program_);
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 2u);
  EXPECT_TRUE(cache.list().empty());
  ASSERT_TRUE(cache.add(program_).ok());
  EXPECT_EQ(*cache.purge_all(), 1u);
  EXPECT_TRUE(cache.list().empty());
}

// perf keeps the kernel's copy under "[kernel.kallsyms]/ID/kallsyms": listed by that name, as
// perf's buildid-cache -l names it (no leading '/').
TEST_F(BuildIdCacheTest, PerfsKernelEntryIsListedByItsName) {
  const BuildIdCache cache(root_ / "debug");
  const std::string hex = id_.hex();
  fs::create_directories(root_ / "debug" / "[kernel.kallsyms]" / hex);
  fs::create_directories(root_ / "debug" / ".build-id" / hex.substr(0, 2));
  fs::create_symlink(fs::path("../..") / "[kernel.kallsyms]" / hex, root_ / "debug" / ".build-id" / hex.substr(0, 2) / hex.substr(2));
  EXPECT_EQ(cache.list(), (std::vector<BuildIdCacheEntry>{{id_, "[kernel.kallsyms]"}}));
  EXPECT_EQ(*cache.purge("[kernel.kallsyms]"), 1u);
}

TEST_F(BuildIdCacheTest, WhatCannotBeAddedIsAnError) {
  const BuildIdCache cache(root_ / "debug");
  const fs::path text = root_ / "bin" / "notes.txt";
  std::ofstream(text) << "not an ELF file\n";
  EXPECT_FALSE(cache.add(text).ok());
  EXPECT_FALSE(cache.add(root_ / "bin" / "missing").ok());
  Result<bool> no_id = cache.add(program_, BuildId{});
  ASSERT_FALSE(no_id.ok());
  EXPECT_TRUE(cache.list().empty());
  EXPECT_FALSE(fs::exists(root_ / "debug" / ".build-id"));
}

}  // namespace
}  // namespace vperf::symbols
